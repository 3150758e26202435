"""Encrypted checkpoint fixtures (``tests/data/crypto/``), both directions, judged by MindSpore.

Three steps, from the repository root::

    /tmp/ms/bin/python tests/data/make_crypto_fixtures.py           # 1. MindSpore 2.10 encrypts
    python tests/data/make_crypto_fixtures.py --mscore              # 2. mscore encrypts
    /tmp/ms/bin/python tests/data/make_crypto_fixtures.py --verify  # 3. MindSpore loads step 2
    python tests/data/make_crypto_fixtures.py --find-wrong-keys     # 4. keys for step 5
    /tmp/ms/bin/python tests/data/make_crypto_fixtures.py --wrong-keys  # 5. MindSpore loads

Step 1 saves the same small checkpoint (:func:`content`) with ``mindspore.save_checkpoint(...,
enc_key=key, enc_mode=mode)`` for every case of :data:`CASES` as ``ms_<case>.ckpt``, writes the
plain values to ``expected.json`` and records in ``ms_errors.json`` what MindSpore raises for a
wrong key, a wrong mode, a tampered or truncated file, and so on. Step 2 writes
``mscore_<case>.ckpt`` with ``mscore.save_checkpoint``. Step 3 loads each ``mscore_*.ckpt`` in
MindSpore with its key and mode, checks the values against ``expected.json`` and records what
it read in ``ms_loaded_mscore.json``. The keys are ``bytes(range(n))`` (fixtures, not secrets).

A wrong key decrypts a CBC block to pseudo-random bytes whose PKCS#7 padding still looks valid
about once in 256. Step 4 (it needs the ``cryptography`` package, which MindSpore's venv lacks)
finds, for each CBC fixture of steps 1 and 2, the first wrong key ``i.to_bytes(16, "big")``
(``i = 1, 2, ...``) under which every block's padding looks valid, and writes them to
``wrong_keys.json``; step 5 records there what MindSpore raises when it loads each file with
that key.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "crypto")
# case -> (mode, key length)
CASES = {"gcm16": ("AES-GCM", 16), "gcm24": ("AES-GCM", 24), "gcm32": ("AES-GCM", 32),
         "cbc16": ("AES-CBC", 16), "cbc32": ("AES-CBC", 32), "sm4": ("SM4-CBC", 16)}


def key_of(case):
    return bytes(range(CASES[case][1]))


def arrays():
    """The tensors of the fixture checkpoint, in order."""
    return {"conv.weight": np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) / 7,
            "bn.gamma": np.array([1.5, -2.25, 3.0], np.float16),
            "step": np.array([[1, -2], [3, 40000]], np.int32)}


APPEND = {"epoch_num": 3, "lr": 0.125, "note": "héllo"}


def content(ms):
    """The save_obj and append_dict of module ``ms`` (mindspore or mscore)."""
    save_obj = [{"name": k, "data": ms.Tensor(v)} for k, v in arrays().items()]
    return save_obj, dict(APPEND)


def as_record(params):
    out = {}
    for name, value in params.items():
        if isinstance(value, str):
            out[name] = {"str": value}
        else:
            arr = value.asnumpy()
            out[name] = {"dtype": str(arr.dtype), "shape": list(arr.shape),
                         "value": arr.astype(np.float64).tolist()}
    return out


def expected():
    rec = {k: {"dtype": str(v.dtype), "shape": list(v.shape),
               "value": v.astype(np.float64).tolist()} for k, v in arrays().items()}
    rec["epoch_num"] = {"dtype": "int64", "shape": [], "value": 3.0}
    rec["lr"] = {"dtype": "float32", "shape": [], "value": 0.125}
    rec["note"] = {"str": APPEND["note"]}
    return rec


def outcome(fn):
    try:
        fn()
    except BaseException as exc:
        return {"error": type(exc).__name__, "message": str(exc).split("\n")[0][:300]}
    return "ok"


def mindspore_encrypts():
    import mindspore as ms
    os.makedirs(OUT, exist_ok=True)
    for case, (mode, _) in CASES.items():
        save_obj, append = content(ms)
        ms.save_checkpoint(save_obj, os.path.join(OUT, f"ms_{case}.ckpt"), append_dict=append,
                           enc_key=key_of(case), enc_mode=mode)
        got = as_record(ms.load_checkpoint(os.path.join(OUT, f"ms_{case}.ckpt"),
                                           dec_key=key_of(case), dec_mode=mode))
        assert got == expected(), case
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected(), f, indent=1, sort_keys=True)
        f.write("\n")
    # what MindSpore raises
    import tempfile
    tmp = tempfile.mkdtemp()
    gcm = os.path.join(OUT, "ms_gcm16.ckpt")
    cbc = os.path.join(OUT, "ms_cbc16.ckpt")
    plain = os.path.join(tmp, "plain.ckpt")
    ms.save_checkpoint(content(ms)[0], plain)
    data = open(gcm, "rb").read()
    tampered = os.path.join(tmp, "tampered.ckpt")
    open(tampered, "wb").write(data[:60] + bytes([data[60] ^ 1]) + data[61:])
    truncated = os.path.join(tmp, "truncated.ckpt")
    open(truncated, "wb").write(data[:-7])
    k16 = bytes(range(16))
    obj = content(ms)[0]
    errors = {
        "load: wrong key (AES-GCM)": outcome(lambda: ms.load_checkpoint(gcm, dec_key=bytes(16))),
        "load: wrong key (AES-CBC)": outcome(lambda: ms.load_checkpoint(
            cbc, dec_key=bytes(16), dec_mode="AES-CBC")),
        "load: AES-GCM file as AES-CBC": outcome(lambda: ms.load_checkpoint(
            gcm, dec_key=k16, dec_mode="AES-CBC")),
        "load: encrypted file without dec_key": outcome(lambda: ms.load_checkpoint(gcm)),
        "load: plain file with dec_key": outcome(lambda: ms.load_checkpoint(plain, dec_key=k16)),
        "load: tampered": outcome(lambda: ms.load_checkpoint(tampered, dec_key=k16)),
        "load: truncated": outcome(lambda: ms.load_checkpoint(truncated, dec_key=k16)),
        "load: dec_key str": outcome(lambda: ms.load_checkpoint(gcm, dec_key="k" * 16)),
        "load: dec_mode int": outcome(lambda: ms.load_checkpoint(gcm, dec_key=k16, dec_mode=1)),
        "load: dec_mode XYZ": outcome(lambda: ms.load_checkpoint(gcm, dec_key=k16,
                                                                 dec_mode="XYZ")),
        "load: dec_key 10 bytes": outcome(lambda: ms.load_checkpoint(gcm, dec_key=b"0" * 10)),
        "load: safetensors with dec_key": outcome(lambda: ms.load_checkpoint(
            plain, dec_key=k16, format="safetensors")),
        "save: enc_key str": outcome(lambda: ms.save_checkpoint(
            obj, os.path.join(tmp, "a.ckpt"), enc_key="k" * 16)),
        "save: enc_mode int": outcome(lambda: ms.save_checkpoint(
            obj, os.path.join(tmp, "b.ckpt"), enc_key=k16, enc_mode=1)),
        "save: enc_mode XYZ": outcome(lambda: ms.save_checkpoint(
            obj, os.path.join(tmp, "c.ckpt"), enc_key=k16, enc_mode="XYZ")),
        "save: enc_key 10 bytes": outcome(lambda: ms.save_checkpoint(
            obj, os.path.join(tmp, "d.ckpt"), enc_key=b"0" * 10)),
        "save: safetensors with enc_key": outcome(lambda: ms.save_checkpoint(
            obj, os.path.join(tmp, "e.safetensors"), enc_key=k16, format="safetensors")),
        "save: enc_key and crc_check, then load": outcome(lambda: (ms.save_checkpoint(
            obj, os.path.join(tmp, "f.ckpt"), enc_key=k16, crc_check=True),
            ms.load_checkpoint(os.path.join(tmp, "f.ckpt"), dec_key=k16))),
        "save: enc_mode given without enc_key": outcome(lambda: ms.save_checkpoint(
            obj, os.path.join(tmp, "g.ckpt"), enc_mode="XYZ")),
    }
    errors["files left by failed saves"] = sorted(
        n for n in os.listdir(tmp) if n not in ("plain.ckpt", "tampered.ckpt", "truncated.ckpt",
                                                "f.ckpt", "g.ckpt"))
    with open(os.path.join(OUT, "ms_errors.json"), "w") as f:
        json.dump({"mindspore_version": ms.__version__, "cases": errors}, f, indent=1,
                  sort_keys=True)
        f.write("\n")


def mscore_encrypts():
    import mscore as ms
    ms.set_context(backend="numpy")
    for case, (mode, _) in CASES.items():
        save_obj, append = content(ms)
        ms.save_checkpoint(save_obj, os.path.join(OUT, f"mscore_{case}.ckpt"),
                           append_dict=append, enc_key=key_of(case), enc_mode=mode)


def mindspore_verifies():
    import mindspore as ms
    loaded = {}
    for case, (mode, _) in CASES.items():
        got = as_record(ms.load_checkpoint(os.path.join(OUT, f"mscore_{case}.ckpt"),
                                           dec_key=key_of(case), dec_mode=mode))
        assert got == expected(), case
        loaded[case] = got
    with open(os.path.join(OUT, "ms_loaded_mscore.json"), "w") as f:
        json.dump({"mindspore_version": ms.__version__, "loaded": loaded}, f, indent=1,
                  sort_keys=True)
        f.write("\n")


WRONG_KEY_FILES = {"ms_cbc16.ckpt": "AES-CBC", "ms_sm4.ckpt": "SM4-CBC",
                   "mscore_cbc16.ckpt": "AES-CBC", "mscore_sm4.ckpt": "SM4-CBC"}


def cbc_blocks(data):
    """``(iv, cipher)`` of every block of a CBC-encrypted file (magic, length, iv_len, iv,
    cipher_len, cipher; int32 little-endian)."""
    out, pos = [], 0
    while pos < len(data):
        length = int.from_bytes(data[pos + 4:pos + 8], "little")
        body = data[pos + 8:pos + 8 + length]
        out.append((body[4:20], body[24:]))
        pos += 8 + length
    return out


def padding_looks_valid(data, key, mode):
    """Whether every block of ``data`` decrypts under ``key`` to valid-looking PKCS#7 padding."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    algorithm = algorithms.AES if mode == "AES-CBC" else algorithms.SM4
    for iv, cipher in cbc_blocks(data):
        dec = Cipher(algorithm(key), modes.CBC(iv)).decryptor()
        plain = dec.update(cipher) + dec.finalize()
        n = plain[-1]
        if not 1 <= n <= 16 or plain[-n:] != bytes([n]) * n:
            return False
    return True


