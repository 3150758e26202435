"""Encrypted checkpoints, both directions with MindSpore 2.10 (``tests/data/crypto/``, made by
``tests/data/make_crypto_fixtures.py``): files MindSpore encrypted load in mscore; the files
mscore encrypted were loaded by MindSpore (``ms_loaded_mscore.json``) and mscore still writes
the same plain bytes; errors are MindSpore's types and name the file; nothing is half-written.
The IVs are random, so files are compared by their decrypted bytes."""
import json
import os
import warnings

import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend

import mscore as ms
from mscore.train.serialization import _crypto, load_checkpoint, save_checkpoint

pytest.importorskip("cryptography")

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "crypto")
CASES = {"gcm16": ("AES-GCM", 16), "gcm24": ("AES-GCM", 24), "gcm32": ("AES-GCM", 32),
         "cbc16": ("AES-CBC", 16), "cbc32": ("AES-CBC", 32), "sm4": ("SM4-CBC", 16)}


def _json(name):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


EXPECTED = _json("expected.json")
MS_ERRORS = _json("ms_errors.json")["cases"]


_numpy_context = numpy_context_each_test()


def key_of(case):
    return bytes(range(CASES[case][1]))


def content():
    """The fixtures' checkpoint (make_crypto_fixtures.content)."""
    arrays = {"conv.weight": np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) / 7,
              "bn.gamma": np.array([1.5, -2.25, 3.0], np.float16),
              "step": np.array([[1, -2], [3, 40000]], np.int32)}
    return ([{"name": k, "data": ms.Tensor(v)} for k, v in arrays.items()],
            {"epoch_num": 3, "lr": 0.125, "note": "héllo"})


def record(params):
    out = {}
    for name, value in params.items():
        if isinstance(value, str):
            out[name] = {"str": value}
        else:
            arr = value.asnumpy()
            out[name] = {"dtype": str(arr.dtype), "shape": list(arr.shape),
                         "value": arr.astype(np.float64).tolist()}
    return out


def plain_bytes(path, case):
    with open(path, "rb") as f:
        data = f.read()
    # MindSpore's CBC files carry no integrity check (test_reliability_crypto.py)
    return _crypto.decrypt(data, key_of(case), CASES[case][0], ValueError,
                           warn_unchecked=lambda why: None)


@pytest.mark.parametrize("case", sorted(CASES))
def test_mindspore_encrypted_files_load(case):
    with warnings.catch_warnings():  # CBC: "no integrity check" (test_reliability_crypto.py)
        warnings.simplefilter("ignore")
        loaded = load_checkpoint(os.path.join(DATA, f"ms_{case}.ckpt"), dec_key=key_of(case),
                                 dec_mode=CASES[case][0])
    assert record(loaded) == EXPECTED


@pytest.mark.parametrize("backend", available_backends(exclude=("numpy",)))
def test_mindspore_encrypted_file_loads_on_every_backend(backend):
    use_backend(backend)
    got = record(load_checkpoint(os.path.join(DATA, "ms_gcm16.ckpt"), dec_key=key_of("gcm16")))
    assert set(got) == set(EXPECTED)
    for name, want in EXPECTED.items():
        if "str" in want:
            assert got[name] == want
            continue
        # values and kinds; a backend may narrow int64 (jax without x64, differences.md)
        assert got[name]["value"] == want["value"] and got[name]["shape"] == want["shape"]
        assert np.dtype(got[name]["dtype"]).kind == np.dtype(want["dtype"]).kind, name


