"""Every backend of the project, and the out-of-tree example, says why it leaves out each of
mscore's dtypes it does not declare (``mscore backends`` shows the reason; the guide asks
every backend for one)."""
import importlib.util
import sys
from pathlib import Path

import pytest

from mscore.common.dtype import ALL_DTYPES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "third_party_backend" / "mscore_array_api" / "plugin.py"


def _left_out_without_reason(spec):
    return [d.name for d in ALL_DTYPES
            if d.name not in spec.dtypes and not spec.undeclared_dtypes.get(d.name)]


def test_the_array_api_example_gives_a_reason_for_every_dtype_it_leaves_out():
    module_spec = importlib.util.spec_from_file_location("example_array_api_plugin", EXAMPLE)
    plugin = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(plugin)
    (spec,) = plugin.mscore_register_backends()
    assert set(spec.undeclared_dtypes) == {d.name for d in ALL_DTYPES} - set(spec.dtypes)
    assert _left_out_without_reason(spec) == []
    assert spec.undeclared_dtypes["float16"] == "the array API standard has no float16"


@pytest.mark.parametrize("cupy_version,numpy_version,reason", [
    (None, "2.4.0", "CuPy is not installed"),
    ("13.6.0", "2.4.0", "CuPy 13.6.0 has no bfloat16 arrays"),
    ("14.0.0", "2.1.1", "only with NumPy 2.1.2 or newer, not 2.1.1"),
])
def test_cupy_says_why_it_leaves_out_bfloat16(cupy_version, numpy_version, reason):
    cupy_plugin = pytest.importorskip("mscore_cupy.plugin")
    left_out = cupy_plugin.undeclared_dtypes(cupy_version, numpy_version)
    assert list(left_out) == ["bfloat16"] and reason in left_out["bfloat16"]
    assert "bfloat16" not in cupy_plugin.declared_dtypes(cupy_version, numpy_version)
    assert cupy_plugin.undeclared_dtypes("14.0.0", "2.1.2") == {}


def test_mscore_backends_gives_a_reason_for_every_dtype_left_out(capsys):
    pytest.importorskip("mscore_cupy.plugin")
    from mscore.commands import backends
    assert backends.main(["--timeout", "120"]) == 0
    out = capsys.readouterr().out
    assert backends.NO_REASON not in out, out
    assert sys.modules.get("cupy") is None      # listing imports no array library
