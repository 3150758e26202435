"""``mscore.mint.distributed`` on a real 2-process job (``mscore run`` on 127.0.0.1, bounded
in time): every collective's result against the values the ranks put in, worked out here
with numpy; and the argument checks in MindSpore's words, without a job."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends
from test_data_parallel import free_port, run_job

from conftest import subprocess_env
from mscore.mint import distributed as dist

HERE = Path(__file__).resolve().parent


def _own(rank, shape, scale=1.0):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * scale + 10 * rank


def _expected(rank):
    both = [_own(r, (2, 3)) + 1 for r in (0, 1)]
    exp = {"all_reduce_sum": both[0] + both[1], "all_reduce_max": np.maximum(*both),
           "all_reduce_min": np.minimum(*both), "all_reduce_avg": (both[0] + both[1]) / 2,
           "all_reduce_prod": both[0] * both[1],
           "reduce": _own(0, (2,)) + _own(1, (2,)) if rank == 1 else _own(rank, (2,)),
           "broadcast": _own(1, (3,)),
           "all_gather_into_tensor": np.concatenate([_own(r, (2, 3)) for r in (0, 1)]),
           "all_gather": np.stack([_own(r, (2,)) for r in (0, 1)]),
           "all_gather_uneven": np.concatenate([_own(r, (r + 1, 2)) for r in (0, 1)]),
           "reduce_scatter_tensor": (_own(0, (4, 3)) + _own(1, (4, 3)))[2 * rank:2 * rank + 2],
           "reduce_scatter": np.maximum(*[[_own(r, (2,)), _own(r, (2,), 2.0)][rank]
                                          for r in (0, 1)]),
           "reduce_scatter_uneven": (_own(0, (3, 2)) + _own(1, (3, 2)))[[0], :] if rank == 0
           else (_own(0, (3, 2)) + _own(1, (3, 2)))[1:, :],
           "scatter": [_own(1, (2,)), _own(1, (2,), 3.0)][rank],
           "all_to_all": np.concatenate([[_own(r, (1,)), _own(r, (2,))][rank] for r in (0, 1)]),
           "all_to_all_single": np.concatenate([_own(r, (4,))[2 * rank:2 * rank + 2]
                                                for r in (0, 1)]),
           "all_to_all_single_uneven": np.concatenate(
               [_own(r, (3,))[:1] if rank == 0 else _own(r, (3,))[1:] for r in (0, 1)]),
           "group_all_reduce": _own(0, (2,)) + _own(1, (2,))}
    if rank == 0:
        exp["gather"] = np.stack([_own(r, (2,)) for r in (0, 1)])
    return exp


@pytest.mark.timeout(240)
def test_every_collective_on_two_ranks(tmp_path):
    if "torch" not in available_backends():
        pytest.skip("the torch backend (gloo) is not usable here")
    cmd = [sys.executable, "-m", "mscore.launch", "--worker_num=2", "--local_worker_num=2",
           f"--master_port={free_port()}", str(HERE / "mint_distributed_worker.py"),
           "--backend", "torch", "--out", str(tmp_path)]
    proc = run_job(cmd, 200, env=subprocess_env())
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for rank in (0, 1):
        got = dict(np.load(tmp_path / f"rank{rank}.npz"))
        assert (int(got["rank"]), int(got["size"])) == (rank, 2)
        assert bool(got["initialized"]) and not bool(got["initialized_after"])
        assert list(got["ranks"]) == [0, 1]
        assert str(got["group_name"]).startswith("hccl_2_")
        assert int(got["group_rank"]) == int(got["global_rank"]) == rank
        for key, want in _expected(rank).items():
            np.testing.assert_allclose(got[key], want, rtol=1e-6, err_msg=key)
        if rank == 1:   # the gather list of a rank that is not the destination is untouched
            np.testing.assert_array_equal(got["gather"], np.zeros((2, 2)))


@pytest.mark.parametrize("call, error, message", [
    (lambda: dist.all_reduce([1.0]), TypeError, "For all_reduce, the input tensor must be tensor"),
    (lambda: dist.get_rank(3), TypeError, "For 'get_rank', the argument 'group' must be type "
                                          "of string"),
    (lambda: dist.new_group((0, 1)), TypeError, "ranks must be list"),
    (lambda: dist.new_group([0, 1], backend="nccl"), TypeError,
     "the input backend must be hccl or mccl, but got nccl"),
    (lambda: dist.get_global_rank(None, "0"), TypeError,
     "The group_rank argument must be integer"),
    (lambda: dist.init_process_group(backend="xla"), ValueError, "Only support hccl now"),
])
def test_argument_errors_as_mindspore(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_without_a_job():
    assert dist.is_available() and not dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    assert dist.new_group() == "hccl_world_group"
    assert dist.get_backend() == "hccl" and dist.get_global_rank(None, 3) == 3
