"""Pipeline parallelism: ``nn.PipelineCell``, ``nn.MicroBatchInterleaved`` and
``nn.PipelineGradReducer``, with MindSpore's semantics.

In a job of ``set_auto_parallel_context(parallel_mode=SEMI_AUTO_PARALLEL,
pipeline_stages=N)`` with N processes, rank ``k`` runs the cells placed on stage ``k``
(``cell.pipeline_stage = k``) and holds only their Parameters: ``PipelineCell`` releases the
others' when it is built (build the optimizer after it, so that its state covers this stage
only). A cell without a stage runs on every rank (on the values it receives), and so does
the code between cells.

The backends' collectives have no point-to-point send, so a stage hands its output on by a
broadcast from its rank (every rank takes part, in program order): first a header (rank of
the array, dtype, shape), then the array. Gradients cross the same boundary backwards
inside the autodiff: the stage's rank runs its cells' backward pass and broadcasts the
cotangent of their inputs; the other ranks receive it as the cotangent of the same inputs
(:func:`~mscore.autodiff.boundary.grad_boundary`). So every rank computes every value
outside the stages' cells, forward and backward, and the order of the collectives is the
program's on every rank. The micro-batches run one after the other (all forwards, then the
backward pass of the summed loss: GPipe's order), their gradients summed; one update.
"""
from __future__ import annotations

import numpy as np

from mscore import context as _ms_context
from mscore import dispatch
from mscore.autodiff.boundary import current_session, grad_boundary
from mscore.common import dtype as mstype
from mscore.common.tensor import Tensor
from mscore.communication import management
from mscore.nn.cell import Cell
from mscore.nn.wrap.grad_cells import GradAccumulationCell
from mscore.ops import functional as F
from mscore.parallel import _context

# dtypes a stage's output may have, by their index in the header
_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.bfloat16, mstype.int32,
           mstype.int64, mstype.bool_, mstype.int8, mstype.uint8, mstype.int16)
_MAX_RANK = 8


def _is_float(native):
    return dispatch.dtype(native) in (mstype.float16, mstype.float32, mstype.float64,
                                      mstype.bfloat16)


def _zeros_like(native):
    return dispatch.call("full", tuple(dispatch.shape(native)), 0, dispatch.dtype(native))


