"""MindSpore 2.10's public training-side API against mscore, name by name.

The reference is ``tools/data/mindspore-2.10-api.json`` (captured once from the real package
by ``tools/capture_mindspore_api.py``); mscore is imported live, so the table follows the
code as other work lands. Usage (from the repository root, mscore importable)::

    python tools/api_coverage.py              # summary per module
    python tools/api_coverage.py --write      # regenerate docs/api-coverage.md
    python tools/api_coverage.py --module mindspore.ops --status missing   # list names
    python tools/api_coverage.py --json       # every result as JSON

Every MindSpore name gets one status:

- ``match``: mscore has it, and (for functions and classes) every call MindSpore's signature
  accepts binds the same way in mscore's (see :func:`compare_params`);
- ``mismatch``: mscore has it with a different signature (the note says how);
- ``planned``: missing, and another piece of work is to add it (the note names it);
- ``absent``: missing on purpose, with the reason (``tools/api_coverage_rules.py``);
- ``missing``: missing with no reason yet — the gaps to close.

For ``mindspore.ops``, ``.operations``, ``.functional`` and ``.composite`` only the
training-side subset (``rules.TRAINING_OPS``) is expected; the rest is listed by category.
"""
from __future__ import annotations

import argparse
import enum
import importlib
import inspect
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REFERENCE = os.path.join(HERE, "data", "mindspore-2.10-api.json")
DOC = os.path.join(ROOT, "docs", "api-coverage.md")

if HERE not in sys.path:
    sys.path.insert(0, HERE)
import api_coverage_rules as rules  # noqa: E402

STATUSES = ("match", "mismatch", "planned", "absent", "missing")
_MISSING = object()
KIND_CODES = {inspect.Parameter.POSITIONAL_ONLY: "po",
              inspect.Parameter.POSITIONAL_OR_KEYWORD: "pk",
              inspect.Parameter.VAR_POSITIONAL: "var",
              inspect.Parameter.KEYWORD_ONLY: "kw",
              inspect.Parameter.VAR_KEYWORD: "varkw"}


def load_reference(path=REFERENCE):
    """The captured reference: ``{"modules": {module: {name: record}}, ...}``."""
    with open(path) as f:
        return json.load(f)


def mscore_module_name(ms_module):
    """``mindspore.train.callback`` -> ``mscore.train.callback``."""
    return "mscore" + ms_module[len("mindspore"):]


TENSOR = "mindspore.Tensor"  # the pseudo-module of Tensor's public methods and properties


def resolve_tensor_attribute(name):
    """mscore's ``Tensor.name`` (the function of a method, unbound), or ``_MISSING``."""
    tensor_cls = importlib.import_module("mscore").Tensor
    for klass in tensor_cls.__mro__:
        if name in vars(klass):
            value = vars(klass)[name]
            return getattr(value, "__func__", value), None
    return _MISSING, None


def resolve(ms_module, name, kind=None):
    """mscore's object for MindSpore's ``ms_module.name``, or ``_MISSING`` (with the reason
    the lookup failed when it was not a plain absence). A submodule must be importable
    (``from mscore.x.y import z`` works), not only an attribute."""
    if ms_module == TENSOR:
        return resolve_tensor_attribute(name)
    if kind == "module":
        try:
            return importlib.import_module(f"{mscore_module_name(ms_module)}.{name}"), None
        except ModuleNotFoundError:
            pass
        except Exception as exc:
            return _MISSING, f"import failed: {type(exc).__name__}: {exc}"
    try:
        mod = importlib.import_module(mscore_module_name(ms_module))
    except ModuleNotFoundError:
        return _MISSING, None
    except Exception as exc:  # an import that breaks is a finding, not a crash of the tool
        return _MISSING, f"import failed: {type(exc).__name__}: {exc}"
    try:
        return getattr(mod, name), None
    except AttributeError:
        return _MISSING, None
    except Exception as exc:
        return _MISSING, f"lookup failed: {type(exc).__name__}: {exc}"


# -- signatures -----------------------------------------------------------------------------
def mscore_params(obj, call=False):
    """``[name, kind code, default-or-_MISSING]`` of mscore's callable (a class: its
    constructor; ``call=True``: the inputs of a Primitive instance), or None."""
    if call:
        sig_of = getattr(importlib.import_module("mscore.ops.primitive_base"), "call_signature",
                         None)
        if sig_of is None:
            return None
        sig = sig_of(obj)
    else:
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return None
    if sig is None:
        return None
    return [[p.name, KIND_CODES[p.kind],
             _MISSING if p.default is inspect.Parameter.empty else p.default]
            for p in sig.parameters.values()]


