"""Fuzz every file loader of mscore with malformed inputs: none may leak a library exception.

For each file type mscore reads, valid seed files are written with mscore itself, then
``--count`` mutated copies are fed to the loader. A loader must either return a result or
raise a ``ValueError`` that names the file (for ``merge_sliced_parameter``, fed the layouts of
a fuzzed strategy file and a name it lacks, the argument ``strategy``/``sliced_parameters``).
Anything else -- a protobuf ``DecodeError``, ``KeyError``, ``OverflowError``, ``MemoryError``,
``EOFError``, a numpy error, a ValueError that does not say which file, or an empty result
from a checkpoint, strategy or print file -- is a *leak* and is listed.

File types and loaders:

=========== ========================================================================
ckpt        ``load_checkpoint`` (also with ``crc_check=True`` on files with a footer)
safetensors ``load_checkpoint(format="safetensors")``
strategy    ``build_searched_strategy``, then ``merge_sliced_parameter`` with each layout
print       ``parse_print``
events      ``read_events`` and ``load_summaries`` of a summary event file
idx         ``read_idx`` of an uncompressed MNIST IDX file
idx.gz      ``read_idx`` of a gzip-compressed one, and ``MnistDataset`` over a folder
=========== ========================================================================

Mutations: bit flips, byte sets, truncation, deletion, insertion of random bytes or of long
varints (huge lengths and dims), duplication of a span. For event files and ``.gz`` files
half the inputs mutate the *content* and re-frame it with valid checksums (or recompress it),
so the mutations reach the parsers behind the checksums. The process runs under an address
space limit (``--memory-mb``), so a loader that trusts a declared size fails with
``MemoryError`` (a leak) instead of exhausting the machine.

    python bench/fuzz_loaders.py [--count 1000] [--seed 0] [--types ckpt,events,...]

Exit status 1 when anything leaked.
"""
from __future__ import annotations

import argparse
import gzip
import os
import random
import struct
import sys
import tempfile
import time
import traceback

import numpy as np

TYPES = ("ckpt", "safetensors", "strategy", "print", "events", "idx", "idx.gz")
VARINTS = (b"\xff" * 9 + b"\x01", b"\x80" * 10, b"\x0a\xff\xff\xff\xff\x0f",
           b"\xff\xff\xff\xff\x07", b"\x12\x80\x80\x80\x80\x80\x80\x80\x80\x01")


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=1000, help="inputs per file type")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--types", default=",".join(TYPES), help="comma-separated file types")
    p.add_argument("--memory-mb", type=int, default=4096,
                   help="address-space limit of this process in MB (0: none)")
    args = p.parse_args(argv)
    args.types = [t for t in args.types.split(",") if t]
    unknown = set(args.types) - set(TYPES)
    if unknown or args.count < 1:
        p.error(f"unknown --types {sorted(unknown)} (known: {TYPES}) or --count < 1")
    return args


