"""Record MindSpore 2.10's dataset worker processes (``python_multiprocessing``) into
``dataset_workers_oracle.json``.

Run with the real MindSpore (never imported by mscore or its tests):

    /tmp/ms/bin/python tests/data/make_dataset_workers_oracle.py             # every case
    /tmp/ms/bin/python tests/data/make_dataset_workers_oracle.py --only NAME  # some, merged

Each case is a snippet that sets ``result``; it runs in a fresh process (a case whose worker
dies must not take the others with it) with ``ds`` (``mindspore.dataset``), ``np``, ``os`` and
the PRELUDE's helpers bound, under a time limit. The JSON holds each snippet with what it
produced: the value, the exception type and message, or ``"hang"`` past the limit.
``tests/test_dataset_workers.py`` runs the same snippets with ``mscore.dataset`` bound to ``ds``
and compares (cases marked ``differs`` say why mscore deliberately does otherwise).
"""
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "dataset_workers_oracle.json")
LIMIT_S = 60

PRELUDE = r'''
MAIN = os.getpid()


def src(n=6):
    return ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.int64)}, shuffle=False)


def col(d, i=0):
    return [np.asarray(r[i]).tolist()
            for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]


def pid_of(x):
    return np.array(os.getpid(), np.int64)


def elsewhere(pids):
    """Whether every row was made outside the main process, and in how many processes."""
    return [all(p != MAIN for p in pids), len(set(pids))]


class Squares:
    def __getitem__(self, i):
        return (np.array(i * i, np.int64), np.array(os.getpid(), np.int64))

    def __len__(self):
        return 6


def batch_pid(x, info):
    return ([np.array(os.getpid(), np.int64) for _ in x],)
'''

CASES = {}


def case(name, code, differs=None):
    """``differs``: why mscore deliberately does something else (its test checks that)."""
    CASES[name] = {"code": code.strip("\n"), "differs": differs}


_MP = "python_multiprocessing=True"
# -- map ---------------------------------------------------------------------------------------
case("map_mp_values", f"result = col(src().map(lambda x: x * 3, {_MP}, num_parallel_workers=2))")
case("map_mp_in_workers",
     f"result = elsewhere(col(src().map(pid_of, {_MP}, num_parallel_workers=2)))")
case("map_mp_one_worker",
     f"result = elsewhere(col(src().map(pid_of, {_MP}, num_parallel_workers=1)))")
case("map_no_mp_in_main",
     "result = elsewhere(col(src().map(pid_of, num_parallel_workers=2)))")
case("map_mp_order", f"result = col(src(40).map(lambda x: x + 1, {_MP}, num_parallel_workers=2))")
case("map_mp_more_workers_than_cpus",
     f"result = col(src().map(lambda x: x, {_MP}, num_parallel_workers=os.cpu_count() + 1))",
     differs="mscore accepts more workers than CPUs (it checks num_parallel_workers >= 1)")
case("map_mp_two_epochs", f"""
d = src(4).map(lambda x: x * 2, {_MP}, num_parallel_workers=2)
it = d.create_tuple_iterator(output_numpy=True, num_epochs=2)
result = [[r[0].tolist() for r in it] for _ in range(2)]
""")
case("map_mp_raises", f"result = col(src().map(lambda x: 1 / 0, {_MP}, num_parallel_workers=2))")
case("map_mp_not_bool", "src().map(lambda x: x, python_multiprocessing=1)")
for _name, _value in [("none", "None"), ("minus_one", "-1"), ("zero", "0"), ("sixteen", "16"),
                      ("list", "[1, 2]"), ("list_minus_one", "[-1, -1]"), ("list_one", "[1]"),
                      ("list_three", "[1, 2, 3]"), ("minus_two", "-2"), ("float", "1.5"),
                      ("str", "'1'"), ("bool", "True"), ("too_big", "2 ** 31"),
                      ("list_float", "[1, 2.0]"), ("list_minus_two", "[1, -2]"),
                      ("tuple", "(1, 2)")]:
    case(f"map_max_rowsize_{_name}",
         f"result = col(src(3).map(lambda x: x + 1, {_MP}, num_parallel_workers=2, "
         f"max_rowsize={_value}))")
