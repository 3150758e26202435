"""Who a rank's checkpoint is, written into the checkpoint and checked by every loader.

A checkpoint saved by one rank of a job whose state is sliced (the parallel optimizer's
states, model-parallel slices) or rank-local (gradients accumulated between updates) carries
one extra entry, ``mscore_shard_identity``: a str (MindSpore's checkpoint format stores str
entries; MindSpore loads it as one and ignores it when loading into a network) holding JSON:

* ``rank`` and ``size``: the rank that saved the file and the job's number of ranks;
* ``run``: the job's run id (:func:`mscore.communication.management.job_run_id`), the same
  on every rank of one job;
* ``sliced``: the names of the entries the file holds a slice of, and ``layout``: a digest
  of their layouts (dev_matrix, tensor_map, param_split_shape, field);
* ``partial``: ``{name: "mean" | "sum"}`` of the rank-local gradient sums of accumulation
  (each rank's own, reduced only at the update): merged by that reduction.

The loaders check it against what they are asked to build: ``load_distributed_checkpoint``
takes the files in rank order (``checkpoint_filenames[r]`` is rank ``r``'s, as in
MindSpore) and ``transform_checkpoints`` reads rank ``r``'s file from ``rank_r``; a file of
another rank, the same rank twice, another run, another number of ranks or another layout
is a ``ValueError`` naming the file. ``load_param_into_net`` refuses, in a job, a file of
another rank. Files without the entry (MindSpore's, older mscore's) load unchecked.
"""
from __future__ import annotations

import hashlib
import json

from mscore.communication import management
from mscore.nn.cell import Cell
from mscore.nn.wrap.accumulation import AccumulateGrads
from mscore.train.serialization._parallel import layout_fields, layouts_of_cell

IDENTITY_KEY = "mscore_shard_identity"
_FIELDS = ("rank", "size", "run", "sliced", "layout", "partial")


class ShardIdentity(str):
    """The identity entry as :func:`load_checkpoint` returns it: the str saved, which also
    remembers the file it came from (``source``) for the messages of later checks."""

    source = None


def rank_local_sums(cell):
    """``{name: "mean" | "sum"}`` of the accumulation sums in ``cell`` that hold this rank's
    own gradients (reduced across the job only at the update)."""
    out = {}
    for _, sub in cell.cells_and_names():
        reducer = getattr(sub, "grad_reducer", None)
        micro = getattr(sub, "micro_step", None)
        if not getattr(sub, "reducer_flag", False) or not isinstance(micro, AccumulateGrads):
            continue
        if micro.reducer is not None:
            continue   # reduce-scattered every call: slices of the job's sum (a layout)
        op = "mean" if getattr(reducer, "mean", False) else "sum"
        out.update({s.name: op for s in micro.sums})
    return out


def layout_digest(layouts, names, where):
    """A digest of the layouts of ``names`` (``{name: ParallelLayouts}``); ``ValueError``
    naming ``where`` when one has none."""
    canonical = []
    for name in sorted(names):
        if name not in layouts:
            raise ValueError(f"{where} has no layout for {name!r}, which the checkpoint holds "
                             f"a slice of")
        dev_matrix, tensor_map, split, field = layout_fields(layouts[name], name, where)
        canonical.append([name, dev_matrix, tensor_map, split, field])
    return hashlib.sha256(json.dumps(canonical).encode()).hexdigest()[:16]


def identity_value(rank, size, run, layouts, partial):
    """The identity entry's text for a file of ``rank`` of ``size`` in run ``run`` holding
    slices laid out by ``layouts`` (``{name: ParallelLayouts}``) and rank-local sums
    ``partial``."""
    return json.dumps({"rank": int(rank), "size": int(size), "run": str(run),
                       "sliced": sorted(layouts),
                       "layout": layout_digest(layouts, layouts, "the job's layouts"),
                       "partial": dict(sorted(partial.items()))}, sort_keys=True)


def identity_entries(save_obj):
    """``{IDENTITY_KEY: text}`` for ``save_checkpoint`` of ``save_obj`` in a job of several
    ranks when it holds sliced or rank-local state; ``{}`` otherwise."""
    if not isinstance(save_obj, Cell) or not management.is_initialized() or \
            management.get_group_size() == 1:
        return {}
    layouts, partial = layouts_of_cell(save_obj), rank_local_sums(save_obj)
    if not layouts and not partial:
        return {}
    return {IDENTITY_KEY: identity_value(management.get_rank(), management.get_group_size(),
                                         management.job_run_id(), layouts, partial)}