class StagePlan:
    """The stages of one pipeline job as this rank runs them: installed as
    ``Cell._stage_runner`` while a ``PipelineCell`` runs, it is called for every call of a
    cell placed on a stage."""

    def __init__(self, stages, rank, anchor):
        self.stages = stages
        self.rank = rank
        # a Parameter of this rank's stage: joined to every boundary so that the backward
        # pass reaches each boundary on every rank (the autodiff visits only what leads to
        # the differentiated weights)
        self.anchor = anchor
        self.collectives = management.collectives()

    def __call__(self, cell, args, kwargs):
        stage = cell._pipeline_stage
        if stage >= self.stages:
            raise ValueError(f"{type(cell).__name__}.pipeline_stage is {stage}, but "
                             f"'pipeline_stages' is {self.stages}")
        previous, Cell._stage_runner = Cell._stage_runner, None   # cells inside run in place
        try:
            if stage == self.rank:
                return self._run_own(cell, stage, args, kwargs)
            return self._receive(cell, stage, args)
        finally:
            Cell._stage_runner = previous

    def _boundary_inputs(self, args):
        """Positions of the floating Tensor arguments (the ones gradients cross)."""
        return [i for i, a in enumerate(args) if isinstance(a, Tensor) and _is_float(a._data)]

    def _differentiating(self):
        return current_session() is not None and self.anchor is not None

    def _run_own(self, cell, stage, args, kwargs):
        positions = self._boundary_inputs(args)
        if positions and self._differentiating():
            coll = self.collectives

            def vjp(cotangents, needed):
                return [coll.broadcast(c, stage, None) for c in cotangents[:-1]] + [None]
            arrays = grad_boundary([args[i]._data for i in positions] + [self.anchor._data],
                                   vjp)
            args = list(args)
            for i, a in zip(positions, arrays):
                args[i] = Tensor._wrap(a)
        out = cell(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise ValueError(f"pipeline: a cell placed on a stage must return one Tensor; "
                             f"{type(cell).__name__} (stage {stage}) returned "
                             f"{type(out).__name__}")
        native = out._data
        shape = tuple(dispatch.shape(native))
        if len(shape) > _MAX_RANK:
            raise ValueError(f"pipeline: a stage's output may have up to {_MAX_RANK} "
                             f"dimensions; {type(cell).__name__} returned shape {shape}")
        header = np.zeros(2 + _MAX_RANK, np.int64)
        header[0], header[1] = len(shape), _DTYPES.index(dispatch.dtype(native))
        header[2:2 + len(shape)] = shape
        self.collectives.broadcast(Tensor(header)._data, stage, None)
        # the value only: its gradient comes back through the boundaries, not this collective
        self.collectives.broadcast(dispatch.call("stop_gradient", native), stage, None)
        return out

    def _receive(self, cell, stage, args):
        coll = self.collectives
        header = coll.broadcast(Tensor(np.zeros(2 + _MAX_RANK, np.int64))._data, stage, None)
        header = Tensor._wrap(header).asnumpy()
        shape = tuple(int(d) for d in header[2:2 + int(header[0])])
        received = coll.broadcast(dispatch.call("full", shape, 0, _DTYPES[int(header[1])]),
                                  stage, None)
        positions = self._boundary_inputs(args)
        if not positions or not self._differentiating():
            return Tensor._wrap(received)
        inputs = [args[i]._data for i in positions]

        def vjp(cotangents, needed):
            return [coll.broadcast(_zeros_like(x), stage, None) for x in inputs] + [None, None]
        arrays = grad_boundary(inputs + [received, self.anchor._data], vjp)
        return Tensor._wrap(arrays[len(inputs)])


def _stage_of_cells(network):
    """``[(cell, stage)]`` for the cells of ``network`` whose stage is set, a cell inside
    one with a stage taking its container's."""
    placed = []

    def walk(cell, stage):
        own = cell._pipeline_stage
        if own >= 0 and 0 <= stage != own:
            raise ValueError(f"pipeline: {type(cell).__name__} is placed on stage {own} "
                             f"inside a cell placed on stage {stage}; a cell runs whole on "
                             f"one stage")
        if own >= 0:
            stage = own
        if stage >= 0:
            placed.append((cell, stage))
        for child in cell.name_cells().values():
            walk(child, stage)
    walk(network, -1)
    return placed


def _plan_for(network):
    """The :class:`StagePlan` of this rank when the context asks for pipeline stages in a
    job (after releasing the Parameters of the other stages' cells), else None."""
    stages = _context.pipeline_stages()
    if stages == 1 or _context.parallel_mode() != _context.ParallelMode.SEMI_AUTO_PARALLEL \
            or not management.is_initialized():
        return None
    world, rank = management.get_group_size(), management.get_rank()
    if world != stages:
        raise ValueError(f"pipeline: mscore runs one rank per stage; 'pipeline_stages' is "
                         f"{stages} but the job has {world} processes")
    anchor = None
    for cell, stage in _stage_of_cells(network):
        if stage == rank:
            if anchor is None:
                anchor = next(iter(cell._params.values()), None)
            continue
        for name in list(cell._params):
            delattr(cell, name)
    if anchor is None:
        raise ValueError(f"pipeline: no cell with Parameters is placed on stage {rank} "
                         f"(set 'pipeline_stage' on the cells of every stage)")
    return StagePlan(stages, rank, anchor)


class PipelineCell(GradAccumulationCell):
    """``PipelineCell(network, micro_size, stage_config=None, segment_config=None)``: the
    batch cut into ``micro_size`` micro-batches (axis 0 of every input), ``network`` run on
    each, the outputs summed. In a pipeline job (``pipeline_stages`` > 1 in
    SEMI_AUTO_PARALLEL mode, one process per stage) each rank runs the cells placed on its
    stage and keeps only their Parameters (see the module's text); elsewhere it is
    ``GradAccumulationCell``. Under ``AutoParallel(...).pipeline(stages)`` the stages are
    known at the first call only: the other stages' Parameters leave the network then, but
    an optimizer built before keeps them (updated with zero gradients). ``stage_config``
    maps cell names (as ``cells_and_names`` gives them) to stages; ``segment_config``
    (interleaved stages) is not supported.
    """

    def __init__(self, network, micro_size, stage_config=None, segment_config=None):
        cls = "PipelineCell"
        if not isinstance(network, Cell):
            raise TypeError(f"For '{cls}', the argument 'network' must cell type, but got the "
                            f"type : {type(network)}.")
        if not isinstance(micro_size, int):
            raise TypeError(f"For '{cls}', the argument 'micro_size' must be integer, but got "
                            f"the type : {type(micro_size)}.")
        if micro_size <= 0:
            raise ValueError(f"For '{cls}', the argument 'micro_size' must be large than 0, "
                             f"but got {micro_size}.")
        if segment_config is not None:
            raise ValueError("PipelineCell: 'segment_config' (interleaved pipeline segments) "
                             "is not supported; place cells with 'pipeline_stage' only")
        super().__init__(network, micro_size)
        if stage_config is not None:
            self._apply_stage_config(network, stage_config)
        self._plan = _plan_for(network)

    @staticmethod
    def _apply_stage_config(network, stage_config):
        left = dict(stage_config)
        for name, cell in network.cells_and_names():
            if name and name in left:
                cell.pipeline_stage = left.pop(name)
        if left:
            raise KeyError(f"For 'PipelineCell', the argument 'stage_config' : {left} is not "
                           f"found in 'network' : {network}")

    def construct(self, *inputs):
        plan = self._plan
        if plan is None and _context.pipeline_stages() > 1:
            # AutoParallel(...).pipeline(stages) sets the stages only while it runs
            plan = self._plan = _plan_for(self.network)
        if plan is None:
            return super().construct(*inputs)
        if _ms_context.get_context("mode") == _ms_context.GRAPH_MODE:
            raise ValueError("PipelineCell: pipeline stages run in PYNATIVE_MODE; GRAPH_MODE "
                             "(a compiled pipeline) is not supported")
        previous, Cell._stage_runner = Cell._stage_runner, plan
        try:
            return super().construct(*inputs)
        finally:
            Cell._stage_runner = previous


class MicroBatchInterleaved(GradAccumulationCell):
    """``MicroBatchInterleaved(network, interleave_num=2)``: the batch cut into
    ``interleave_num`` slices (axis 0), ``network`` run on each, the outputs summed
    (MindSpore overlaps the slices' communication with computation; here they run in
    turn)."""

    def __init__(self, network, interleave_num=2):
        cls = "MicroBatchInterleaved"
        if not isinstance(interleave_num, int):
            raise TypeError(f"For '{cls}', the argument 'interleave_num' must be integer, but "
                            f"got the type : {type(interleave_num)}.")
        if interleave_num <= 0:
            raise ValueError(f"For '{cls}', the argument 'interleave_num' must be large than "
                             f"0, but got {interleave_num}.")
        super().__init__(network, interleave_num)
        self.interleave_num = interleave_num


class PipelineGradReducer(Cell):
    """``PipelineGradReducer(parameters, scale_sense=1.0, opt_shard=None)``: the gradients
    of a ``PipelineCell`` (already summed over its micro-batches) divided by ``scale_sense``
    (the loss scale the loss was multiplied by), ready for the optimizer. One rank per
    stage: nothing to reduce across ranks."""

    def __init__(self, parameters, scale_sense=1.0, opt_shard=None):
        super().__init__(auto_prefix=False)
        if opt_shard:
            raise ValueError("PipelineGradReducer: 'opt_shard' (the parallel optimizer "
                             "across a stage's ranks) is not supported; mscore runs one rank "
                             "per stage")
        self.parameters = parameters
        self.scale_sense = scale_sense

    def construct(self, grads):
        scale = self.scale_sense
        return tuple(F.cast(F.div(g, scale), g.dtype) for g in grads)