def _same_default(ref, value):
    """True when mscore's default ``value`` equals MindSpore's recorded default ``ref``
    (literals exactly, tuples and lists alike; dtypes by name; other objects are not
    compared)."""
    if "value" in ref:
        want = ref["value"]
        if isinstance(value, (tuple, list)) and isinstance(want, list):
            return list(value) == want
        if isinstance(value, bool) or isinstance(want, bool):
            return type(value) is type(want) and value == want
        if isinstance(value, enum.IntEnum):  # signal.SIGTERM is recorded as 15
            value = int(value)
        elif isinstance(value, enum.Enum) and isinstance(value, str):  # Shuffle.GLOBAL: 'global'
            value = value.value
        return type(value) in (int, float, str, type(None)) and value == want
    text = ref.get("repr", "")
    if text.startswith("mindspore."):
        return str(value).rsplit(".", 1)[-1].lower() == text.rsplit(".", 1)[-1].lower()
    return True


def compare_params(ref, ours):
    """Differences that make a call MindSpore accepts fail or bind differently in mscore:
    a MindSpore parameter absent (and no ``*args``/``**kwargs`` to take it), at another
    position, of another kind, required where MindSpore has a default, or with another
    literal default; a required parameter MindSpore does not have. Extra optional
    parameters and defaults where MindSpore requires a value are compatible."""
    if ours is None:
        return ["signature not inspectable"]
    if ref and all(p[1] in ("var", "varkw") for p in ref):
        return []  # MindSpore's own signature is opaque (*args: an overload dispatcher)
    matched = set()
    problems = []
    our_by_name = {p[0]: (i, p) for i, p in enumerate(ours)}
    our_var = any(p[1] == "var" for p in ours)
    our_varkw = any(p[1] == "varkw" for p in ours)
    positional = [(j, p) for j, p in enumerate(ours) if p[1] in ("po", "pk")]
    for i, (name, kind, default) in enumerate(ref):
        if kind in ("var", "varkw"):
            if not any(p[1] == kind for p in ours):
                problems.append(f"no {'*' if kind == 'var' else '**'}{name}")
            continue
        ref_pos = sum(1 for p in ref[:i] if p[1] in ("po", "pk"))
        hit = our_by_name.get(name)
        if hit is None and kind == "po" and ref_pos < len(positional):
            # positional-only: matched by position, the name is not part of a call
            hit = positional[ref_pos]
        if hit is None:
            if not ((kind in ("po", "pk") and our_var) or (kind in ("pk", "kw") and our_varkw)):
                problems.append(f"no parameter {name!r}")
            continue
        j, (_, our_kind, our_default) = hit
        matched.add(j)
        if kind in ("po", "pk"):
            our_pos = sum(1 for p in ours[:j] if p[1] in ("po", "pk"))
            if our_kind not in ("po", "pk") or ref_pos != our_pos:
                problems.append(f"{name!r} is positional #{ref_pos} in MindSpore")
            elif kind == "pk" and our_kind == "po":
                problems.append(f"{name!r} cannot be passed by keyword")
        elif our_kind not in ("kw", "pk"):
            problems.append(f"{name!r} is keyword-only in MindSpore")
        if default is not None:
            if our_default is _MISSING:
                problems.append(f"{name!r} is required (MindSpore default "
                                f"{_show(default)})")
            elif not _same_default(default, our_default):
                problems.append(f"{name!r} default {our_default!r} (MindSpore "
                                f"{_show(default)})")
    for j, (name, kind, default) in enumerate(ours):
        if j not in matched and default is _MISSING and kind in ("po", "pk", "kw"):
            problems.append(f"extra required parameter {name!r}")
    return problems


def _show(ref):
    return repr(ref["value"]) if "value" in ref else ref.get("repr", "?")


# -- classification --------------------------------------------------------------------------
def scope_of(ms_module, name, rec):
    """``("training", None)`` or ``("outside", category)`` for a name of the ops modules
    outside the training-side subset."""
    if ms_module in rules.OPS_MODULES and name not in rules.TRAINING_OPS \
            and rec.get("kind") != "module":
        return "outside", rules.ops_category(name, rec)
    return "training", None


