"""``Cell.shard(in_strategy, out_strategy=None, parameter_plan=None)``: the layout of a
Cell's inputs and of some of its parameters over the devices, in SEMI_AUTO_PARALLEL mode
(see :mod:`mscore.ops._sharding`; the compiler partitions the rest by propagation).

The inputs are laid out by a forward pre-hook on every call; the parameters named in
``parameter_plan`` (``{name: pieces per axis}``; MindSpore's ``"self."`` prefix is
accepted) are placed once, when ``shard`` is called. Outside SEMI_AUTO_PARALLEL mode the
strategies are recorded and change nothing, as in MindSpore.

In a job (``init()``), a cell that says how its strategies map onto its primitives
(``_primitive_strategies(in_strategy, parameter_plan)``: ``nn.Dense``) gets them as the
strategies of those primitives (effective in SEMI_AUTO_PARALLEL mode, as any primitive's);
other cells are refused across processes.
"""
from __future__ import annotations

from mscore.ops import _sharding
from mscore.parallel import Layout


def _check_plan(parameter_plan, owner):
    if parameter_plan is None:
        return {}
    if not isinstance(parameter_plan, dict):
        raise TypeError(f"For '{owner}.shard', 'parameter_plan' must be a dict or None, but "
                        f"got {type(parameter_plan).__name__}")
    plan = {}
    for name, parts in parameter_plan.items():
        if not isinstance(name, str):
            raise TypeError(f"For '{owner}.shard', the keys of 'parameter_plan' must be str, "
                            f"but got {type(name).__name__}")
        plan[name[5:] if name.startswith("self.") else name] = _sharding.check_strategy(
            (_entry(parts),), "parameter_plan", owner)[0]
    return plan


def _tuples(strategy):
    """A strategy given as lists (MindSpore's ``Cell.shard`` takes them) or Layouts as
    tuples of pieces per axis."""
    if isinstance(strategy, list):
        return tuple(tuple(e) if isinstance(e, list) else _entry(e) for e in strategy)
    if isinstance(strategy, tuple):
        return tuple(_entry(e) for e in strategy)
    return strategy


def _entry(entry):
    return entry.pieces_per_axis() if isinstance(entry, Layout) else entry


def _refuse_across_processes(owner):
    if _sharding.across_processes():
        raise NotImplementedError(
            f"For '{owner}.shard': a Cell's strategy across the processes of a job needs "
            f"MindSpore's strategy propagation to the operators inside, which mscore does not "
            f"implement (nn.Dense maps it onto its primitives); put the strategies on the "
            f"cell's primitives (ops.MatMul().shard(...), see docs/parallel.md)")


def shard_cell(cell, in_strategy, out_strategy=None, parameter_plan=None):
    """Record the strategies on ``cell`` and, in SEMI_AUTO_PARALLEL mode, lay its planned
    parameters out now and its inputs on every call. Returns ``cell``."""
    owner = type(cell).__name__
    in_strategy = _sharding.check_strategy(_tuples(in_strategy), "in_strategy", owner)
    if out_strategy is not None:
        out_strategy = _sharding.check_strategy(out_strategy, "out_strategy", owner)
    plan = _check_plan(parameter_plan, owner)
    cell.__dict__["_in_strategy"] = in_strategy
    cell.__dict__["_out_strategy"] = out_strategy
    to_primitives = getattr(cell, "_primitive_strategies", None)
    if to_primitives is not None and _sharding.in_job():
        for prim, strategy in to_primitives(in_strategy, plan):
            prim.shard(strategy)
        return cell
    if not _sharding.strategies_apply():
        return cell
    _refuse_across_processes(owner)
    params = {}
    for path, p in cell.parameters_and_names():
        params[path] = params[p.name] = p
    for name, parts in plan.items():
        p = params.get(name)
        if p is None:
            raise ValueError(f"For '{owner}.shard', 'parameter_plan' names {name!r}, which "
                             f"is not a parameter of the cell (its parameters: "
                             f"{sorted({q.name for q in params.values()})[:6]})")
        p._assign(_sharding.lay_out(p, parts, f"{owner}.shard")._data)
    handle = cell.__dict__.get("_shard_hook")
    if handle is not None:
        handle.remove()

    def lay_out_inputs(_, args):
        if _sharding.strategies_apply():
            _refuse_across_processes(owner)
            return _sharding.lay_out_inputs(args, in_strategy, f"{owner}.shard")
        return None
    cell.__dict__["_shard_hook"] = cell.register_forward_pre_hook(lay_out_inputs)
    return cell