def read_identity(value, path):
    """The identity dict of an entry's value (None when ``value`` is None); ``ValueError``
    naming ``path`` when it is not one mscore wrote."""
    if value is None:
        return None
    try:
        identity = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        identity = None
    if not isinstance(identity, dict) or any(k not in identity for k in _FIELDS) or \
            not isinstance(identity["rank"], int) or not isinstance(identity["size"], int) \
            or not isinstance(identity["sliced"], list) or \
            not isinstance(identity["partial"], dict) or \
            any(op not in ("mean", "sum") for op in identity["partial"].values()):
        raise ValueError(f"{path!r}: the entry {IDENTITY_KEY!r} is not a shard identity "
                         f"mscore wrote (got {str(value)[:80]!r})")
    return identity


def split_identity(entries, path):
    """``(entries without the identity entry, identity dict or None)``."""
    entries = dict(entries)
    return entries, read_identity(entries.pop(IDENTITY_KEY, None), path)


def check_rank_files(identities, files, api, place):
    """The files of one job, one per rank in rank order: ``ValueError`` naming the file
    when one was saved by another rank (``place(r)`` says where rank ``r``'s file belongs),
    by another run or job size, or when only some carry an identity."""
    known = [(i, f) for i, (ident, f) in enumerate(zip(identities, files)) if ident]
    if not known:
        return
    if len(known) != len(files):
        lacking = next(f for ident, f in zip(identities, files) if not ident)
        raise ValueError(f"For '{api}', {lacking!r} carries no shard identity while "
                         f"{known[0][1]!r} does: they are not the files of one job")
    first, first_file = identities[0], files[0]
    for r, (ident, path) in enumerate(zip(identities, files)):
        if ident["run"] != first["run"]:
            raise ValueError(f"For '{api}', {path!r} was saved by another run "
                             f"({ident['run']}) than {first_file!r} ({first['run']}): the "
                             f"slices of two runs cannot be merged")
        if ident["size"] != len(files):
            raise ValueError(f"For '{api}', {path!r} was saved by rank {ident['rank']} of a "
                             f"job of {ident['size']} ranks, but {len(files)} files are "
                             f"given: every rank's file is needed, once")
        if ident["rank"] != r:
            raise ValueError(f"For '{api}', {path!r} holds the slices of rank "
                             f"{ident['rank']}, but it is given as rank {r}'s file; "
                             f"{place(ident['rank'])}")
        if ident["sliced"] != first["sliced"] or ident["layout"] != first["layout"] or \
                ident["partial"] != first["partial"]:
            raise ValueError(f"For '{api}', {path!r} and {first_file!r} record different "
                             f"layouts: they are not the files of one job")


def check_layouts(identity, strategy, path, strategy_name, api):
    """``ValueError`` naming both files when the strategy file does not lay out what the
    checkpoint ``path`` holds sliced, as it was saved."""
    if identity is None:
        return
    if strategy is None:
        if identity["sliced"]:
            raise ValueError(f"For '{api}', {path!r} holds slices of "
                             f"{identity['sliced'][:3]}... laid out by a strategy file; pass "
                             f"the training strategy file")
        return
    where = f"the strategy file {strategy_name!r}"
    try:
        digest = layout_digest(strategy, identity["sliced"], where)
    except ValueError as exc:
        raise ValueError(f"For '{api}', {exc} ({path!r})") from None
    if digest != identity["layout"]:
        raise ValueError(f"For '{api}', {where} lays out the slices of {path!r} differently "
                         f"than the job that saved it: it is another job's strategy file")


def check_into_net(net, parameter_dict):
    """In a job of several ranks, ``ValueError`` when ``parameter_dict`` (a rank's
    checkpoint) was saved by another rank or job size, or with other layouts, than ``net``
    holds here; outside a job, when it holds slices (they must be merged first)."""
    value = parameter_dict.get(IDENTITY_KEY)
    if not isinstance(value, str):
        return
    source = getattr(value, "source", None) or "parameter_dict"
    identity = read_identity(value, source)
    api = "load_param_into_net"
    layouts = layouts_of_cell(net)
    if not layouts and not rank_local_sums(net):
        if identity["sliced"] and any(n in identity["sliced"] for n in net.parameters_dict()):
            raise ValueError(f"For '{api}', {source!r} holds rank {identity['rank']}'s slices "
                             f"of a job of {identity['size']} ranks; merge the ranks' files "
                             f"with load_distributed_checkpoint (or transform_checkpoints)")
        return
    rank = management.get_rank() if management.is_initialized() else 0
    size = management.get_group_size() if management.is_initialized() else 1
    if identity["size"] != size or identity["rank"] != rank:
        raise ValueError(f"For '{api}', {source!r} was saved by rank {identity['rank']} of "
                         f"{identity['size']}, but this process is rank {rank} of {size}: "
                         f"each rank loads its own file (re-cut with transform_checkpoints "
                         f"for another number of ranks)")
    if sorted(layouts) != identity["sliced"] or \
            layout_digest(layouts, layouts, "the network") != identity["layout"]:
        raise ValueError(f"For '{api}', {source!r} holds slices laid out differently than "
                         f"this network's; re-cut it with transform_checkpoints")