case("map_max_rowsize_without_mp", "result = col(src(3).map(lambda x: x + 1, max_rowsize=-2))")
case("map_max_rowsize_row_larger",
     f"result = [r.shape for r in [np.asarray(v) for v in col(src(2).map("
     f"lambda x: np.zeros(600000, np.float32) + x, {_MP}, num_parallel_workers=2, "
     f"max_rowsize=1))]]")
# -- what a map operation returns ----------------------------------------------------------------
case("map_returns_none", "result = col(src(3).map(lambda x: None, input_columns=['x']))")
_DICT = ("mscore columns hold arrays: a dict (which MindSpore 2.10 passes on as a Python "
         "object) is refused at once, naming the map and the column")
case("map_returns_dict", "result = col(src(3).map(lambda x: {'a': x}, input_columns=['x']))",
     differs=_DICT)
case("map_returns_none_mp",
     f"result = col(src(3).map(lambda x: None, {_MP}, num_parallel_workers=2))")
case("map_returns_dict_mp",
     f"result = col(src(3).map(lambda x: {{'a': x}}, {_MP}, num_parallel_workers=2))",
     differs=_DICT)
case("map_returns_object_array",
     "result = col(src(3).map(lambda x: np.array([object(), 1], dtype=object), "
     "input_columns=['x']))")
case("map_returns_object_array_mp",
     f"result = col(src(3).map(lambda x: np.array(['a', 'bc'], dtype=object), {_MP}, "
     f"num_parallel_workers=2))")
case("map_returns_tuple_with_none",
     "result = col(src(3).map(lambda x: (x, None), output_columns=['a', 'b']))")
# -- a worker that dies --------------------------------------------------------------------------
case("map_worker_exits", f"""
def die(x):
    if x == 3:
        os._exit(3)
    return x
result = col(src().map(die, {_MP}, num_parallel_workers=2))
""", differs="mscore names the map, the worker and its exit code")
case("map_worker_killed", f"""
import signal
def die(x):
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x
result = col(src().map(die, {_MP}, num_parallel_workers=2))
""", differs="mscore names the map, the worker and the signal")
# -- GeneratorDataset ----------------------------------------------------------------------------
case("generator_mp_in_workers",
     f"d = ds.GeneratorDataset(Squares(), ['v', 'p'], shuffle=False, num_parallel_workers=2, "
     f"{_MP})\nresult = [col(d), elsewhere(col(d, 1))]")
case("generator_default_mp_two_workers",
     "d = ds.GeneratorDataset(Squares(), ['v', 'p'], shuffle=False, num_parallel_workers=2)\n"
     "result = [col(d), elsewhere(col(d, 1))]")
case("generator_one_worker_in_main",
     f"d = ds.GeneratorDataset(Squares(), ['v', 'p'], shuffle=False, {_MP})\n"
     f"result = [col(d), elsewhere(col(d, 1))]")
case("generator_no_mp_in_main",
     "d = ds.GeneratorDataset(Squares(), ['v', 'p'], shuffle=False, num_parallel_workers=2, "
     "python_multiprocessing=False)\nresult = [col(d), elsewhere(col(d, 1))]")
case("generator_function_in_main", f"""
def gen():
    for i in range(4):
        yield np.array(i, np.int64), np.array(os.getpid(), np.int64)
d = ds.GeneratorDataset(gen, ['v', 'p'], num_parallel_workers=2, {_MP})
result = [col(d), elsewhere(col(d, 1))]
""")
case("generator_shuffled_mp", f"""
ds.config.set_seed(5)
d = ds.GeneratorDataset(Squares(), ['v', 'p'], shuffle=True, num_parallel_workers=2, {_MP})
result = col(d)
""")
case("generator_mp_not_bool", "ds.GeneratorDataset(Squares(), ['v', 'p'], "
     "python_multiprocessing=1)")
