"""ckpt_to_safetensors / safetensors_to_ckpt and async_ckpt_thread_status against MindSpore
2.10's recorded behaviour (``tests/data/mindspore_convert.json``, made by
``tests/data/make_convert_oracle.py``)."""
import json
import os

import numpy as np
import pytest

import mscore as ms

pytest.importorskip("safetensors")

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                       "mindspore_convert.json")) as _f:
    ORACLE = json.load(_f)


def _tree(root):
    return {os.path.relpath(r, root): sorted(fs) for r, _, fs in sorted(os.walk(root)) if fs}


def test_conversions_match_mindspore(tmp_path, monkeypatch):
    ms.set_context(backend="numpy")
    monkeypatch.chdir(tmp_path)
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    obj = [{"name": "a.w", "data": ms.Tensor(w)}, {"name": "b", "data": ms.Tensor(np.int32(4))}]
    for path in ("d/rank_0/net-1_1.ckpt", "d/rank_1/net-1_1.ckpt", "d/rank_1/other.ckpt",
                 "single.ckpt"):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        ms.save_checkpoint(obj, path)
    os.makedirs("norank")
    ms.ckpt_to_safetensors("single.ckpt", name_map={"b": "bb"})
    loaded = ms.load_checkpoint("single.safetensors", format="safetensors")
    assert sorted(loaded) == ORACLE["single_names"]
    np.testing.assert_array_equal(loaded["a.w"].asnumpy(), w)
    assert int(loaded["bb"].asnumpy()) == 4 and loaded["bb"].dtype == ms.int32
    ms.ckpt_to_safetensors("d", save_path="out", file_name_regex="net")
    ms.safetensors_to_ckpt("single.safetensors", save_path="back")
    assert sorted(ms.load_checkpoint("back/single.ckpt")) == ORACLE["back_names"]
    assert _tree(".") == ORACLE["tree"]
    bad = {"missing path": dict(file_path="nope.ckpt"),
           "save_path with an extension": dict(file_path="single.ckpt", save_path="x.st"),
           "name_map a list": dict(file_path="single.ckpt", name_map=[1]),
           "wrong suffix": dict(file_path="single.safetensors"),
           "regex does not match": dict(file_path="single.ckpt", file_name_regex="zzz"),
           "folder without rank sub-folders": dict(file_path="norank")}
    for label, kwargs in bad.items():
        want = ORACLE["errors"][label]
        with pytest.raises(ValueError) as info:
            ms.ckpt_to_safetensors(**kwargs)
        assert want["error"] == "ValueError", label
        assert "ckpt_to_safetensors" in str(info.value), label
    assert _tree(".") == ORACLE["tree"]  # the failures wrote nothing


def test_async_ckpt_thread_status(tmp_path, monkeypatch):
    from mscore.train.serialization import _checkpoint
    ms.set_context(backend="numpy")
    release = __import__("threading").Event()
    real = _checkpoint._write_ckpt

    def slow(*args, **kwargs):
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(_checkpoint, "_write_ckpt", slow)
    assert ms.async_ckpt_thread_status() is False
    ms.save_checkpoint({"w": ms.Tensor(np.ones(2, np.float32))}, str(tmp_path / "w"),
                       async_save=True)
    assert ms.async_ckpt_thread_status() is True
    release.set()
    ms.train.serialization.wait_async_save()
    assert ms.async_ckpt_thread_status() is False
