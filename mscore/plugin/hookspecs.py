"""pluggy hook specifications of mscore.

A backend plugin is a module (or object) named by an entry point in the group
``mscore.backends``; its functions decorated with :data:`hookimpl` implement the specs below.
Hooks other than ``mscore_register_backends`` take the backend's name, so that a second
plugin can override one concern of a backend it did not write. Overriders should use
``@hookimpl(tryfirst=True)`` so their answer comes first.
"""
import pluggy

PROJECT = "mscore"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def mscore_register_backends():
    """Return a list of :class:`mscore.plugin.backend.BackendSpec` this plugin provides.

    Example::

        @hookimpl
        def mscore_register_backends():
            return [BackendSpec(name="mylib", version=mylib.__version__,
                                factory=lambda: MyLibBackend(),
                                capabilities={"native_autodiff"})]
    """


@hookspec(firstresult=True)
def mscore_all_finite_impl(backend_name):
    """Return a callable ``f(arrays) -> bool`` replacing the backend's overflow check, or None.

    Example (a faster check for torch from another plugin)::

        @hookimpl(tryfirst=True)
        def mscore_all_finite_impl(backend_name):
            if backend_name == "torch":
                return my_fused_all_finite
    """


@hookspec(firstresult=True)
def mscore_value_and_grad_impl(backend_name):
    """Return a callable ``f(fn, primals, has_aux) -> ((value, aux), grads)`` or None.

    ``fn`` takes native arrays and returns ``(scalar value, aux)``; ``grads`` holds one native
    array per primal. None keeps the backend's own ``value_and_grad`` (or mscore.autodiff).

    Example::

        @hookimpl
        def mscore_value_and_grad_impl(backend_name):
            if backend_name == "mylib":
                return lambda fn, primals, has_aux: mylib.value_and_grad(fn, primals)
    """


@hookspec(firstresult=True)
def mscore_compile_impl(backend_name):
    """Return a callable ``compile(fn, donate_argnums=()) -> fn`` for GRAPH_MODE, or None.

    Example::

        @hookimpl
        def mscore_compile_impl(backend_name):
            if backend_name == "jax":
                return lambda fn, donate_argnums=(): jax.jit(fn, donate_argnums=donate_argnums)
    """


@hookspec
def mscore_override_ops(backend_name):
    """Return a dict ``{op_name: callable}`` replacing primitive or fused ops of a backend.

    Called once when the backend is built; the callables take the same arguments as the
    :class:`~mscore.plugin.backend.Backend` method they replace (without ``self``).

    Example::

        @hookimpl
        def mscore_override_ops(backend_name):
            if backend_name == "numpy":
                return {"matmul": my_blocked_matmul}
    """


@hookspec
def mscore_amp_cast_lists(backend_name):
    """Return recommended additions to the amp cast lists for this backend, or None.

    The result is a dict with optional keys ``"white"`` (Cell classes or Primitive classes
    that should compute in low precision at O1) and ``"black"`` (Cell classes that should stay
    in float32 at O2). mscore.amp adds them to its built-in lists for this backend only.

    Example::

        @hookimpl
        def mscore_amp_cast_lists(backend_name):
            if backend_name == "torch":
                return {"white": [nn.Conv1d], "black": [nn.Softmax]}
    """


@hookspec(firstresult=True)
def mscore_collectives_impl(backend_name):
    """Return a factory ``factory(backend) -> Collectives`` for data parallelism, or None.

    :class:`mscore.plugin.collectives.Collectives` is the contract (``all_reduce``,
    ``broadcast``, ``all_gather``, ``barrier``, ``new_group`` over native arrays, eagerly and
    inside compiled programs). ``mscore.communication.init()`` calls the factory with the
    built backend. Declare the ``collectives`` capability too.

    Example::

        @hookimpl
        def mscore_collectives_impl(backend_name):
            if backend_name == "mylib":
                from mscore_mylib.collectives import MyLibCollectives
                return MyLibCollectives
    """