def find_wrong_keys():
    keys = {}
    for name, mode in WRONG_KEY_FILES.items():
        data = open(os.path.join(OUT, name), "rb").read()
        i = 1
        while not padding_looks_valid(data, i.to_bytes(16, "big"), mode):
            i += 1
        keys[name] = {"mode": mode, "key": i.to_bytes(16, "big").hex()}
    with open(os.path.join(OUT, "wrong_keys.json"), "w") as f:
        json.dump({"files": keys}, f, indent=1, sort_keys=True)
        f.write("\n")


def mindspore_loads_with_wrong_keys():
    import mindspore as ms
    path = os.path.join(OUT, "wrong_keys.json")
    with open(path) as f:
        record = json.load(f)
    for name, case in record["files"].items():
        case["mindspore"] = outcome(lambda name=name, case=case: ms.load_checkpoint(
            os.path.join(OUT, name), dec_key=bytes.fromhex(case["key"]), dec_mode=case["mode"]))
    record["mindspore_version"] = ms.__version__
    with open(path, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mscore", action="store_true", help="step 2 (mscore's venv)")
    parser.add_argument("--verify", action="store_true", help="step 3 (MindSpore's venv)")
    parser.add_argument("--find-wrong-keys", action="store_true",
                        help="step 4 (mscore's venv, needs cryptography)")
    parser.add_argument("--wrong-keys", action="store_true", help="step 5 (MindSpore's venv)")
    args = parser.parse_args()
    if args.find_wrong_keys:
        find_wrong_keys()
    elif args.wrong_keys:
        mindspore_loads_with_wrong_keys()
    elif args.mscore:
        mscore_encrypts()
    elif args.verify:
        mindspore_verifies()
    else:
        mindspore_encrypts()
    print("done")


if __name__ == "__main__":
    sys.exit(main())
