"""``mindspore.parallel.auto_parallel.AutoParallel``: a network (a Cell or a function, e.g.
a whole train step) run in a parallel mode of its own, without the process-wide
``set_auto_parallel_context``."""
from __future__ import annotations

from mscore import context as _ms_context
from mscore.compile.api import jit
from mscore.nn.cell import Cell
from mscore.ops import _sharding
from mscore.parallel import _context

_MODES = ("semi_auto", "sharding_propagation", "recursive_programming")
_SCHEDULERS = ("1f1b", "gpipe", "seqpipe", "seqvpp", "seqsmartvpp", "zero_bubble_v")
_SCHEDULER_NAMES = "/".join(f"'{s}'" for s in _SCHEDULERS)


class AutoParallel(Cell):
    """``AutoParallel(network, parallel_mode="semi_auto")``: ``network`` (a Cell or a
    function) runs in SEMI_AUTO_PARALLEL mode: the ``shard`` strategies of its primitives
    and cells cut its operators over the ranks of the job (see ``docs/parallel.md``). In
    GRAPH_MODE a function is compiled as ``jit`` compiles it. MindSpore's strategy searches
    (``"sharding_propagation"``, ``"recursive_programming"``) are not implemented."""

    jit_disabled = True   # the wrapped network compiles itself, inside the mode

    def __init__(self, network, parallel_mode="semi_auto"):
        super().__init__()
        if not isinstance(network, Cell) and not callable(network):
            raise TypeError(f"For 'AutoParallel', the argument 'network' must be a Cell or a "
                            f"function, but got {type(network).__name__}")
        if parallel_mode not in _MODES:
            raise ValueError(f"the argument 'parallel_mode' must be one of {list(_MODES)}, "
                             f"but got the value : {parallel_mode} .")
        if parallel_mode != "semi_auto":
            raise ValueError(f"AutoParallel: parallel_mode {parallel_mode!r} (MindSpore's "
                             f"strategy search) is not supported; mscore implements "
                             f"'semi_auto'")
        self.network = network
        self._function = None if isinstance(network, Cell) else network
        self._compiled = None if self._function is None else jit(network)
        self._full_batch = None   # None: as set_auto_parallel_context says
        self._pipeline_stages = None   # None: as set_auto_parallel_context says

    def dataset_strategy(self, config):
        """How each rank's inputs relate to the global batch: ``"data_parallel"`` (each
        rank's rows of it, gathered on entry) or ``"full_batch"`` (every rank reads all of
        it). Per-input strategies (tuples) are not implemented."""
        if isinstance(config, tuple):
            raise ValueError("AutoParallel.dataset_strategy: per-input shard strategies "
                             "(tuples) are not implemented; use 'data_parallel' or "
                             "'full_batch'")
        if config not in ("data_parallel", "full_batch"):
            raise ValueError(f"For 'AutoParallel.dataset_strategy', the argument 'config' "
                             f"must be 'full_batch' or 'data_parallel', but got the value : "
                             f"{config}.")
        self._full_batch = config == "full_batch"

    def pipeline(self, stages=1, output_broadcast=False, interleave=False, scheduler="1f1b"):
        """Run the network's ``nn.PipelineCell`` as ``stages`` pipeline stages (one process
        per stage; cells placed by ``Cell.pipeline_stage``). The micro-batches run in
        GPipe's order whatever ``scheduler`` names; ``interleave`` (virtual stages) is not
        supported; the last stage's output reaches every rank (``output_broadcast``)."""
        cls = "AutoParallel.pipeline"
        if not isinstance(stages, int):
            raise TypeError(f"For '{cls}', the argument 'stages' must be int type, but got "
                            f"the type : {type(stages)}.")
        if stages <= 0:
            raise ValueError(f"For '{cls}', the argument 'stages' must be larger than zero, "
                             f"but got value: {stages}.")
        for name, value in (("output_broadcast", output_broadcast),
                            ("interleave", interleave)):
            if not isinstance(value, bool):
                raise TypeError(f"For '{cls}', the argument '{name}' must be bool type, but "
                                f"got the type : {type(value)}.")
        if not isinstance(scheduler, str):
            raise TypeError(f"For '{cls}', the argument 'scheduler' must be str type, but got "
                            f"the type : {type(scheduler)}.")
        if scheduler not in _SCHEDULERS:
            raise ValueError(f"For '{cls}', the argument 'scheduler' must be "
                             f"{_SCHEDULER_NAMES} , but got the value : "
                             f"{scheduler}.")
        if interleave:
            raise ValueError(f"{cls}: 'interleave' (virtual pipeline stages) is not "
                             f"supported; mscore runs one stage per process")
        self._pipeline_stages = stages

    def _reads_full_batch(self):
        """Whether every rank reads the whole batch: as ``dataset_strategy`` says; else, with
        pipeline stages (one rank each, no data-parallel dimension), yes; else as the
        context says (None)."""
        if self._full_batch is None and (self._pipeline_stages or 1) > 1:
            return True
        return self._full_batch

    def construct(self, *args, **kwargs):
        with _context.parallel_mode_scope(_context.ParallelMode.SEMI_AUTO_PARALLEL,
                                          self._pipeline_stages), \
                _sharding.batch_entry(args, self._reads_full_batch()) as args:
            if self._function is None:
                return self.network(*args, **kwargs)
            if _ms_context.get_context("mode") == _ms_context.GRAPH_MODE:
                return self._compiled(*args, **kwargs)
            return self._function(*args, **kwargs)


def shard(fn, in_strategy, out_strategy=None, parameter_plan=None):
    """``mindspore.parallel.shard``: ``fn`` with its inputs (and the parameters of
    ``parameter_plan``) laid out by the strategies. A Cell is sharded with
    :meth:`~mscore.nn.Cell.shard` and returned (``nn.Dense`` maps the strategies onto its
    primitives across processes); a function is returned unchanged outside a job of several
    processes (MindSpore does so on one device) and refused in one (its operators need
    MindSpore's strategy propagation, which mscore does not implement)."""
    if isinstance(fn, Cell):
        return fn.shard(in_strategy, out_strategy, parameter_plan)
    if not callable(fn):
        raise TypeError(f"For 'shard', 'fn' must be a Cell or a function, but got "
                        f"{type(fn).__name__}")
    if _sharding.across_processes():
        raise NotImplementedError(
            "For 'shard', a function's strategy across the processes of a job needs "
            "MindSpore's strategy propagation to its operators, which mscore does not "
            "implement; put the strategies on its primitives (ops.MatMul().shard(...)) or "
            "shard an nn.Dense")
    return fn
