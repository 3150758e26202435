"""Worker of tests/test_mint_distributed.py (started by ``mscore run`` with 2 workers; not a
test module): calls every collective of ``mscore.mint.distributed`` on values that depend on
the rank and writes what each left in its tensors to ``OUT/rank{R}.npz``."""
from __future__ import annotations

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="torch")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import mscore as ms
    from mscore.mint import distributed as dist
    ms.set_context(backend=args.backend)
    dist.init_process_group()
    rank, size = dist.get_rank(), dist.get_world_size()
    T = ms.Tensor

    def own(shape, scale=1.0):
        return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * scale + 10 * rank

    out = {"rank": rank, "size": size, "initialized": dist.is_initialized(),
           "ranks": np.array(dist.get_process_group_ranks())}
    for op in ("sum", "max", "min", "avg", "prod"):
        t = T(own((2, 3)) + 1)
        assert dist.all_reduce(t, op) is None
        out[f"all_reduce_{op}"] = t.asnumpy()
    t = T(own((2,)))
    dist.reduce(t, 1, "sum")
    out["reduce"] = t.asnumpy()
    t = T(own((3,)))
    handle = dist.broadcast(t, 1, async_op=True)
    handle.wait()
    out["broadcast"] = t.asnumpy()
    gathered = T(np.zeros((4, 3), np.float32))
    dist.all_gather_into_tensor(gathered, T(own((2, 3))))
    out["all_gather_into_tensor"] = gathered.asnumpy()
    parts = [T(np.zeros((2,), np.float32)) for _ in range(size)]
    dist.all_gather(parts, T(own((2,))))
    out["all_gather"] = np.stack([p.asnumpy() for p in parts])
    uneven = T(np.zeros((3, 2), np.float32))
    dist.all_gather_into_tensor_uneven(uneven, T(own((rank + 1, 2))))
    out["all_gather_uneven"] = uneven.asnumpy()
    block = T(np.zeros((2, 3), np.float32))
    dist.reduce_scatter_tensor(block, T(own((4, 3))))
    out["reduce_scatter_tensor"] = block.asnumpy()
    block = T(np.zeros((2,), np.float32))
    dist.reduce_scatter(block, [T(own((2,))), T(own((2,), 2.0))], "max")
    out["reduce_scatter"] = block.asnumpy()
    piece = T(np.zeros((1 + rank, 2), np.float32))
    dist.reduce_scatter_tensor_uneven(piece, T(own((3, 2))), [1, 2])
    out["reduce_scatter_uneven"] = piece.asnumpy()
    targets = [T(np.zeros((2,), np.float32)) for _ in range(size)]
    dist.gather(T(own((2,))), targets, dst=0)
    out["gather"] = np.stack([p.asnumpy() for p in targets])
    received = T(np.zeros((2,), np.float32))
    dist.scatter(received, [T(own((2,))), T(own((2,), 3.0))] if rank == 1 else None, src=1)
    out["scatter"] = received.asnumpy()
    outs = [T(np.zeros((rank + 1,), np.float32)), T(np.zeros((rank + 1,), np.float32))]
    dist.all_to_all(outs, [T(own((1,))), T(own((2,)))])
    out["all_to_all"] = np.concatenate([o.asnumpy() for o in outs])
    single = T(np.zeros((4,), np.float32))
    dist.all_to_all_single(single, T(own((4,))))
    out["all_to_all_single"] = single.asnumpy()
    sizes_out = [1, 1] if rank == 0 else [2, 2]
    single = T(np.zeros((sum(sizes_out),), np.float32))
    dist.all_to_all_single(single, T(own((3,))), sizes_out, [1, 2])
    out["all_to_all_single_uneven"] = single.asnumpy()
    group = dist.new_group([0, 1])
    out["group_name"] = group
    out["group_rank"] = dist.get_group_rank(group, rank)
    out["global_rank"] = dist.get_global_rank(group, rank)
    t = T(own((2,)))
    dist.all_reduce(t, "sum", group=group)
    out["group_all_reduce"] = t.asnumpy()
    dist.barrier()
    dist.destroy_process_group()
    out["initialized_after"] = dist.is_initialized()
    np.savez(f"{args.out}/rank{rank}.npz", **out)


if __name__ == "__main__":
    main()
