"""pluggy hook specifications of mscore.

A backend plugin is a module (or object) named by an entry point in the group
``mscore.backends``; its functions decorated with :data:`hookimpl` implement the specs below.
Hooks other than ``mscore_register_backends`` take the backend's name, so that a second
plugin can change one concern of a backend it did not write (``mscore_backend_override``,
with ``@hookimpl(tryfirst=True)`` so its answer comes first). A hook implementation whose
name starts with ``mscore_`` but matches no spec here is a load failure naming it.
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
def mscore_backend_override(backend_name, method):
    """Return a callable replacing method ``method`` of backend ``backend_name``, or None.

    Called once per overridable method (:data:`mscore.plugin.backend.OVERRIDABLE`: the
    primitive and fused ops, ``all_finite``, ``value_and_grad``, ``compile``,
    ``grad_boundary``, ...) when the backend is built; the first non-None answer wins, so an
    overrider uses ``tryfirst=True``. The callable takes the method's arguments without
    ``self``. A plugin that overrides a backend it did not write names its entry point after
    that backend, so that it is loaded when the backend is selected.

    Example (a faster overflow check for torch from another plugin)::

        @hookimpl(tryfirst=True)
        def mscore_backend_override(backend_name, method):
            if backend_name == "torch" and method == "all_finite":
                return my_fused_all_finite
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