def check_name(ms_module, name, rec):
    """One result: ``{"module", "name", "kind", "status", "note", "scope"}``."""
    obj, error = resolve(ms_module, name, rec.get("kind"))
    scope, category = scope_of(ms_module, name, rec)
    result = {"module": ms_module, "name": name, "kind": rec.get("kind"), "scope": scope}
    if obj is not _MISSING:
        problems = value_problems(rec, obj)
        if rec.get("kind") in ("class", "function") and rec.get("signature") is not None:
            problems = compare_params(rec["signature"], mscore_params(obj))
        if rec.get("kind") == "method" and rec.get("signature") is not None:
            problems = method_problems(rec, obj)
        if rec.get("call_signature") is not None and inspect.isclass(obj):
            ours = mscore_params(obj, call=True)
            if ours is not None:
                problems += [f"inputs: {p}" for p in compare_params(
                    _positional_only(rec["call_signature"]), ours)]
        result["status"] = "mismatch" if problems else "match"
        result["note"] = "; ".join(problems)
        return result
    reason = rules.absent_reason(ms_module, name, rec)
    planned = rules.planned_by(ms_module, name)
    if planned:
        result.update(status="planned", note=planned)
    elif reason:
        result.update(status="absent", note=reason)
    elif category:
        result.update(status="absent", note=category)
    else:
        result.update(status="missing", note=error or "")
    return result


def method_problems(rec, function):
    """A Tensor method matches when one of MindSpore's documented overloads binds the same
    way in mscore's method (``self`` left out); otherwise the first overload's
    differences."""
    ours = mscore_params(function)
    if ours is not None and ours and ours[0][0] == "self":
        ours = ours[1:]
    first = None
    for overload in [rec["signature"]] + rec.get("overloads", []):
        problems = compare_params(overload, ours)
        if not problems:
            return []
        first = problems if first is None else first
    return first


def value_problems(rec, obj):
    """Constants must have MindSpore's value; dtypes its width and kind (MindSpore's
    generic ``Float``/``Int`` have no width and are not compared)."""
    if rec.get("kind") == "constant" and obj != rec.get("value"):
        return [f"value {obj!r} (MindSpore {rec.get('value')!r})"]
    if rec.get("kind") == "dtype":
        want = rec.get("repr", "").lower()
        have = getattr(obj, "name", None)
        if want in ("float", "int", "uint", "number") or want.endswith("_"):
            return []
        if have != want:
            return [f"dtype {have} (MindSpore {want})"]
    return []


def _positional_only(params):
    """A Primitive's inputs are passed positionally: compare positions, not names."""
    return [[n, "po" if k == "pk" else k, d] for n, k, d in params]


def check_all(reference):
    """Results for every recorded name, module by module, in the reference's order."""
    out = []
    for ms_module, names in reference["modules"].items():
        for name, rec in names.items():
            out.append(check_name(ms_module, name, rec))
    return out


def summarize(results):
    """Per module: counts of each status, and of training-side names."""
    table = {}
    for r in results:
        row = table.setdefault(r["module"], {s: 0 for s in STATUSES} | {"names": 0,
                                                                        "training": 0})
        row["names"] += 1
        row["training"] += r["scope"] == "training"
        row[r["status"]] += 1
    return table


def totals(table):
    out = {s: 0 for s in STATUSES} | {"names": 0, "training": 0}
    for row in table.values():
        for k in out:
            out[k] += row[k]
    return out


