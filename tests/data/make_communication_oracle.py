"""Record MindSpore 2.10's behaviour of the communication and auto-parallel APIs.

Run with the oracle's interpreter (never imported by mscore or its tests)::

    /tmp/ms/bin/python tests/data/make_communication_oracle.py

It writes ``tests/data/communication_oracle.json``: for each probe the result (``["OK",
repr]``) or the exception (``["ERR", type name, message]``). The ``single`` probes run in
this process; the ``job`` probes run inside a 2-worker ``msrun`` job on the CPU (``mccl``),
rank 0's answers.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "communication_oracle.json")

JOB_SCRIPT = r'''
import json
import mindspore as ms
from mindspore import communication as c
ms.set_context(device_target="CPU")
c.init()
def t(name, f, *a, **k):
    try:
        r = f(*a, **k); out = ["OK", repr(r)]
    except Exception as e:
        out = ["ERR", type(e).__name__, str(e)[:300]]
    print("PROBE " + json.dumps([name, out]), flush=True)
t("get_rank", c.get_rank)
t("get_group_size", c.get_group_size)
t("get_local_rank", c.get_local_rank)
t("get_local_rank_size", c.get_local_rank_size)
t("GlobalComm.BACKEND", lambda: c.GlobalComm.BACKEND)
t("GlobalComm.WORLD_COMM_GROUP", lambda: c.GlobalComm.WORLD_COMM_GROUP)
t("GlobalComm.INITED", lambda: c.GlobalComm.INITED)
t("get_rank(hccl_world_group)", c.get_rank, "hccl_world_group")
t("get_rank(unknown)", c.get_rank, "nope")
t("create_group(g01)", c.create_group, "g01", [0, 1])
t("create_group(g01) again", c.create_group, "g01", [0, 1])
t("create_group(rank out of range)", c.create_group, "gbad", [0, 5])
t("get_group_size(g01)", c.get_group_size, "g01")
t("get_rank(g01)", c.get_rank, "g01")
t("get_world_rank_from_group_rank(g01, 1)", c.get_world_rank_from_group_rank, "g01", 1)
t("get_group_rank_from_world_rank(1, g01)", c.get_group_rank_from_world_rank, 1, "g01")
t("get_process_group_ranks(g01)", c.get_process_group_ranks, "g01")
t("get_process_group_ranks()", c.get_process_group_ranks)
'''


def probe(f, *args, **kwargs):
    try:
        return ["OK", repr(f(*args, **kwargs))]
    except Exception as exc:  # recording the oracle's exception is the point
        return ["ERR", type(exc).__name__, str(exc)[:300]]


def single_probes():
    import mindspore as ms
    from mindspore import communication as c
    from mindspore import nn
    out = {}
    out["get_rank()"] = probe(c.get_rank)
    out["get_group_size()"] = probe(c.get_group_size)
    out["get_local_rank()"] = probe(c.get_local_rank)
    out["get_local_rank_size()"] = probe(c.get_local_rank_size)
    out["get_rank(1)"] = probe(c.get_rank, 1)
    out["release()"] = probe(c.release)
    out["create_group before init"] = probe(c.create_group, "g", [0, 1])
    out["destroy_group before init"] = probe(c.destroy_group, "g")
    out["get_process_group_ranks before init"] = probe(c.get_process_group_ranks)
    out["init(3)"] = probe(c.init, 3)
    out["init('foo')"] = probe(c.init, "foo")
    out["init('nccl') on CPU"] = probe(c.init, "nccl")
    out["init() without launcher"] = probe(c.init)
    out["constants"] = ["OK", repr((c.HCCL_WORLD_COMM_GROUP, c.NCCL_WORLD_COMM_GROUP,
                                    c.MCCL_WORLD_COMM_GROUP))]
    out["GlobalComm before init"] = ["OK", repr((c.GlobalComm.BACKEND,
                                                 c.GlobalComm.WORLD_COMM_GROUP,
                                                 c.GlobalComm.INITED))]
    out["ParallelMode"] = ["OK", repr({k: getattr(ms.ParallelMode, k) for k in (
        "STAND_ALONE", "DATA_PARALLEL", "HYBRID_PARALLEL", "SEMI_AUTO_PARALLEL",
        "AUTO_PARALLEL", "MODE_LIST")})]
    keys = ("parallel_mode", "gradients_mean", "device_num", "global_rank",
            "gradient_fp32_sync", "loss_repeated_mean", "parameter_broadcast", "full_batch",
            "dataset_strategy", "all_reduce_fusion_config", "enable_parallel_optimizer",
            "strategy_ckpt_load_file", "strategy_ckpt_save_file", "search_mode",
            "pipeline_stages", "grad_accumulation_step")
    for k in keys:
        out[f"get_auto_parallel_context({k})"] = probe(ms.get_auto_parallel_context, k)
    out["get_auto_parallel_context(nope)"] = probe(ms.get_auto_parallel_context, "nope")
    sets = {
        "parallel_mode='foo'": dict(parallel_mode="foo"),
        "parallel_mode=1": dict(parallel_mode=1),
        "gradients_mean=1": dict(gradients_mean=1),
        "gradient_fp32_sync=1": dict(gradient_fp32_sync=1),
        "loss_repeated_mean=1": dict(loss_repeated_mean=1),
        "parameter_broadcast=1": dict(parameter_broadcast=1),
        "full_batch=1": dict(full_batch=1),
        "device_num=0": dict(device_num=0),
        "device_num='2'": dict(device_num="2"),
        "device_num=True": dict(device_num=True),
        "global_rank=-1": dict(global_rank=-1),
        "global_rank=4096": dict(global_rank=4096),
        "global_rank='1'": dict(global_rank="1"),
        "dataset_strategy='foo'": dict(dataset_strategy="foo"),
        "all_reduce_fusion_config='x'": dict(all_reduce_fusion_config="x"),
        "strategy_ckpt_load_file=1": dict(strategy_ckpt_load_file=1),
        "nope=1": dict(nope=1),
    }
    for label, kwargs in sets.items():
        ms.reset_auto_parallel_context()
        out[f"set_auto_parallel_context({label})"] = probe(ms.set_auto_parallel_context,
                                                           **kwargs)
    ms.reset_auto_parallel_context()
    out["set DATA_PARALLEL"] = probe(ms.set_auto_parallel_context,
                                     parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                     gradients_mean=True, device_num=2)
    out["after set"] = ["OK", repr([ms.get_auto_parallel_context(k) for k in (
        "parallel_mode", "gradients_mean", "device_num")])]
    ms.set_auto_parallel_context(all_reduce_fusion_config=[2, 4])
    out["all_reduce_fusion_config after set"] = probe(ms.get_auto_parallel_context,
                                                      "all_reduce_fusion_config")
    ms.reset_auto_parallel_context()
    out["after reset"] = ["OK", repr([ms.get_auto_parallel_context(k) for k in (
        "parallel_mode", "gradients_mean", "device_num", "all_reduce_fusion_config")])]
    w = ms.Parameter(ms.Tensor([1.0]), name="w")
    out["DistributedGradReducer(degree=-1)"] = probe(nn.DistributedGradReducer, [w], True, -1)
    out["DistributedGradReducer(degree=0)"] = probe(nn.DistributedGradReducer, [w], True, 0)
    out["DistributedGradReducer(degree='2')"] = probe(nn.DistributedGradReducer, [w], True,
                                                      "2")
    return out


def job_probes():
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "probe.py")
        with open(script, "w") as f:
            f.write(JOB_SCRIPT)
        env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep +
                   os.environ.get("PATH", ""))
        msrun = os.path.join(os.path.dirname(sys.executable), "msrun")
        proc = subprocess.Popen([msrun, "--worker_num=2", "--local_worker_num=2",
                                 "--master_port=29611", f"--log_dir={tmp}/logs", "--join=True",
                                 script], cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(timeout=240)
        except subprocess.TimeoutExpired:
            pass
        finally:
            subprocess.run(["pkill", "-KILL", "-s", str(proc.pid)], check=False)
        out = {}
        with open(os.path.join(tmp, "logs", "worker_0.log")) as f:
            for line in f:
                if line.startswith("PROBE "):
                    name, result = json.loads(line[6:])
                    out[name] = result
        return out


def main():
    data = {"note": "made by tests/data/make_communication_oracle.py with MindSpore "
                    "2.10 (CPU); see its docstring", "single": single_probes(),
            "job": job_probes()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    print(f"wrote {OUT}: {len(data['single'])} single-process and {len(data['job'])} job "
          f"probes")


if __name__ == "__main__":
    main()
