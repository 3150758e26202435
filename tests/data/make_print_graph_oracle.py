"""Record what MindSpore 2.10's ``ops.Print`` writes from a compiled (``jit``) function into
``print_graph_oracle.json`` (read by tests/test_print_graph.py).

Run with the MindSpore oracle, from a folder outside the checkout:

    cd /tmp && /tmp/ms/bin/python /work/main/tests/data/make_print_graph_oracle.py

MindSpore's CPU kernel writes through C++'s stdout, so the script runs the cases in a child
process (``--emit``) and reads its whole stdout; each case's function first prints a marker
line through ``Print`` itself, so that the markers keep their place in that stream. The
functions are written to a module file first (MindSpore's ``jit`` parses their source).
Each case: its Print arguments (text, Python numbers, or tensors given as dtype, shape and
values) and the text its runs printed; a case with ``runs`` > 1 is run again with every tensor
doubled (the values print on each run).
"""
import importlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "print_graph_oracle.json")


def t(dtype, values, shape=None):
    arr = np.asarray(values, dtype=dtype)
    if shape is not None:
        arr = arr.reshape(shape)
    return {"dtype": dtype, "shape": list(arr.shape),
            "values": arr.astype(np.float64).reshape(-1).tolist()}


def cases():
    """name -> (Print arguments, runs)."""
    ar = np.arange
    return {
        "mixed": (["x is:", t("float32", [1.0, 2.0]), "y:", t("int32", [[1, 2], [3, 4]]), 3,
                   2.5, True], 2),
        "constants": ([1 / 3, 1e-10, 1234567.0, -7, False, "s"], 1),
        "float32": ([t("float32", [0.1, -1.5, 1e-10, 123456.0])], 1),
        "float64_2d": ([t("float64", [[0.5, 1.0], [-2.0, 3.25]])], 1),
        "float16": ([t("float16", [1.0, 2.0, -0.5])], 1),
        "bool": ([t("bool", [True, False])], 1),
        "bool_all_true": ([t("bool", [True, True])], 1),
        "int64": ([t("int64", [-3, 4, 100000])], 1),
        "uint8": ([t("uint8", [1, 2])], 1),
        "int8": ([t("int8", [-1, 2])], 1),
        "nan_inf": ([t("float32", [np.nan, np.inf, -np.inf])], 1),
        "large_float": ([t("float32", [1e20, 1.0])], 1),
        "scalars": ([t("float32", -0.25), t("float32", 1234567.0), t("float64", 1 / 3),
                     t("bool", True), t("bool", False), t("int32", -12), t("float16", 2.5),
                     t("int64", 7)], 1),
        "3d": ([t("float32", ar(24), (2, 3, 4))], 1),
        "row_of_6": ([t("float32", ar(6), (1, 6))], 1),
        "rows_7x2": ([t("int32", ar(14), (7, 2))], 1),
        "rows_3x8": ([t("int32", ar(24), (3, 8))], 1),
        "summarised_2d": ([t("int32", ar(2500), (50, 50))], 1),
        "summarised_3d": ([t("int32", ar(512), (8, 8, 8))], 1),
        "wide_rows": ([t("float32", ar(2002), (2, 1001))], 1),
        "vector_1000": ([t("int32", ar(1000))], 1),
        "vector_1001": ([t("int32", ar(1001))], 1),
        "int_line_24": ([t("int64", ar(24))], 1),
        "int_line_25": ([t("int64", ar(25))], 1),
        "float_line_12": ([t("float32", ar(12))], 1),
        "float_line_13": ([t("float32", ar(13))], 1),
        "float16_line_26": ([t("float16", ar(26))], 1),
        "bool_line_30": ([t("bool", ar(30) % 2 == 0)], 1),
    }


def _module_source(all_cases):
    lines = ["import mindspore as ms", "from mindspore import ops", ""]
    for k, (name, (args, _)) in enumerate(all_cases.items()):
        tensors = [a for a in args if isinstance(a, dict)]
        params = [f"t{i}" for i in range(len(tensors))] or ["t0"]
        it = iter(range(len(tensors)))
        printed = ", ".join(f"t{next(it)}" if isinstance(a, dict) else repr(a) for a in args)
        lines += ["@ms.jit", f"def case_{k}({', '.join(params)}):",
                  f"    ops.Print()('<<{name}>>')", f"    ops.Print()({printed})",
                  "    return t0", ""]
    return "\n".join(lines)


def emit():
    import mindspore as ms
    all_cases = cases()
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "print_cases.py")
    with open(path, "w") as f:
        f.write(_module_source(all_cases))
    sys.path.insert(0, folder)   # MindSpore's parser imports the module by its name
    module = importlib.import_module("print_cases")
    for k, (args, runs) in enumerate(all_cases.values()):
        tensors = [np.asarray(a["values"], a["dtype"]).reshape(a["shape"])
                   for a in args if isinstance(a, dict)] or [np.zeros(1, np.float32)]
        for run in range(runs):
            run_tensors = [x if run == 0 else (x * (run + 1)).astype(x.dtype) for x in tensors]
            getattr(module, f"case_{k}")(*[ms.Tensor(x) for x in run_tensors])
    ms.runtime.synchronize()


def main():
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--emit"],
                          capture_output=True, text=True, timeout=600, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    import mindspore as ms
    out = proc.stdout
    record = {"mindspore": ms.__version__, "cases": {}}
    names = list(cases())
    for i, (name, (args, runs)) in enumerate(cases().items()):
        marker = f"<<{name}>>\n"
        start = out.index(marker) + len(marker)
        nxt = out.find(f"<<{names[i + 1]}>>\n") if i + 1 < len(names) else len(out)
        text = out[start:nxt].replace(marker, "")
        record["cases"][name] = {"args": args, "runs": runs, "stdout": text}
    with open(OUT, "w") as f:
        json.dump(record, f, indent=1)
    print(f"wrote {OUT} ({len(names)} cases)")


if __name__ == "__main__":
    emit() if "--emit" in sys.argv else main()
