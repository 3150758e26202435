"""Record MindSpore 2.10's ckpt_to_safetensors / safetensors_to_ckpt behaviour into
``mindspore_convert.json``. Run from the repository root with MindSpore's environment::

    /tmp/ms/bin/python tests/data/make_convert_oracle.py

It converts a single file (with ``name_map``) and a folder of ``rank_*`` sub-folders (with
``file_name_regex`` and ``save_path``), lists the files written and the names loaded back, and
records the exception type and message of each bad call.
"""
import json
import os
import shutil
import sys
import tempfile

import mindspore as ms
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mindspore_convert.json")


def outcome(fn):
    try:
        fn()
    except BaseException as exc:
        return {"error": type(exc).__name__, "message": str(exc).split("\n")[0][:200]}
    return "ok"


def tree(root):
    return {os.path.relpath(r, root): sorted(fs) for r, _, fs in sorted(os.walk(root)) if fs}


def main():
    tmp = tempfile.mkdtemp()
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        obj = [{"name": "a.w", "data": ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))},
               {"name": "b", "data": ms.Tensor(np.int32(4))}]
        for path in ("d/rank_0/net-1_1.ckpt", "d/rank_1/net-1_1.ckpt", "d/rank_1/other.ckpt",
                     "single.ckpt"):
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            ms.save_checkpoint(obj, path)
        os.makedirs("norank", exist_ok=True)
        rec = {"mindspore_version": ms.__version__}
        rec["single"] = outcome(lambda: ms.ckpt_to_safetensors("single.ckpt",
                                                               name_map={"b": "bb"}))
        rec["single_names"] = sorted(ms.load_checkpoint("single.safetensors",
                                                        format="safetensors"))
        rec["folder"] = outcome(lambda: ms.ckpt_to_safetensors("d", save_path="out",
                                                               file_name_regex="net"))
        rec["back"] = outcome(lambda: ms.safetensors_to_ckpt("single.safetensors",
                                                             save_path="back"))
        rec["back_names"] = sorted(ms.load_checkpoint("back/single.ckpt"))
        rec["tree"] = tree(".")
        rec["errors"] = {
            "missing path": outcome(lambda: ms.ckpt_to_safetensors("nope.ckpt")),
            "save_path with an extension": outcome(lambda: ms.ckpt_to_safetensors(
                "single.ckpt", save_path="x.st")),
            "name_map a list": outcome(lambda: ms.ckpt_to_safetensors("single.ckpt",
                                                                      name_map=[1])),
            "wrong suffix": outcome(lambda: ms.ckpt_to_safetensors("single.safetensors")),
            "regex does not match": outcome(lambda: ms.ckpt_to_safetensors(
                "single.ckpt", file_name_regex="zzz")),
            "folder without rank sub-folders": outcome(lambda: ms.ckpt_to_safetensors(
                "norank")),
        }
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)
    with open(OUT, "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    sys.exit(main())