# -- mutations --------------------------------------------------------------------------------
def mutate(data, rng):
    """``data`` with 1 to 4 random byte-level mutations."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(("flip", "set", "truncate", "delete", "insert", "varint",
                           "duplicate"))
        p = rng.randint(0, len(buf))
        if kind == "flip" and p < len(buf):
            buf[p] ^= 1 << rng.randint(0, 7)
        elif kind == "set" and p < len(buf):
            buf[p] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randint(0, 255)))
        elif kind == "truncate":
            del buf[p:]
        elif kind == "delete":
            del buf[p:p + rng.randint(1, 40)]
        elif kind == "insert":
            buf[p:p] = bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 24)))
        elif kind == "varint":
            buf[p:p] = rng.choice(VARINTS)
        elif kind == "duplicate":
            buf[p:p] = buf[p:p + rng.randint(1, 60)]
    return bytes(buf)


# -- seed files -----------------------------------------------------------------------------
def _seed_ckpt(folder):
    import mscore as ms
    from mscore.train.serialization import _ckpt_format, save_checkpoint
    rng = np.random.default_rng(0)
    items = [{"name": "conv.weight", "data": ms.Tensor(rng.standard_normal((2, 1, 3, 3))
                                                      .astype(np.float32))},
             {"name": "bn.gamma", "data": ms.Tensor(np.ones(2, np.float16))},
             {"name": "ids", "data": ms.Tensor(np.arange(-3, 3, dtype=np.int64))},
             {"name": "mask", "data": ms.Tensor(np.array([True, False, True]))},
             {"name": "big", "data": ms.Tensor(np.arange(40, dtype=np.int32))}]
    old = _ckpt_format.SLICE_BYTES
    _ckpt_format.SLICE_BYTES = 48  # "big" is written in pieces
    try:
        save_checkpoint(items, os.path.join(folder, "a"), append_dict={"epoch": 3, "note": "x"})
        save_checkpoint(items, os.path.join(folder, "b"), crc_check=True)
    finally:
        _ckpt_format.SLICE_BYTES = old
    return [_read(folder, "a.ckpt"), _read(folder, "b.ckpt")]


def _seed_safetensors(folder):
    import mscore as ms
    from mscore.train.serialization import save_checkpoint
    save_checkpoint({"w": ms.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3)),
                     "i": ms.Tensor(np.arange(4, dtype=np.int8))},
                    os.path.join(folder, "a"), format="safetensors",
                    append_dict={"note": "x"}, crc_check=True)
    save_checkpoint({"w": ms.Tensor(np.ones((2, 2), np.float64))}, os.path.join(folder, "b"),
                    format="safetensors")
    return [_read(folder, "a.safetensors"), _read(folder, "b.safetensors")]


def _seed_strategy(folder):
    from mscore.train.proto import node_strategy_pb2
    msg = node_strategy_pb2.ParallelStrategyMap(current_stage=0)
    item = msg.parallel_strategy_item.add(node_name="MatMul-op0")
    item.parallel_strategys.stage = 0
    item.parallel_strategys.parallel_strategy.add().dim.extend([2, 1])
    for name, dev, tmap, split, field in (("w", [2, 2], [1, -1], None, 0),
                                           ("u", [4], [0], [1, 2, 3, 2], 0),
                                           ("e", [2], [-1, -1], None, 2)):
        lay = msg.parallel_layout_item.add(param_name=name).parallel_layouts
        lay.dev_matrix.add().dim.extend(dev)
        lay.tensor_map.add().dim.extend(tmap)
        if split:
            lay.param_split_shape.add().dim.extend(split)
        lay.indices_offset.add().dim.extend([0])
        lay.field, lay.opt_weight_shard_step, lay.opt_weight_shard_size = field, 0, 0
    return [msg.SerializeToString()]


def _seed_print(folder):
    from mscore.train.proto import print_pb2
    msg = print_pb2.Print()
    msg.value.add(desc="loss:")
    t = msg.value.add().tensor
    t.dims.extend([2, 2])
    t.tensor_type = "Float32"
    t.tensor_content = np.arange(4, dtype="<f4").tobytes()
    s = msg.value.add().tensor
    s.dims.append(0)
    s.tensor_type = "Int32"
    s.tensor_content = np.array(7, "<i4").tobytes()
    return [msg.SerializeToString()]


def _event_records(folder):
    """The data of each record of a real event file (scalar, histogram, image, tensor)."""
    import mscore as ms
    from mscore.train.summary import SummaryRecord
    from mscore.train.summary.reader import iter_records
    log = os.path.join(folder, "log")
    with SummaryRecord(log) as sr:
        for step in (1, 2):
            sr.add_value("scalar", "loss", ms.Tensor(np.float32(step)))
            sr.add_value("histogram", "w", ms.Tensor(np.arange(6, dtype=np.float32)))
            sr.add_value("image", "im", ms.Tensor(np.zeros((1, 1, 2, 2), np.float32)))
            sr.add_value("tensor", "t", ms.Tensor(np.arange(3, dtype=np.int32)))
            sr.record(step)
        path = sr.event_files[0]
    return list(iter_records(path))


def _seed_events(folder):
    from mscore.train.summary.writer import frame
    return [b"".join(frame(r) for r in _event_records(folder))]


def _idx_bytes():
    images = np.arange(3 * 4 * 4, dtype=np.uint8).reshape(3, 4, 4)
    return [bytes([0, 0, 8, 3]) + struct.pack(">III", 3, 4, 4) + images.tobytes(),
            bytes([0, 0, 8, 1]) + struct.pack(">I", 3) + bytes([1, 2, 3]),
            bytes([0, 0, 0x0D, 2]) + struct.pack(">II", 2, 2) + np.ones(4, ">f4").tobytes()]


def _seed_idx(folder):
    return _idx_bytes()


def _seed_idx_gz(folder):
    return [gzip.compress(b, 6) for b in _idx_bytes()]


SEEDS = {"ckpt": _seed_ckpt, "safetensors": _seed_safetensors, "strategy": _seed_strategy,
         "print": _seed_print, "events": _seed_events, "idx": _seed_idx, "idx.gz": _seed_idx_gz}
FILE_NAMES = {"ckpt": "fuzz.ckpt", "safetensors": "fuzz.safetensors",
              "strategy": "fuzz_strategy.pb", "print": "fuzz_print.pb",
              "events": "events.out.tfevents.1.fuzz_MS", "idx": "fuzz-idx3-ubyte",
              "idx.gz": "train-images-idx3-ubyte.gz"}


# A file these loaders accept holds at least one entry (an empty one is refused).
NON_EMPTY = ("ckpt", "safetensors", "strategy", "print")


def _read(folder, name):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


# -- structure-aware variants ---------------------------------------------------------------
def _mutate_events(seed, rng, folder):
    """Half the time: mutate one record's data and re-frame every record with valid CRCs."""
    from mscore.train.summary.writer import frame
    if rng.random() < 0.5:
        return mutate(seed, rng)
    records = _events_cache.setdefault("records", _event_records(folder))
    out = list(records)
    k = rng.randrange(len(out))
    out[k] = mutate(out[k], rng)
    return b"".join(frame(r) for r in out)