@pytest.mark.parametrize("case", sorted(CASES))
def test_mscore_writes_what_mindspore_loaded(case, tmp_path):
    # MindSpore loaded the checked-in mscore files with these values ...
    assert _json("ms_loaded_mscore.json")["loaded"][case] == EXPECTED
    # ... and today's writer produces the same plain bytes as those files (and as MindSpore)
    save_obj, append = content()
    fresh = str(tmp_path / "fresh.ckpt")
    save_checkpoint(save_obj, fresh, append_dict=append, enc_key=key_of(case),
                    enc_mode=CASES[case][0])
    mine = plain_bytes(fresh, case)
    assert mine == plain_bytes(os.path.join(DATA, f"mscore_{case}.ckpt"), case)
    assert mine == plain_bytes(os.path.join(DATA, f"ms_{case}.ckpt"), case)
    # fresh IVs: two encryptions of the same content differ on disk
    with open(fresh, "rb") as f, open(os.path.join(DATA, f"mscore_{case}.ckpt"), "rb") as g:
        assert f.read() != g.read()
    assert record(load_checkpoint(fresh, dec_key=key_of(case), dec_mode=CASES[case][0])) == \
        EXPECTED


def test_block_layout_and_many_blocks(tmp_path, monkeypatch):
    """Big checkpoints are cut into blocks of BLOCK_SIZE plain bytes, each with its own
    header, IV (and tag): checked on the layout fields and by a round trip."""
    monkeypatch.setattr(_crypto, "BLOCK_SIZE", 100)
    w = np.arange(300, dtype=np.float32)
    for mode, tag in (("AES-GCM", 16), ("AES-CBC", 0), ("SM4-CBC", 0)):
        path = str(tmp_path / f"{mode}.ckpt")
        save_checkpoint({"w": ms.Tensor(w)}, path, enc_key=b"k" * 16, enc_mode=mode)
        data = open(path, "rb").read()
        pos, plain_sizes = 0, []
        while pos < len(data):
            assert int.from_bytes(data[pos:pos + 4], "little") == _crypto.MAGIC[mode]
            length = int.from_bytes(data[pos + 4 + tag:pos + 8 + tag], "little")
            body = data[pos + 8 + tag:pos + 8 + tag + length]
            assert int.from_bytes(body[:4], "little") == 16
            cipher_len = int.from_bytes(body[20:24], "little")
            assert cipher_len == length - 24
            plain_sizes.append(cipher_len if tag else None)
            pos += 8 + tag + length
        assert pos == len(data)
        n_blocks = sum(1 for _ in plain_sizes)
        plain = _crypto.decrypt(data, b"k" * 16, mode, ValueError)
        assert n_blocks == -(-len(plain) // 100) and n_blocks > 10
        if tag:
            assert plain_sizes[:-1] == [100] * (n_blocks - 1)
        np.testing.assert_array_equal(
            load_checkpoint(path, dec_key=b"k" * 16, dec_mode=mode)["w"].asnumpy(), w)


def _bad_files(tmp_path):
    gcm = os.path.join(DATA, "ms_gcm16.ckpt")
    data = open(gcm, "rb").read()
    tampered = tmp_path / "tampered.ckpt"
    tampered.write_bytes(data[:60] + bytes([data[60] ^ 1]) + data[61:])
    truncated = tmp_path / "truncated.ckpt"
    truncated.write_bytes(data[:-7])
    plain = tmp_path / "plain.ckpt"
    save_checkpoint(content()[0], str(plain))
    return gcm, str(tampered), str(truncated), str(plain)


def test_wrong_key_mode_or_file_is_mindsporess_value_error_naming_the_file(tmp_path):
    gcm, tampered, truncated, plain = _bad_files(tmp_path)
    cbc = os.path.join(DATA, "ms_cbc16.ckpt")
    k16 = bytes(range(16))
    cases = {
        "load: wrong key (AES-GCM)": (gcm, dict(dec_key=bytes(16)), "dec_key is wrong"),
        "load: wrong key (AES-CBC)": (cbc, dict(dec_key=bytes(16), dec_mode="AES-CBC"),
                                      "dec_key is wrong"),
        "load: AES-GCM file as AES-CBC": (gcm, dict(dec_key=k16, dec_mode="AES-CBC"),
                                          "encrypted with AES-GCM"),
        "load: encrypted file without dec_key": (gcm, {}, "encrypted \\(AES-GCM\\)"),
        "load: plain file with dec_key": (plain, dict(dec_key=k16), "not an encrypted"),
        "load: tampered": (tampered, dict(dec_key=k16), "tampered"),
        "load: truncated": (truncated, dict(dec_key=k16), "truncated"),
    }
    for label, (path, kwargs, why) in cases.items():
        assert MS_ERRORS[label]["error"] == "ValueError", label
        with pytest.raises(ValueError, match=why) as info:
            load_checkpoint(path, **kwargs)
        assert repr(path) in str(info.value), label


def test_key_and_mode_arguments_are_checked_as_mindspore(tmp_path):
    obj = content()[0]
    gcm = os.path.join(DATA, "ms_gcm16.ckpt")
    k16 = bytes(range(16))
    save = {
        "save: enc_key str": dict(enc_key="k" * 16),
        "save: enc_mode int": dict(enc_key=k16, enc_mode=1),
        "save: enc_mode XYZ": dict(enc_key=k16, enc_mode="XYZ"),
        "save: enc_key 10 bytes": dict(enc_key=b"0" * 10),
        "save: safetensors with enc_key": dict(enc_key=k16, format="safetensors"),
    }
    for label, kwargs in save.items():
        with pytest.raises(getattr(__import__("builtins"), MS_ERRORS[label]["error"]),
                           match="enc_key|enc_mode"):
            save_checkpoint(obj, str(tmp_path / "x"), **kwargs)
    load = {
        "load: dec_key str": dict(dec_key="k" * 16),
        "load: dec_mode int": dict(dec_key=k16, dec_mode=1),
        "load: dec_mode XYZ": dict(dec_key=k16, dec_mode="XYZ"),
        "load: dec_key 10 bytes": dict(dec_key=b"0" * 10),
    }
    for label, kwargs in load.items():
        with pytest.raises(getattr(__import__("builtins"), MS_ERRORS[label]["error"]),
                           match="dec_key|dec_mode"):
            load_checkpoint(gcm, **kwargs)
    with pytest.raises(ValueError, match="dec_key"):
        load_checkpoint(str(tmp_path / "x.safetensors"), dec_key=k16, format="safetensors")
    # MindSpore writes a file it cannot read for enc_key + crc_check; mscore refuses
    assert MS_ERRORS["save: enc_key and crc_check, then load"]["error"] == "ValueError"
    with pytest.raises(ValueError, match="crc_check"):
        save_checkpoint(obj, str(tmp_path / "y"), enc_key=k16, crc_check=True)
    # enc_mode alone (no key) is ignored, as in MindSpore
    assert MS_ERRORS["save: enc_mode given without enc_key"] == "ok"
    save_checkpoint(obj, str(tmp_path / "z"), enc_mode="XYZ")
    # MindSpore leaves temporaries behind after a failed encryption; mscore leaves nothing
    assert MS_ERRORS["files left by failed saves"]
    assert sorted(os.listdir(tmp_path)) == ["z.ckpt"]


def test_failed_encrypting_save_keeps_the_old_file(tmp_path, monkeypatch):
    path = str(tmp_path / "keep.ckpt")
    obj = content()[0]
    save_checkpoint(obj, path, enc_key=b"k" * 16)
    before = open(path, "rb").read()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(_crypto, "encrypt_block", boom)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(obj, path, enc_key=b"k" * 16)
    assert open(path, "rb").read() == before
    assert os.listdir(tmp_path) == ["keep.ckpt"]


def test_load_checkpoint_async_returns_a_future():
    from mscore.train.serialization import load_checkpoint_async
    path = os.path.join(DATA, "ms_gcm16.ckpt")
    future = load_checkpoint_async(path, dec_key=key_of("gcm16"))
    assert record(future.result(timeout=60)) == EXPECTED
    bad = load_checkpoint_async(path, dec_key=bytes(16))
    with pytest.raises(ValueError, match="dec_key is wrong"):
        bad.result(timeout=60)
    assert ms.load_checkpoint_async is load_checkpoint_async
