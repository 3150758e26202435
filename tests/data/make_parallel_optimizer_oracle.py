"""Record MindSpore 2.10's checks of the parallel-optimizer and accumulation keys of
``set_auto_parallel_context`` into parallel_optimizer_oracle.json.

Run from /tmp with the oracle's interpreter:
    cd /tmp && /tmp/ms/bin/python /work/wt/scaleout/tests/data/make_parallel_optimizer_oracle.py
"""
import json
import os

import mindspore as ms

CASES = [
    "grad_accumulation_step=0", "grad_accumulation_step=2.0", "grad_accumulation_step=True",
    "grad_accumulation_step=2",
    "enable_parallel_optimizer=1", "enable_parallel_optimizer=True",
    "parallel_optimizer_config=[1]",
    "parallel_optimizer_config={'bad': 1}",
    "parallel_optimizer_config={'gradient_accumulation_shard': 1}",
    "parallel_optimizer_config={'gradient_accumulation_shard': True, 'optimizer_level': 'level1'}",
    "parallel_optimizer_config={'parallel_optimizer_threshold': -1}",
    "parallel_optimizer_config={'parallel_optimizer_threshold': 1.5}",
    "parallel_optimizer_config={'parallel_optimizer_threshold': True}",
    "parallel_optimizer_config={'parallel_optimizer_threshold': 0}",
    "parallel_optimizer_config={'optimizer_weight_shard_size': 0}",
    "parallel_optimizer_config={'optimizer_weight_shard_size': True}",
    "parallel_optimizer_config={'optimizer_weight_shard_size': -1}",
    "parallel_optimizer_config={'optimizer_level': 'level4'}",
    "parallel_optimizer_config={'optimizer_level': 'level2'}",
]


def outcome(fn, *args, **kwargs):
    try:
        return ["OK", repr(fn(*args, **kwargs))]
    except Exception as exc:  # the outcome is what is recorded
        return ["ERR", type(exc).__name__, str(exc)]


def main():
    out = {}
    for case in CASES:
        key, _, value = case.partition("=")
        ms.reset_auto_parallel_context()
        out[case] = outcome(ms.set_auto_parallel_context, **{key: eval(value)})
    ms.reset_auto_parallel_context()
    for key in ("grad_accumulation_step", "enable_parallel_optimizer",
                "parallel_optimizer_config"):
        out[f"get({key})"] = outcome(ms.get_auto_parallel_context, key)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "parallel_optimizer_oracle.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
