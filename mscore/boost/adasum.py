"""AdaSum, adaptive summation across data-parallel groups (MindSpore's boost O2).

The job's ``world`` processes form ``group_number`` *server groups* of ``device_number``
consecutive ranks. Inside a server group the gradients are all-reduced as usual and every
member takes the same optimizer step; across the groups the steps are combined: each rank's
weight change ``delta = old - new`` is gathered from the ranks at the same position in the
other groups and folded pairwise along a binary tree of groups (0 with 1, 2 with 3, then
the pairs, ...) by

    adasum(a, b) = (1 - a.b / (2 |a|^2)) a + (1 - a.b / (2 |b|^2)) b

per parameter tensor (a tensor without a dimension above 1 is averaged instead), and every
rank sets ``new = old - adasum(...)``. Parallel deltas are averaged, orthogonal ones added.
MindSpore computes the same tree by recursive halving with point-to-point sends on Ascend;
mscore gathers the deltas with the backend's ``all_gather`` (the same numbers, eagerly and
inside a compiled GRAPH_MODE step), so it runs wherever the backend has collectives.
"""
from __future__ import annotations

import math
import numbers

from mscore.common.tensor import Tensor
from mscore.communication import management
from mscore.nn.cell import Cell
from mscore.ops import functional as F

__all__ = ["AdaSum"]

_EPS = 1e-12


def _check_int(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For 'AdaSum', '{name}' must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"For 'AdaSum', '{name}' must be >= {minimum}, got {value}")
    return int(value)


def adasum_group_name(position):
    """The name of the group of ranks at ``position`` within their server groups."""
    return f"adasum_{position}"


def server_group_name(index):
    """The name of server group ``index``."""
    return f"adasum_server_{index}"


def create_groups(device_number, group_number):
    """Create the AdaSum groups (every position across the server groups) and the server
    groups, on every process in the same order."""
    for position in range(device_number):
        ranks = [g * device_number + position for g in range(group_number)]
        management.create_group(adasum_group_name(position), ranks)
    if device_number > 1:
        for g in range(group_number):
            ranks = list(range(g * device_number, (g + 1) * device_number))
            management.create_group(server_group_name(g), ranks)


def _pair(a, b, divisible, level):
    """AdaSum of two flat deltas of one tensor at tree ``level``."""
    if not divisible:
        return F.div(F.add(a, b), 2.0)
    eps = _EPS * 2 ** (level + 1)     # MindSpore adds eps on each node of the level
    dot = F.add(F.sum(F.mul(a, b)), eps)
    norm_a = F.add(F.sum(F.mul(a, a)), eps)
    norm_b = F.add(F.sum(F.mul(b, b)), eps)
    coef_a = F.sub(1.0, F.div(dot, F.mul(norm_a, 2.0)))
    coef_b = F.sub(1.0, F.div(dot, F.mul(norm_b, 2.0)))
    return F.add(F.mul(coef_a, a), F.mul(coef_b, b))


def combine(rows, divisible):
    """Fold the per-group flat deltas ``rows`` (group order) along the binary tree."""
    level = 0
    while len(rows) > 1:
        rows = [_pair(rows[i], rows[i + 1], divisible, level) for i in range(0, len(rows), 2)]
        level += 1
    return rows[0]


class AdaSum(Cell):
    r"""Adaptive summation of weight changes across the server groups of a job.

    ``AdaSum(rank, device_number, group_number, parameter_tuple)``: ``rank`` is this
    process's global rank, ``device_number`` the size of a server group, ``group_number``
    (a power of 2) the number of server groups; ``parameter_tuple`` the parameters it
    combines. Needs ``mscore.communication.init()`` (``RuntimeError`` otherwise, as in
    MindSpore). ``cell(delta_weights, parameters, old_parameters)`` sets each parameter to
    ``old - adasum(delta)`` over the groups and returns the new values.
    """

    def __init__(self, rank, device_number, group_number, parameter_tuple):
        super().__init__(auto_prefix=False)
        self.rank = _check_int(rank, "rank", 0)
        self.device_number = _check_int(device_number, "device_number", 1)
        self.group_number = _check_int(group_number, "group_number", 1)
        if self.group_number & (self.group_number - 1):
            raise ValueError(f"For 'AdaSum', 'group_number' must be a power of 2, got "
                             f"{group_number}")
        if not management.is_initialized():
            raise RuntimeError(management._NOT_INITED)
        world = management.get_group_size()
        if self.device_number * self.group_number > world:
            raise ValueError(f"For 'AdaSum', device_number * group_number "
                             f"({self.device_number} * {self.group_number}) exceeds the "
                             f"job's {world} processes")
        object.__setattr__(self, "parameter_tuple", tuple(parameter_tuple))
        self.calc_times = int(math.log2(self.group_number))
        create_groups(self.device_number, self.group_number)
        self.group = adasum_group_name(self.rank % self.device_number)

    def construct(self, delta_weights, parameters, old_parameters):
        combined = self.combine(delta_weights)
        out = []
        for param, old, delta in zip(parameters, old_parameters, combined):
            new = F.sub(old, F.reshape(F.cast(delta, old.dtype), old.shape))
            param.assign_value(new)
            out.append(new)
        return tuple(out)

    def combine(self, delta_weights):
        """The AdaSum of ``delta_weights`` (Tensors, one per parameter) over the groups."""
        deltas = [F.reshape(d, (-1,)) for d in delta_weights]
        if self.group_number == 1:
            return deltas
        sizes = [d.shape[0] for d in deltas]
        flat = deltas[0] if len(deltas) == 1 else F.concat(deltas, 0)
        coll = management.collectives()
        gathered = Tensor._wrap(coll.all_gather(flat._data,
                                                management.group_handle(self.group)))
        rows = F.reshape(gathered, (self.group_number, -1))
        out, offset = [], 0
        for delta, size in zip(delta_weights, sizes):
            pieces = [rows[g, offset:offset + size] for g in range(self.group_number)]
            out.append(combine(pieces, any(int(s) > 1 for s in delta.shape)))
            offset += size
        return out
