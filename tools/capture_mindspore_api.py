"""Capture MindSpore's public training-side API into ``tools/data/mindspore-2.10-api.json``.

Run ONCE with the real MindSpore (never from mscore or its tests)::

    /tmp/ms/bin/python tools/capture_mindspore_api.py

(the oracle venv made with ``pip install mindspore==2.10.0 "numpy<2"``). For every module in
``MODULES`` it records the public names (``__all__`` where the module has one, else the
public objects the module itself defines), and for each name: its kind, the class or module
that defines it, MindSpore's base classes of interest, the platforms its docstring lists
("Supported Platforms"), and the call signature (a class's constructor) as a list of
parameters with their kinds and defaults. The public methods of ``mindspore.Tensor`` are
recorded the same way under the pseudo-module ``mindspore.Tensor`` (a C++-bound method has
no inspectable signature: its docstring's documented overloads are parsed instead).
``tools/api_coverage.py`` compares mscore with it.
"""
from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import re
import sys
import warnings

MODULES = (
    # 2.x training-side modules
    "mindspore", "mindspore.nn", "mindspore.ops", "mindspore.ops.operations",
    "mindspore.ops.composite", "mindspore.ops.functional", "mindspore.amp", "mindspore.train",
    "mindspore.train.callback", "mindspore.train.serialization", "mindspore.train.summary",
    "mindspore.train.metrics", "mindspore.nn.metrics", "mindspore.common.initializer",
    "mindspore.dataset", "mindspore.communication", "mindspore.boost", "mindspore.context",
    "mindspore.dataset.transforms", "mindspore.dataset.vision", "mindspore.dataset.text",
    # paths of the 1.x documentation pages (the seeds) and other spellings users write
    "mindspore.train.model", "mindspore.train.loss_scale_manager",
    "mindspore.train.dataset_helper", "mindspore.train.amp",
    "mindspore.train.summary.summary_record", "mindspore.common.api",
    "mindspore.common.dtype", "mindspore.common.tensor", "mindspore.common.parameter",
    "mindspore.nn.optim", "mindspore.nn.wrap", "mindspore.nn.loss",
    "mindspore.nn.learning_rate_schedule", "mindspore.nn.dynamic_lr",
    # the NumPy-style and PyTorch-style namespaces
    "mindspore.numpy", "mindspore.mint", "mindspore.mint.nn", "mindspore.mint.nn.functional",
    "mindspore.mint.optim", "mindspore.mint.linalg", "mindspore.mint.special",
    "mindspore.mint.distributed",
)

# Not a module: the public methods and properties of ``mindspore.Tensor``, recorded under
# this name (``tensor_api``).
TENSOR = "mindspore.Tensor"

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                   "mindspore-2.10-api.json")
_PLATFORMS = re.compile(r"Supported Platforms:\s*\n?\s*((?:``\w+``\s*)+)")


# Modules whose users also reach names outside ``__all__`` (``ms.grad``, ``ms.vjp``,
# ``ms.float``): every public attribute that MindSpore itself defines counts.
WHOLE_NAMESPACE = ("mindspore",)

# Public names a module offers beyond its ``__all__``: ``mindspore.mint``'s documented
# functions that its ``__all__`` leaves out (its other extra attributes are imports of
# MindSpore's internals: ``constexpr``, ``*_ext``, ``*_impl``, ``jit_*`` ...).
BEYOND_ALL = {"mindspore.mint": ("addcmul", "clip", "equal", "fix", "ge", "item", "linspace",
                                 "trunc", "unique")}

# Packages without ``__all__`` whose users write the names their submodules define
# (``vision.Resize`` is ``mindspore.dataset.vision.transforms.Resize``).
PACKAGE_REEXPORTS = ("mindspore.dataset.transforms", "mindspore.dataset.vision",
                     "mindspore.dataset.text")


def _from_mindspore(value):
    origin = getattr(value, "__name__", "") if inspect.ismodule(value) else \
        getattr(value, "__module__", None) or type(value).__module__
    return isinstance(origin, str) and origin.startswith("mindspore")