for _name, _value in [("minus_one", "-1"), ("list", "[1, 2]"), ("minus_two", "-2"),
                      ("list_one", "[1]"), ("float", "1.5")]:
    case(f"generator_max_rowsize_{_name}",
         f"d = ds.GeneratorDataset(Squares(), ['v', 'p'], shuffle=False, num_parallel_workers=2, "
         f"{_MP}, max_rowsize={_value})\nresult = col(d)")
case("generator_batch_sampler_mp", f"""
d = ds.GeneratorDataset(Squares(), ['v', 'p'], batch_sampler=[[0, 1], [2, 3]],
                        num_parallel_workers=2, {_MP})
result = [col(d), elsewhere([p for b in col(d, 1) for p in b])]
""")
# -- batch with per_batch_map --------------------------------------------------------------------
case("batch_mp_in_workers",
     f"d = src().batch(2, per_batch_map=batch_pid, input_columns=['x'], {_MP}, "
     f"num_parallel_workers=2)\nresult = elsewhere([p for b in col(d) for p in b])")
case("batch_mp_values",
     f"d = src().batch(2, per_batch_map=lambda x, info: ([a * 10 + info.get_batch_num() "
     f"for a in x],), input_columns=['x'], {_MP}, num_parallel_workers=2)\nresult = col(d)")
case("batch_mp_without_map", f"result = col(src().batch(2, {_MP}, num_parallel_workers=2))")
case("batch_mp_not_bool", "src().batch(2, python_multiprocessing=1)")
for _name, _value in [("minus_one", "-1"), ("list", "[1, 2]"), ("minus_two", "-2"),
                      ("float", "1.5")]:
    case(f"batch_max_rowsize_{_name}",
         f"d = src().batch(2, per_batch_map=lambda x, info: (x,), input_columns=['x'], {_MP}, "
         f"num_parallel_workers=2, max_rowsize={_value})\nresult = col(d)")


def to_json(value):
    import numpy as np
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [to_json(x) for x in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {"dict": {str(k): to_json(x) for k, x in value.items()}}
    return value


def run_one(name):
    """Run one case in this process and print its outcome as JSON."""
    import mindspore.dataset as ds
    import numpy as np
    ns = {"ds": ds, "np": np, "os": os}
    exec(PRELUDE, ns)
    try:
        exec(CASES[name]["code"], ns)
        out = {"result": to_json(ns.get("result"))}
    except Exception as exc:
        out = {"error": type(exc).__name__, "message": str(exc)}
    print("@@" + json.dumps(out), flush=True)
    os._exit(0)


def main(only=()):
    """Run every case (or the cases named in ``only``, merged into the existing file)."""
    import mindspore as ms
    if only:
        with open(OUT) as f:
            out = json.load(f)
        out["prelude"] = PRELUDE.strip("\n")
    else:
        out = {"generator": "/tmp/ms/bin/python tests/data/make_dataset_workers_oracle.py",
               "mindspore": ms.__version__, "prelude": PRELUDE.strip("\n"), "cases": {}}
    for name, spec in CASES.items():
        if only and name not in only:
            continue
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), name],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd="/tmp", start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=LIMIT_S)
            lines = [ln for ln in stdout.splitlines() if ln.startswith("@@")]
            got = json.loads(lines[-1][2:]) if lines else \
                {"crash": proc.returncode, "stderr": stderr[-400:]}
        except subprocess.TimeoutExpired:
            got = {"hang": LIMIT_S}
        finally:
            try:   # the case's own process group: its workers too
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
        print(name, got, file=sys.stderr, flush=True)
        out["cases"][name] = dict(spec, **got)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] in CASES:
        run_one(sys.argv[1])
    else:   # --only NAME ...: rerun those cases
        main(sys.argv[2:] if sys.argv[1:2] == ["--only"] else ())
