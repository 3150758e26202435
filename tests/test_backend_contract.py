"""The backend contract is declared once (mscore/plugin/required.py and optional.py) and the
docs render from it; the export tracer binds recorded calls with the same signatures, and the
shipped backends take the declared parameter names (a type checker compares the count and
kinds of parameters, not their names, and the core passes op attributes by keyword)."""
import inspect
from pathlib import Path

import pytest
from _helpers import load_script

from mscore.plugin import optional, required
from mscore.plugin.backend import (
    FUSED_OPS,
    OPTIONAL_METHODS,
    PRIMITIVE_OPS,
    Backend,
    misnamed_parameters,
)

RENDER = load_script("tools", "render_backend_contract")

SHIPPED = [("mscore.backends.numpy.backend", "ArrayModuleBackend"),
           ("mscore_torch.backend", "TorchBackend"),
           ("mscore_jax.backend", "JaxBackend"),
           ("mscore_cupy.backend", "CupyBackend"),
           ("mscore_array_api.backend", "ArrayAPIBackend")]   # the third-party example
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "third_party_backend"


def test_docs_backend_contract_is_rendered_from_the_declarations():
    assert RENDER.OUT.read_text(encoding="utf-8") == RENDER.render(), (
        "docs/backend-contract.md is out of date: python tools/render_backend_contract.py")


def test_every_optional_member_is_none_on_backend_and_declared_once():
    names = optional.OPTIONAL_MEMBERS
    assert len(names) == len(set(names))
    assert set(FUSED_OPS) | set(OPTIONAL_METHODS) <= set(names)
    assert all(getattr(Backend, name) is None for name in names)


def test_every_required_member_is_declared_once_with_a_contract():
    names = required.REQUIRED_MEMBERS
    assert PRIMITIVE_OPS == names and len(names) == len(set(names)) == 63
    assert not set(names) & set(optional.OPTIONAL_MEMBERS)
    for name in names:
        fn = getattr(Backend, name)
        assert fn is getattr(required.RequiredMethods, name), name
        assert inspect.getdoc(fn), f"{name}: the declaration states no contract"
        sig = required.signature(name)
        assert sig.return_annotation is not inspect.Signature.empty, name
        assert all(p.annotation is not inspect.Parameter.empty
                   for p in sig.parameters.values()), name


def test_unimplemented_required_members_raise_and_are_listed():
    class Partial(Backend):
        def add(self, a, b):
            return a + b

    from mscore.plugin.backend import missing_primitives
    missing = missing_primitives(Partial())
    assert "add" not in missing and "erf" in missing and "sum" in missing
    assert not set(missing) & required.DEFAULTED
    assert len(missing) == len(PRIMITIVE_OPS) - 1 - len(required.DEFAULTED)
    with pytest.raises(NotImplementedError):
        Partial().erf(1.0)
    assert Partial().stop_gradient(3.0) == 3.0 and Partial().memory_stats() == {}


def test_required_signatures_name_their_parameters():
    assert list(required.signature("sum").parameters) == ["a", "axis", "keepdims"]
    assert list(required.signature("conv_transpose").parameters) == [
        "x", "w", "stride", "padding", "output_padding", "dilation", "groups"]
    assert required.signature("from_numpy").parameters["dtype"].default is None


def test_optional_signatures_name_their_parameters():
    sig = optional.signature("batch_norm")
    assert list(sig.parameters) == ["x", "running_mean", "running_var", "weight", "bias",
                                    "training", "momentum", "eps"]
    assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values())


@pytest.mark.parametrize("module, cls_name", SHIPPED, ids=[m for m, _ in SHIPPED])
def test_shipped_backends_take_the_declared_parameter_names(module, cls_name, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))   # not installed: imported from the checkout
    cls = getattr(pytest.importorskip(module), cls_name)
    assert misnamed_parameters(cls) == {}


def test_a_renamed_parameter_is_a_mismatch():
    class Renamed(Backend):
        def sum(self, x, axis, keepdims):
            return x

        def softmax(self, x, dim):
            return x

        def pad(self, a, pad_width, value, mode="constant"):
            return a

        @staticmethod
        def compile(fn, donate_argnums=()):
            return fn

        def where(self, cond, x, y, *, out=None):
            return x

        def copy(self, a, b):
            return a

    assert misnamed_parameters(Renamed) == {
        "copy": (["a"], ["a", "b"]),
        "sum": (["a", "axis", "keepdims"], ["x", "axis", "keepdims"]),
        "softmax": (["x", "axis"], ["x", "dim"])}
