"""Encrypted checkpoints that were damaged or tampered with never load: every single-bit flip
of an mscore-written file (all three modes), a block spliced in from another checkpoint of
the same key, blocks reordered or dropped, a wrong key. MindSpore-written files still load."""
import json
import os
import warnings

import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore.train.serialization import _crypto, load_checkpoint, save_checkpoint

pytest.importorskip("cryptography")

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "crypto")
MODES = ("AES-GCM", "AES-CBC", "SM4-CBC")
KEY = bytes(range(16))


_numpy_context = numpy_context_each_test()


def _save(path, values, mode, **kwargs):
    save_checkpoint({"w": ms.Tensor(values)}, str(path), enc_key=KEY, enc_mode=mode, **kwargs)
    return open(path, "rb").read()


def _outcome(path, mode, **kwargs):
    """'refused' (a ValueError naming the file) or the loaded weights."""
    try:
        return load_checkpoint(str(path), dec_key=KEY, dec_mode=mode, **kwargs)["w"].asnumpy()
    except ValueError as exc:
        assert repr(str(path)) in str(exc)
        return "refused"


@pytest.mark.parametrize("mode", MODES)
def test_every_single_bit_flip_is_refused(mode, tmp_path):
    w = np.arange(40, dtype=np.float32) / 3
    path = tmp_path / "w.ckpt"
    data = _save(path, w, mode)
    rng = np.random.default_rng(0)
    positions = rng.choice(len(data) * 8, size=160, replace=False)
    silently_wrong = []
    for bit in positions:
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(flipped))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an unauthenticated load would warn: also a failure
            try:
                got = _outcome(path, mode)
            except UserWarning:
                got = "unauthenticated"
        if not isinstance(got, str) or got == "unauthenticated":
            silently_wrong.append(int(bit))
    assert silently_wrong == []


def _blocks(data, mode):
    """The encrypted blocks of ``data`` as byte strings (the layout of _crypto's docstring)."""
    head = 4 + (16 if mode == "AES-GCM" else 0) + 4
    out, pos = [], 0
    while pos < len(data):
        length = int.from_bytes(data[pos + head - 4:pos + head], "little")
        out.append(data[pos:pos + head + length])
        pos += head + length
    return out


@pytest.mark.parametrize("mode", MODES)
def test_spliced_reordered_or_dropped_blocks_are_refused(mode, tmp_path, monkeypatch):
    monkeypatch.setattr(_crypto, "BLOCK_SIZE", 64)
    a = _blocks(_save(tmp_path / "a.ckpt", np.arange(60, dtype=np.float32), mode), mode)
    b = _blocks(_save(tmp_path / "b.ckpt", np.arange(60, dtype=np.float32)[::-1].copy(), mode),
                mode)
    assert len(a) == len(b) > 3
    variants = {"spliced": a[:2] + [b[2]] + a[3:], "swapped": [a[1], a[0]] + a[2:],
                "last dropped": a[:-1], "middle dropped": a[:2] + a[3:]}
    for label, blocks in variants.items():
        path = tmp_path / f"{label}.ckpt"
        path.write_bytes(b"".join(blocks))
        assert _outcome(path, mode) == "refused", label


def test_wrong_key_is_refused_in_every_mode(tmp_path):
    for mode in MODES:
        path = tmp_path / f"{mode}.ckpt"
        _save(path, np.ones(8, np.float32), mode)
        with pytest.raises(ValueError, match="dec_key is wrong"):
            load_checkpoint(str(path), dec_key=bytes(16), dec_mode=mode)


def _padding_looks_valid(data, key, mode):
    """Whether every block of the CBC file ``data`` decrypts under ``key`` to valid-looking
    PKCS#7 padding (decrypted here with ``cryptography`` directly)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    algorithm = algorithms.AES if mode == "AES-CBC" else algorithms.SM4
    for block in _blocks(data, mode):
        dec = Cipher(algorithm(key), modes.CBC(block[12:28])).decryptor()
        plain = dec.update(block[32:]) + dec.finalize()
        n = plain[-1]
        if not 1 <= n <= 16 or plain[-n:] != bytes([n]) * n:
            return False
    return True


def test_wrong_key_with_valid_looking_padding_is_refused_with_the_same_message():
    # keys found and loaded in MindSpore by make_crypto_fixtures.py steps 4 and 5
    with open(os.path.join(DATA, "wrong_keys.json")) as f:
        cases = json.load(f)["files"]
    assert len(cases) == 4
    for name, case in cases.items():
        path, key, mode = os.path.join(DATA, name), bytes.fromhex(case["key"]), case["mode"]
        assert _padding_looks_valid(open(path, "rb").read(), key, mode), name
        assert case["mindspore"]["error"] == "ValueError", name
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "no integrity check" warning first
            with pytest.raises(ValueError) as info:
                load_checkpoint(path, dec_key=key, dec_mode=mode)
        assert str(info.value) == (f"load_checkpoint: {path!r} is not a valid checkpoint file: "
                                   f"decryption failed: the dec_key is wrong or the file was "
                                   f"tampered with"), name


def test_crc_check_with_dec_key_requires_the_integrity_check(tmp_path):
    # mscore's own files carry it: crc_check=True loads them
    path = tmp_path / "w.ckpt"
    _save(path, np.ones(4, np.float32), "AES-CBC")
    assert _outcome(path, "AES-CBC", crc_check=True).tolist() == [1.0] * 4
    # MindSpore-written CBC files carry none: they load, with a warning naming the file,
    # and crc_check=True refuses them
    ms_file = os.path.join(DATA, "ms_cbc16.ckpt")
    with pytest.warns(UserWarning, match="no integrity check"):
        load_checkpoint(ms_file, dec_key=KEY, dec_mode="AES-CBC")
    with pytest.raises(ValueError, match="integrity check") as info:
        load_checkpoint(ms_file, dec_key=KEY, dec_mode="AES-CBC", crc_check=True)
    assert repr(ms_file) in str(info.value)
    # the mscore-written fixtures MindSpore loaded (make_crypto_fixtures.py --verify) carry it
    for name, mode in (("mscore_cbc16", "AES-CBC"), ("mscore_sm4", "SM4-CBC"),
                       ("mscore_gcm16", "AES-GCM")):
        load_checkpoint(os.path.join(DATA, name + ".ckpt"), dec_key=KEY, dec_mode=mode,
                        crc_check=True)
    # a GCM file MindSpore wrote is authenticated block by block: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_checkpoint(os.path.join(DATA, "ms_gcm16.ckpt"), dec_key=KEY)
