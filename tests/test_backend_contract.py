"""The backend contract is declared once (mscore/plugin/optional.py and backend.py) and the
docs render from it; the export tracer binds recorded calls with the same signatures."""
import inspect

from _helpers import load_script

from mscore.plugin import optional
from mscore.plugin.backend import FUSED_OPS, OPTIONAL_METHODS, Backend

RENDER = load_script("tools", "render_backend_contract")


def test_docs_backend_contract_is_rendered_from_the_declarations():
    assert RENDER.OUT.read_text(encoding="utf-8") == RENDER.render(), (
        "docs/backend-contract.md is out of date: python tools/render_backend_contract.py")


def test_every_optional_member_is_none_on_backend_and_declared_once():
    names = optional.OPTIONAL_MEMBERS
    assert len(names) == len(set(names))
    assert set(FUSED_OPS) | set(OPTIONAL_METHODS) <= set(names)
    assert all(getattr(Backend, name) is None for name in names)


def test_optional_signatures_name_their_parameters():
    sig = optional.signature("batch_norm")
    assert list(sig.parameters) == ["x", "running_mean", "running_var", "weight", "bias",
                                    "training", "momentum", "eps"]
    assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values())