def public_names(mod):
    """``__all__`` (deduplicated, in order) plus the public submodules; without ``__all__``
    the public objects whose ``__module__`` is this module; for ``WHOLE_NAMESPACE`` modules
    every public attribute that comes from MindSpore."""
    if hasattr(mod, "__all__"):
        names = list(dict.fromkeys(n for n in mod.__all__ if hasattr(mod, n)
                                   and not n.startswith("_")))
    else:
        inside = (mod.__name__,)
        if mod.__name__ in PACKAGE_REEXPORTS:
            inside = (mod.__name__, mod.__name__ + ".")
        names = [n for n, v in vars(mod).items() if not n.startswith("_")
                 and not inspect.ismodule(v)
                 and str(getattr(v, "__module__", None)).startswith(inside)
                 and (str(getattr(v, "__module__", None)) == mod.__name__
                      or mod.__name__ in PACKAGE_REEXPORTS)]
    names += [n for n in BEYOND_ALL.get(mod.__name__, ()) if n not in names]
    if mod.__name__ in WHOLE_NAMESPACE:
        names += sorted(n for n, v in vars(mod).items() if not n.startswith("_")
                        and n not in names and _from_mindspore(v))
    for n, v in vars(mod).items():
        if not n.startswith("_") and inspect.ismodule(v) and n not in names and \
                v.__name__.startswith(mod.__name__ + "."):
            names.append(n)
    return names


def encode_default(value):
    """A JSON-able description of a default value: literals as ``value``, others by repr."""
    if value is inspect.Parameter.empty:
        return None
    if value is None or isinstance(value, (bool, int, str)):
        return {"value": value}
    if isinstance(value, float):
        return {"value": value} if math.isfinite(value) else {"repr": repr(value)}
    if isinstance(value, (tuple, list)) and all(
            v is None or isinstance(v, (bool, int, str)) or
            (isinstance(v, float) and math.isfinite(v)) for v in value):
        return {"value": list(value), "sequence": type(value).__name__}
    # an object's address changes from run to run
    return {"repr": re.sub(r" at 0x[0-9a-f]+", "", repr(value)), "type": type(value).__name__}


# Short spellings of inspect's parameter kinds (the file stays small and readable).
KIND_CODES = {"POSITIONAL_ONLY": "po", "POSITIONAL_OR_KEYWORD": "pk", "VAR_POSITIONAL": "var",
              "KEYWORD_ONLY": "kw", "VAR_KEYWORD": "varkw"}


