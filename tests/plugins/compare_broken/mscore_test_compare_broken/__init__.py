"""Two deliberately broken backends, to show that ``mscore compare`` catches them.

Both are the torch backend with one bug, the kind a port of a backend makes:

- ``torch_convgrad``: the gradient of ``conv`` is 1 % too large (its forward is right),
- ``torch_softmax16``: ``softmax`` and ``log_softmax`` compute in float16 whatever the input
  dtype (and ``cross_entropy`` is left to the core, which goes through ``log_softmax``).

A distribution with an entry point like any third-party plugin; the tests pip-install it into
a temporary folder that only their subprocesses see. Importing it does not import torch.
"""
from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "bool")


def probe():
    """``(available, reason, devices)``: the torch backend must be importable."""
    try:
        import mscore_torch.backend
    except Exception as exc:
        return False, f"the torch backend cannot be imported: {type(exc).__name__}: {exc}", []
    return True, "", ["CPU"]


def _conv_grad():
    from mscore_test_compare_broken.backends import ConvGradOffBackend
    return ConvGradOffBackend()


def _softmax16():
    from mscore_test_compare_broken.backends import Softmax16Backend
    return Softmax16Backend()


@hookimpl
def mscore_register_backends():
    """The two broken backends (CPU)."""
    return [BackendSpec(name=name, version="0.0.1", factory=factory, devices=("CPU",),
                        dtypes=DTYPES, capabilities={"native_autodiff"}, probe=probe,
                        description=text)
            for name, factory, text in (
                ("torch_convgrad", _conv_grad, "torch with conv gradients 1 % too large"),
                ("torch_softmax16", _softmax16, "torch with softmax computed in float16"))]