_events_cache: dict = {}


def _mutate_gz(seed, rng):
    """Half the time: mutate the decompressed IDX bytes and compress them again."""
    if rng.random() < 0.5:
        return mutate(seed, rng)
    return gzip.compress(mutate(gzip.decompress(seed), rng), 1)


# -- loaders ---------------------------------------------------------------------------------
def _load_strategy(path):
    import mscore as ms
    from mscore.train.serialization import build_searched_strategy, merge_sliced_parameter
    strategy = build_searched_strategy(path)
    for name in list(strategy) + ["not_in_the_file"]:
        slices = [ms.Parameter(ms.Tensor(np.ones((2, 3), np.float32)), name=name)
                  for _ in range(4)]
        try:
            merge_sliced_parameter(slices, strategy)
        except ValueError as exc:
            if not any(w in str(exc) for w in ("strategy", "sliced_parameters",
                                               "merge_sliced_parameter")):
                raise AssertionError(f"merge_sliced_parameter error names no argument: "
                                     f"{exc}") from exc
    return strategy


def _load_events(path):
    from mscore.train.summary import load_summaries
    from mscore.train.summary.reader import read_events
    events = list(read_events(path))
    load_summaries(path)
    return events


def _load_idx_gz(path):
    from mscore.dataset import MnistDataset, read_idx
    out = read_idx(path)
    folder = os.path.dirname(path)
    labels = os.path.join(folder, "train-labels-idx1-ubyte")
    if not os.path.exists(labels):
        with open(labels, "wb") as f:
            f.write(bytes([0, 0, 8, 1]) + struct.pack(">I", 3) + bytes([1, 2, 3]))
    try:
        MnistDataset(folder, usage="train").get_dataset_size()
    except ValueError as exc:
        if os.path.basename(path) not in str(exc) and "train-" not in str(exc):
            raise AssertionError(f"MnistDataset error names no file: {exc}") from exc
    return out


