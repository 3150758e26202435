"""Record MindSpore 2.10's errors for bad mixed-precision levels, boost levels and loss scales,
into ``amp_messages_oracle.json``.

Run with the real MindSpore (never imported by mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_amp_messages_oracle.py

Each case is a snippet run with ``ms`` (the framework), ``nn``, ``amp``, ``Model`` and a small
``net``/``opt`` bound; ``tests/test_amp_messages.py`` runs it with mscore and compares the
exception type and message.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "amp_messages_oracle.json")

CASES = {
    "model_amp_level": "Model(net, nn.MSELoss(), opt, amp_level='O5')",
    "model_boost_level": "Model(net, nn.MSELoss(), opt, boost_level='O5')",
    "build_level": "amp.build_train_network(net, opt, nn.MSELoss(), level='O5')",
    "build_boost_level": "amp.build_train_network(net, opt, nn.MSELoss(), boost_level='O9')",
    "auto_mixed_precision_level": "amp.auto_mixed_precision(net, 'O5')",
    "fixed_manager_scale": "amp.FixedLossScaleManager(0.5)",
}


def scope(ms):
    from mindspore import amp, nn
    from mindspore.train import Model
    net = nn.Dense(2, 2)
    return {"ms": ms, "nn": nn, "amp": amp, "Model": Model, "net": net,
            "opt": nn.Momentum(net.trainable_params(), 0.1, 0.9)}


def main():
    import mindspore as ms
    records = {}
    for name, code in CASES.items():
        try:
            eval(code, scope(ms))
            raise SystemExit(f"{name}: MindSpore accepted {code}")
        except Exception as exc:  # the error is what is recorded
            records[name] = {"code": code, "error": {"type": type(exc).__name__,
                                                     "message": str(exc).split("\n")[0]}}
    with open(OUT, "w") as f:
        json.dump(records, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
