"""The collectives contract: how a backend takes part in a job of several processes.

A plugin whose backend declares the ``collectives`` capability implements the hook
``mscore_collectives_impl(backend_name)`` and returns a *factory*: ``factory(backend)`` builds
a :class:`Collectives` for the built :class:`~mscore.plugin.backend.Backend`. The core
(:mod:`mscore.communication`) calls the factory once, in ``init()``, then :meth:`init` with the
job's :class:`JobEnv`.

The operations work on the backend's *native* arrays and are built on the array library's own
distributed engine (``torch.distributed``, ``jax.distributed``, NCCL through CuPy), never on a
protocol of mscore's. They must work

* eagerly (PYNATIVE), on concrete arrays, and
* inside the backend's compiled GRAPH_MODE program (declared ``compile``), where the arrays
  are traced values (jax tracers, torch.compile's fake tensors).

They never modify their input; they return new arrays. ``group`` is a handle returned by
:meth:`new_group`, or ``None`` for every process of the job. Ranks are global
ranks (0 .. world_size - 1) unless said otherwise.

The core owns the policy on top: which arrays (gradients), bucketing (one collective per
~25 MB, not one per parameter), mean against sum, overflow agreement, rank-aware callbacks.
"""
from __future__ import annotations

from dataclasses import dataclass

# The reductions every backend's all_reduce takes.
REDUCE_OPS = ("sum", "mean", "max", "min")


@dataclass(frozen=True)
class JobEnv:
    """Where this process sits in the job, read from the launcher's environment.

    ``rank``/``world_size``: this process among all; ``local_rank``/``local_world_size``:
    among the processes of this machine; ``master_addr``/``master_port``: where process 0
    serves the rendezvous (the engine's own store or coordinator); ``launcher``: which
    environment was found ("mscore run", "torchrun", "env", "msrun", "slurm"); ``timeout``:
    seconds to wait for the other processes at start-up; ``master_port_taken``: the launcher
    itself serves a store at ``master_port`` (torchrun's agent: ``torch.distributed`` joins
    it; an engine with a server of its own, such as jax's coordinator, uses
    ``master_port + 1``).
    """

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: str
    master_port: int
    launcher: str = "mscore run"
    timeout: float = 600.0
    master_port_taken: bool = False


class Collectives:
    """The collective operations of one backend across the processes of a job.

    Subclasses set ``engine`` (a name for messages, e.g. "torch.distributed/gloo") and
    implement every method below. An instance serves one job: :meth:`init` once, then the
    operations, then :meth:`release`.
    """

    engine = "abstract"
    # True when init() restarts the array library's runtime (jax.distributed must start
    # before XLA's): the core then keeps the global random stream on the host across init,
    # device arrays made before init() are lost (so init() comes before any network), and
    # init() itself places the backend on its device again (backend.set_device).
    restarts_runtime = False

    def init(self, env: JobEnv, device_target: str) -> None:
        """Join the job described by ``env``: rendezvous at ``env.master_addr:master_port``
        and build the world communicator. ``device_target`` is "CPU" or "GPU" (the engine's
        transport: gloo on CPU, NCCL on GPU). Raise ``RuntimeError`` naming the reason when
        the job cannot be joined."""
        raise NotImplementedError

    def release(self) -> None:
        """Leave the job and free the engine's resources (the process may ``init`` again)."""
        raise NotImplementedError

    def new_group(self, ranks: tuple):
        """A handle for the group of global ``ranks`` (sorted, unique). Called on every
        process of the job in the same order (torch.distributed's rule), members or not."""
        raise NotImplementedError

    def all_reduce(self, array, op="sum", group=None):
        """The elementwise reduction ``op`` (one of :data:`REDUCE_OPS`) of ``array`` over
        the group; every member gets the result. ``mean`` divides the sum by the group's
        size."""
        raise NotImplementedError

    # Optional: ``all_reduce_coalesced(arrays, op="sum", group=None) -> list`` reduces
    # several arrays of one dtype in ONE collective (a bucket of gradients), as the engine
    # does best (jax: one variadic psum; torch: one flat buffer). None: the core joins the
    # bucket into one flat array with the backend's primitives and calls all_reduce once.
    all_reduce_coalesced = None

    def broadcast(self, array, root=0, group=None):
        """Global rank ``root``'s ``array`` on every member (same shape and dtype on all)."""
        raise NotImplementedError

    def all_gather(self, array, group=None):
        """The members' arrays concatenated along axis 0, in group-rank order (every member
        passes the same shape)."""
        raise NotImplementedError

    def reduce_scatter(self, array, op="sum", group=None):
        """The reduction ``op`` (one of :data:`REDUCE_OPS`) of ``array`` over the group,
        scattered: axis 0 (a multiple of the group's size) splits into group-size equal
        blocks and member ``i`` (in group-rank order) gets block ``i`` of the reduction.
        Together with :meth:`all_gather` it shards a flat buffer over the group (the
        parallel optimizer reduce-scatters gradients and all-gathers updated weights)."""
        raise NotImplementedError

    def barrier(self, group=None) -> None:
        """Return when every member has called it (eager only, not inside a compiled
        program)."""
        raise NotImplementedError