def signature_of(obj):
    """Parameters as ``[name, kind code, default]`` (``KIND_CODES``), or None."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [[p.name, KIND_CODES[p.kind.name], encode_default(p.default)]
            for p in sig.parameters.values()]


def class_signature(cls):
    """The constructor's parameters: ``__init__``'s when the class-level signature is only
    ``(*args, **kwargs)``-style (a ``__new__`` that forwards everything)."""
    params = signature_of(cls)
    init = vars(cls).get("__init__") or getattr(cls, "__init__", None)
    if params is not None and any(p[1] in ("var", "varkw") for p in params) and \
            inspect.isfunction(init):
        own = signature_of(init)
        if own and not any(p[1] in ("var", "varkw") for p in own):
            return own[1:]
    return params


def platforms_of(obj):
    doc = getattr(obj, "__doc__", None) or ""
    m = _PLATFORMS.search(doc)
    return re.findall(r"``(\w+)``", m.group(1)) if m else None


def describe(obj):
    """The record of one public object."""
    import mindspore
    from mindspore.common.dtype import Type
    from mindspore.nn import Cell
    from mindspore.ops.primitive import Primitive
    rec = {}
    if inspect.ismodule(obj):
        rec["kind"] = "module"
        rec["target"] = obj.__name__
        return rec
    if inspect.isclass(obj):
        rec["kind"] = "class"
        rec["defined_in"] = obj.__module__
        bases = []
        for base, label in ((Primitive, "Primitive"), (Cell, "Cell"),
                            (BaseException, "Exception")):
            if issubclass(obj, base):
                bases.append(label)
        if bases:
            rec["bases"] = bases
        rec["signature"] = class_signature(obj)
        if "Primitive" in bases and "__call__" in vars(obj):
            # the inputs of an instance: P.ReduceSum(keep_dims)(x, axis)
            call = signature_of(obj.__call__)
            rec["call_signature"] = call[1:] if call else call
    elif isinstance(obj, Type):
        rec["kind"] = "dtype"
        rec["repr"] = str(obj)
        return rec
    elif inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.ismethod(obj):
        rec["kind"] = "function"
        rec["defined_in"] = getattr(obj, "__module__", None)
        rec["signature"] = signature_of(obj)
    elif isinstance(obj, (bool, int, float, str)) or obj is None:
        rec["kind"] = "constant"
        rec["value"] = obj if not isinstance(obj, float) or math.isfinite(obj) else repr(obj)
        return rec
    else:
        cls = type(obj)
        rec["kind"] = "instance"
        rec["instance_of"] = f"{cls.__module__}.{cls.__qualname__}"
        rec["defined_in"] = cls.__module__
        if isinstance(obj, Primitive):
            rec["bases"] = ["Primitive"]
        if callable(obj):
            rec["signature"] = signature_of(obj)
    plats = platforms_of(obj)
    if plats is not None:
        rec["platforms"] = plats
    del mindspore
    return rec


_DOC_SIGNATURE = r"^\s*(?:\.\. method:: Tensor\.)?{name}(\(.*\))"


def parse_signature(text):
    """``[name, kind code, default]`` parameters of a signature written as text
    (``"(dim=None, keepdim=False, *, dtype=None)"``), or None when it does not parse."""
    text = text.strip()
    depth = 0
    for i, ch in enumerate(text):  # cut after the closing parenthesis (``-> Tensor`` & co.)
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            text = text[:i + 1]
            break
    namespace = {}
    try:
        exec(f"def _f{text}: pass", {}, namespace)
    except Exception:
        return None
    return signature_of(namespace["_f"])


def tensor_overloads(name, method):
    """The call signatures of a C++-bound Tensor method, from its docstring: the first line
    ``name(...) -> Tensor`` and every ``.. method:: Tensor.name(...)`` overload."""
    pattern = re.compile(_DOC_SIGNATURE.format(name=re.escape(name)), re.M)
    found = []
    for m in pattern.finditer(getattr(method, "__doc__", None) or ""):
        params = parse_signature(m.group(1))
        if params is not None and params not in found:
            found.append(params)
    return found


def describe_tensor_attribute(cls, name):
    """The record of one public name of ``Tensor``: ``kind`` method / property / attribute,
    and for a method its ``signature`` (``self`` left out; the first documented overload for
    a C++-bound one) and the other ``overloads``."""
    static = inspect.getattr_static(cls, name)
    if isinstance(static, property) or type(static).__name__ == "getset_descriptor":
        return {"kind": "property"}
    value = getattr(cls, name)
    if not callable(value):
        return {"kind": "attribute"}
    rec = {"kind": "method"}
    params = signature_of(value)
    if params is not None:
        if params and params[0][0] == "self":
            params = params[1:]
        rec["signature"] = params
        rec["defined_in"] = getattr(value, "__module__", None)
        return rec
    overloads = tensor_overloads(name, value)
    rec["signature"] = overloads[0] if overloads else None
    if len(overloads) > 1:
        rec["overloads"] = overloads[1:]
    return rec


def tensor_api():
    """``{name: record}`` for the public names of ``mindspore.Tensor``."""
    from mindspore import Tensor
    return {n: describe_tensor_attribute(Tensor, n) for n in dir(Tensor)
            if not n.startswith("_")}


def dumps_one_name_per_line(out):
    """JSON with one line per public name, so a new capture diffs name by name."""
    head = {k: v for k, v in out.items() if k != "modules"}
    lines = ["{"] + [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in sorted(head.items())]
    lines.append('"modules": {')
    mods = sorted(out["modules"].items())
    for i, (mod, names) in enumerate(mods):
        lines.append(f"{json.dumps(mod)}: {{")
        items = sorted(names.items())
        for j, (n, rec) in enumerate(items):
            comma = "," if j < len(items) - 1 else ""
            lines.append(f"{json.dumps(n)}: {json.dumps(rec, sort_keys=True)}{comma}")
        lines.append("}" + ("," if i < len(mods) - 1 else ""))
    lines += ["}", "}", ""]
    return "\n".join(lines)


def main():
    warnings.filterwarnings("ignore")
    import mindspore
    out = {
        "kind_codes": {v: k for k, v in KIND_CODES.items()},
        "mindspore_version": mindspore.__version__,
        "python": sys.version.split()[0],
        "made_by": "python tools/capture_mindspore_api.py",
        "made_in": "a virtual environment made with pip install mindspore==2.10.0 'numpy<2' "
                   "(CPU)",
        "modules": {},
    }
    for name in MODULES:
        mod = importlib.import_module(name)
        out["modules"][name] = {n: describe(getattr(mod, n)) for n in public_names(mod)}
    out["modules"][TENSOR] = tensor_api()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT + ".tmp", "w") as f:
        f.write(dumps_one_name_per_line(out))
    os.replace(OUT + ".tmp", OUT)
    total = sum(len(v) for v in out["modules"].values())
    print(f"wrote {OUT}: {len(out['modules'])} modules, {total} names")


if __name__ == "__main__":
    main()
