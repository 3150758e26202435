"""Fuzzing the loaders: mutated checkpoint files either load or raise ValueError, nothing
else (no DecodeError, no IndexError, no crash, no hang)."""
import binascii
import os

import ml_dtypes
import numpy as np
import pytest
from _helpers import numpy_context_each_test
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mscore as ms
from mscore.train.serialization import _ckpt_format, load_checkpoint, parse_print, save_checkpoint

N_CKPT = 600
N_SAFETENSORS = 200
N_PRINT = 100
SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


_numpy_context = numpy_context_each_test()


def _base_ckpts(tmp_path):
    """Valid .ckpt files: several dtypes, a 0-d entry, a string, a tensor split in pieces,
    and the same with a CRC footer."""
    rng = np.random.default_rng(0)
    conv = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
    emb = rng.standard_normal((5, 3)).astype(ml_dtypes.bfloat16)
    items = [{"name": "conv.weight", "data": ms.Tensor(conv)},
             {"name": "bn.gamma", "data": ms.Tensor(np.ones(2, np.float16))},
             {"name": "emb", "data": ms.Tensor(emb)},
             {"name": "ids", "data": ms.Tensor(np.arange(-3, 3, dtype=np.int64))},
             {"name": "mask", "data": ms.Tensor(np.array([True, False, True]))},
             {"name": "big", "data": ms.Tensor(np.arange(40, dtype=np.int32))}]
    old = _ckpt_format.SLICE_BYTES
    _ckpt_format.SLICE_BYTES = 48  # "big" (160 bytes) is written as 4 pieces
    try:
        save_checkpoint(items, str(tmp_path / "base"), append_dict={"epoch": 3, "note": "ok"})
        save_checkpoint(items, str(tmp_path / "base_crc"), crc_check=True)
    finally:
        _ckpt_format.SLICE_BYTES = old
    return [(tmp_path / "base.ckpt").read_bytes(), (tmp_path / "base_crc.ckpt").read_bytes()]


def _mutation():
    pos = st.integers(0, 10_000)
    return st.one_of(
        st.tuples(st.just("flip"), pos, st.integers(0, 7)),
        st.tuples(st.just("set"), pos, st.integers(0, 255)),
        st.tuples(st.just("truncate"), pos),
        st.tuples(st.just("delete"), pos, st.integers(1, 40)),
        st.tuples(st.just("insert"), pos, st.binary(min_size=1, max_size=24)),
        st.tuples(st.just("duplicate"), pos, st.integers(1, 60)),
        # long varints: huge lengths, huge or negative dims
        st.tuples(st.just("insert"), pos, st.sampled_from([b"\xff" * 9 + b"\x01", b"\x80" * 10,
                                                            b"\x0a\xff\xff\xff\xff\x0f"])),
    )


def _apply(data, mutations):
    buf = bytearray(data)
    for m in mutations:
        kind, p = m[0], m[1] % (len(buf) + 1)
        if kind == "flip" and p < len(buf):
            buf[p] ^= 1 << m[2]
        elif kind == "set" and p < len(buf):
            buf[p] = m[2]
        elif kind == "truncate":
            del buf[p:]
        elif kind == "delete":
            del buf[p:p + m[2]]
        elif kind == "insert":
            buf[p:p] = m[2]
        elif kind == "duplicate":
            buf[p:p] = buf[p:p + m[2]]
    return bytes(buf)


def _fuzz(bases, path, fmt, n, loader):
    stats = {"runs": 0, "loaded": 0, "rejected": 0}

    @settings(max_examples=n, **SETTINGS)
    @given(st.integers(0, len(bases) - 1), st.lists(_mutation(), min_size=1, max_size=4))
    def run(which, mutations):
        path.write_bytes(_apply(bases[which], mutations))
        stats["runs"] += 1
        try:
            result = loader(str(path))
        except ValueError as exc:
            assert os.path.basename(str(path)) in str(exc), f"error does not name the file: {exc}"
            stats["rejected"] += 1
            return
        assert isinstance(result, (dict, list))
        stats["loaded"] += 1

    run()
    return stats


def test_fuzzed_ckpt_files_load_or_raise_value_error(tmp_path):
    bases = _base_ckpts(tmp_path)
    for base in bases:  # the seeds themselves are valid
        (tmp_path / "seed.ckpt").write_bytes(base)
        assert len(load_checkpoint(str(tmp_path / "seed.ckpt"))) >= 6
    stats = _fuzz(bases, tmp_path / "fuzz.ckpt", "ckpt", N_CKPT, load_checkpoint)
    assert stats["runs"] >= 500, stats
    assert stats["loaded"] > 0 and stats["rejected"] > 0, stats


def test_fuzzed_ckpt_files_with_crc_check(tmp_path):
    bases = _base_ckpts(tmp_path)[1:]
    stats = _fuzz(bases, tmp_path / "fuzz.ckpt", "ckpt", 150,
                  lambda p: load_checkpoint(p, crc_check=True))
    assert stats["rejected"] > 0.9 * stats["runs"], stats  # nearly every mutation is caught


def test_fuzzed_safetensors_files_load_or_raise_value_error(tmp_path):
    rng = np.random.default_rng(1)
    save_checkpoint({"w": ms.Tensor(rng.standard_normal((4, 3)).astype(np.float32)),
                     "h": ms.Tensor(np.ones(5, ml_dtypes.bfloat16)),
                     "i": ms.Tensor(np.arange(4, dtype=np.int8))},
                    str(tmp_path / "base"), format="safetensors",
                    append_dict={"note": "x"}, crc_check=True)
    save_checkpoint({"w": ms.Tensor(np.ones((2, 2), np.float64))}, str(tmp_path / "plain"),
                    format="safetensors")
    bases = [(tmp_path / "base.safetensors").read_bytes(),
             (tmp_path / "plain.safetensors").read_bytes()]
    stats = _fuzz(bases, tmp_path / "fuzz.safetensors", "safetensors", N_SAFETENSORS,
                  lambda p: load_checkpoint(p, format="safetensors"))
    assert stats["runs"] >= N_SAFETENSORS and stats["rejected"] > 0, stats


def test_fuzzed_print_files_parse_or_raise_value_error(tmp_path):
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
    stats = _fuzz([msg.SerializeToString()], tmp_path / "fuzz.pb", "print", N_PRINT, parse_print)
    assert stats["runs"] >= N_PRINT and stats["loaded"] > 0, stats


def test_mutations_reach_the_crc(tmp_path):
    # A sanity check of the harness: one flipped data bit in a CRC'd file is caught.
    base = _base_ckpts(tmp_path)[1]
    data = bytearray(base)
    data[len(data) // 2] ^= 0x01
    (tmp_path / "f.ckpt").write_bytes(bytes(data))
    body = bytes(data[:-17])
    assert binascii.crc32(body) != int.from_bytes(data[-10:], "big")
    with pytest.raises(ValueError, match="f.ckpt"):
        load_checkpoint(str(tmp_path / "f.ckpt"))