# -- the document -----------------------------------------------------------------------------
def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(reference, results):
    """docs/api-coverage.md as a string."""
    table = summarize(results)
    tot = totals(table)
    present = tot["match"] + tot["mismatch"]
    lines = [
        "# MindSpore API coverage",
        "",
        "<!-- Generated by `python tools/api_coverage.py --write`; do not edit by hand. -->",
        "",
        f"MindSpore {reference['mindspore_version']}'s public names in the training-side "
        f"modules (captured once with `{reference['made_by']}`, in "
        f"{reference.get('made_in', 'an environment with MindSpore')}, into "
        "`tools/data/mindspore-2.10-api.json`) against mscore as imported when this file "
        "was generated.",
        "",
        "Statuses: **match** — present, and every call MindSpore's signature accepts binds "
        "the same way (names, positions, kinds, literal defaults; extra optional parameters "
        "allowed); **mismatch** — present with another signature (the note says how); "
        "**planned** — missing, another piece of work adds it; **absent** — missing on "
        "purpose, with the reason; **missing** — not there yet, no reason.",
        "",
        f"Overall: {tot['names']} names, {present} present ({tot['match']} with a "
        f"matching signature, {tot['mismatch']} mismatching), {tot['planned']} planned, "
        f"{tot['absent']} absent with a reason, {tot['missing']} missing.",
        "",
        "| module | names | training-side | match | mismatch | planned | absent | missing |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mod, row in table.items():
        lines.append(f"| [`{mod}`](#{_anchor(mod)}) | {row['names']} | {row['training']} | "
                     f"{row['match']} | {row['mismatch']} | {row['planned']} | "
                     f"{row['absent']} | {row['missing']} |")
    lines.append(f"| **total** | {tot['names']} | {tot['training']} | {tot['match']} | "
                 f"{tot['mismatch']} | {tot['planned']} | {tot['absent']} | "
                 f"{tot['missing']} |")
    lines += ["", "`mindspore.Tensor` is not a module: its rows are the public methods and "
              "properties of MindSpore's `Tensor` (`x.add`, `x.swapaxes`, `x.add_` ...), "
              "compared with mscore's `Tensor`; a method matches when one of MindSpore's "
              "documented overloads binds the same way (a C++-bound method's overloads are "
              "parsed from its docstring).", ""]
    lines += ["The ops modules (`mindspore.ops`, `.operations`, `.functional`, "
              "`.composite`) count only their training-side subset (the operations training "
              "code uses; `tools/api_coverage_rules.py`, `TRAINING_OPS`) as expected; the "
              "rest is listed by category at the end of each of those sections.", ""]
    by_module = {}
    for r in results:
        by_module.setdefault(r["module"], []).append(r)
    for mod, rows in by_module.items():
        lines += [f"## {mod}", ""]
        training = [r for r in rows if r["scope"] == "training"]
        outside = [r for r in rows if r["scope"] == "outside"]
        if training:
            lines += _training_section(training)
        if outside:
            present = sorted(r["name"] for r in outside if r["status"] in ("match",
                                                                            "mismatch"))
            groups = {}
            for r in outside:
                if r["status"] not in ("match", "mismatch"):
                    groups.setdefault(r["note"], []).append(r["name"])
            lines += [f"Outside the training-side subset: {len(outside)} names, "
                      f"{len(present)} of them present anyway.", ""]
            for note, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
                lines += [f"- {note} ({len(names)}): "
                          + ", ".join(f"`{n}`" for n in sorted(names))]
            lines.append("")
    return "\n".join(lines) + "\n"


def _training_section(rows):
    """The actionable names (missing, mismatch, planned) as a table; the matching ones as
    one list; the absent ones grouped by reason."""
    lines = []
    order = {"missing": 0, "mismatch": 1, "planned": 2}
    table = sorted((r for r in rows if r["status"] in order),
                   key=lambda r: (order[r["status"]], r["name"]))
    if table:
        lines += ["| name | kind | status | note |", "|---|---|---|---|"]
        lines += [f"| `{r['name']}` | {r['kind']} | {r['status']} | {_cell(r['note'])} |"
                  for r in table]
        lines.append("")
    matching = sorted(r["name"] for r in rows if r["status"] == "match")
    if matching:
        lines += [f"Present with MindSpore's signature ({len(matching)}): "
                  + ", ".join(f"`{n}`" for n in matching), ""]
    absent = {}
    for r in rows:
        if r["status"] == "absent":
            absent.setdefault(r["note"], []).append(r["name"])
    if absent:
        lines.append("Absent on purpose:")
        lines += [f"- {note} ({len(names)}): " + ", ".join(f"`{n}`" for n in sorted(names))
                  for note, names in sorted(absent.items(), key=lambda kv: -len(kv[1]))]
        lines.append("")
    return lines


def _anchor(mod):
    return re.sub(r"[^a-z0-9 -]", "", mod.lower()).replace(" ", "-")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="regenerate docs/api-coverage.md")
    ap.add_argument("--json", action="store_true", help="print every result as JSON")
    ap.add_argument("--module", help="only this MindSpore module (e.g. mindspore.ops)")
    ap.add_argument("--status", choices=STATUSES, help="list the names with this status")
    args = ap.parse_args(argv)
    reference = load_reference()
    if args.module:
        if args.module not in reference["modules"]:
            ap.error(f"--module: {args.module!r} is not in the reference; recorded: "
                     f"{', '.join(reference['modules'])}")
        reference = dict(reference, modules={args.module: reference["modules"][args.module]})
    results = check_all(reference)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    if args.status:
        for r in results:
            if r["status"] == args.status:
                print(f"{r['module']}.{r['name']}: {r['note']}")
        return 0
    if args.write:
        text = render(reference, results)
        with open(DOC + ".tmp", "w") as f:
            f.write(text)
        os.replace(DOC + ".tmp", DOC)
        print(f"wrote {os.path.relpath(DOC, ROOT)}")
    table = summarize(results)
    width = max(len(m) for m in table)
    print(f"{'module':<{width}}  names  train  match  mism  plan  absent  missing")
    for mod, row in list(table.items()) + [("total", totals(table))]:
        print(f"{mod:<{width}}  {row['names']:>5}  {row['training']:>5}  {row['match']:>5}  "
              f"{row['mismatch']:>4}  {row['planned']:>4}  {row['absent']:>6}  "
              f"{row['missing']:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