def _loaders():
    from mscore.dataset import read_idx
    from mscore.train.serialization import load_checkpoint, parse_print

    def ckpt(path):
        if _read(*os.path.split(path))[-17:-10] == b"crc_num" and random.random() < 0.5:
            return load_checkpoint(path, crc_check=True)
        return load_checkpoint(path)

    return {"ckpt": ckpt,
            "safetensors": lambda p: load_checkpoint(p, format="safetensors"),
            "strategy": _load_strategy, "print": parse_print, "events": _load_events,
            "idx": read_idx, "idx.gz": _load_idx_gz}


# -- the run ---------------------------------------------------------------------------------
def _limit_memory(megabytes):
    if megabytes <= 0:
        return
    try:
        import resource
        limit = megabytes * 1024 * 1024
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass


def fuzz(kind, count, seed, folder):
    """Feed ``count`` mutated files of type ``kind`` to its loader; returns a dict with the
    numbers loaded and refused, the leaks ``[(input index, exception type, message)]`` and
    the slowest input's seconds."""
    import mscore as ms
    ms.set_context(backend="numpy")
    rng = random.Random(f"{seed}:{kind}")
    random.seed(seed)
    work = os.path.join(folder, kind.replace(".", "_"))
    os.makedirs(work, exist_ok=True)
    seeds = SEEDS[kind](work)
    loader = _loaders()[kind]
    path = os.path.join(work, FILE_NAMES[kind])
    stats = {"kind": kind, "inputs": 0, "loaded": 0, "refused": 0, "leaks": [], "slowest": 0.0}
    for i in range(count):
        base = seeds[i % len(seeds)]
        if kind == "events":
            data = _mutate_events(base, rng, work)
        elif kind == "idx.gz":
            data = _mutate_gz(base, rng)
        else:
            data = mutate(base, rng)
        with open(path, "wb") as f:
            f.write(data)
        stats["inputs"] += 1
        start = time.perf_counter()
        try:
            result = loader(path)
            if kind in NON_EMPTY and not result:
                stats["leaks"].append((i, "empty result", "the loader accepted a file "
                                       "without entries instead of refusing it"))
            else:
                stats["loaded"] += 1
        except ValueError as exc:
            if os.path.basename(path) in str(exc):
                stats["refused"] += 1
            else:
                stats["leaks"].append((i, "ValueError without the file name", str(exc)[:300]))
        except Exception as exc:
            where = traceback.extract_tb(exc.__traceback__)[-1]
            stats["leaks"].append((i, type(exc).__name__,
                                   f"{str(exc)[:200]} [{os.path.basename(where.filename)}:"
                                   f"{where.lineno}]"))
        stats["slowest"] = max(stats["slowest"], time.perf_counter() - start)
    return stats


def main(argv=None):
    args = _parse(argv)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    _limit_memory(args.memory_mb)
    total_inputs, total_leaks = 0, 0
    with tempfile.TemporaryDirectory(prefix="mscore-fuzz-") as folder:
        for kind in args.types:
            start = time.perf_counter()
            s = fuzz(kind, args.count, args.seed, folder)
            total_inputs += s["inputs"]
            total_leaks += len(s["leaks"])
            print(f"{kind:12s} {s['inputs']:6d} inputs: {s['loaded']:5d} loaded, "
                  f"{s['refused']:5d} refused with a ValueError naming the file, "
                  f"{len(s['leaks'])} leaked  (slowest input {s['slowest'] * 1e3:.1f} ms, "
                  f"{time.perf_counter() - start:.1f} s)", flush=True)
            for i, kind_name, message in s["leaks"][:10]:
                print(f"    leak at input {i}: {kind_name}: {message}")
    print(f"fuzz: {total_inputs} malformed inputs over {len(args.types)} file types, "
          f"{total_leaks} library exceptions leaked")
    return 1 if total_leaks else 0


if __name__ == "__main__":
    sys.exit(main())
