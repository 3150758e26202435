"""Robust plugin loading through real entry points.

Two deliberately broken distributions under ``tests/plugins/`` are pip-installed (into a
temporary folder put on ``PYTHONPATH`` of child processes, see ``conftest.pip_target``):
``mscore-test-import-error`` (its module fails to import) and ``mscore-test-bad-hook`` (a hook
implementation with an argument the spec lacks). They must show up in the registry's failures
and in ``mscore backends`` with the reason, ``import mscore`` and every other backend must keep
working, and ``MSCORE_STRICT_PLUGINS=1`` must turn them into an error.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from _helpers import child_result

from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.commands.backends import CAPABILITIES_WIDTH, _wrapped
from mscore.plugin import hookspecs
from mscore.plugin.backend import KNOWN_CAPABILITIES, BackendSpec
from mscore.plugin.registry import BackendNameCollision, PluginLoadError, Registry

PLUGINS = Path(__file__).resolve().parent / "plugins"

BROKEN = ("import_error_plugin", "bad_hook_plugin")

PROBE = r"""
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import mscore as ms
    from mscore.plugin.registry import get_registry
    reg = get_registry()
    names = reg.names()
result = {"names": names,
          "failures": {f.plugin: f.reason for f in reg.failures},
          "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)],
          "computed": {}}
import numpy as np
for name in names:
    try:
        available = reg.describe(name)["status"] == "available"
        if not available:
            result["computed"][name] = "unavailable"
            continue
        ms.set_context(backend=name)
        x = ms.Tensor(np.array([1.0, 2.0, 3.0], np.float32))
        result["computed"][name] = float((x * 2 + 1).sum().asnumpy())
    except Exception as exc:
        result["computed"][name] = f"error: {type(exc).__name__}: {exc}"
print("RESULT" + json.dumps(result))
"""


@pytest.fixture(scope="module")
def broken_site(pip_target):
    return pip_target(*(PLUGINS / d for d in BROKEN))


def test_broken_plugins_are_reported_and_others_work(broken_site, run_py):
    proc = run_py(["-c", PROBE], broken_site)
    res = child_result(proc)
    failures = res["failures"]
    assert "test_import_error" in failures, failures
    assert "ModuleNotFoundError" in failures["test_import_error"]
    assert "mscore_dependency_that_does_not_exist" in failures["test_import_error"]
    assert "test_bad_hook" in failures, failures
    reason = failures["test_bad_hook"]
    assert "mscore_backend_override" in reason and "stream" in reason, reason
    # Each failure was also a warning naming the plugin.
    assert any("test_import_error" in w for w in res["warnings"]), res["warnings"]
    assert any("test_bad_hook" in w for w in res["warnings"]), res["warnings"]
    # The bad plugin's backend is not registered; every real backend still computes.
    assert "test_bad_hook" not in res["names"]
    assert "numpy" in res["names"]
    for name, value in res["computed"].items():
        if value == "unavailable":
            continue
        assert value == pytest.approx(15.0), f"backend {name}: {value}"


def test_mscore_backends_lists_the_failures(broken_site, run_py):
    both = ("import sys; from mscore.cli import main; main(['backends']); print('@@JSON@@'); "
            "main(['backends', '--json'])")
    proc = run_py(["-c", both], broken_site)
    assert proc.returncode == 0, proc.stderr
    table, _, js = proc.stdout.partition("@@JSON@@")
    assert "numpy" in table
    assert "failed to load" in table
    assert "test_import_error" in table and "ModuleNotFoundError" in table
    assert "test_bad_hook" in table and "PluginValidationError" in table
    data = json.loads(js)
    assert {f["plugin"] for f in data["failures"]} >= {"test_import_error", "test_bad_hook"}
    assert "numpy" in [b["name"] for b in data["backends"]]


STRICT_PROBE = r"""
import mscore as ms                      # importing stays fine: plugins load on first use
from mscore.plugin.registry import PluginLoadError, get_registry
print("NUMPY", float(ms.Tensor([1.0]).asnumpy()[0]))   # numpy never imports the others
try:
    get_registry().names()               # listing every backend imports every plugin
except PluginLoadError as exc:
    print("STRICT " + str(exc))
else:
    print("NOT STRICT")
"""


def test_strict_mode_turns_failures_into_errors(broken_site, run_py):
    proc = run_py(["-c", STRICT_PROBE], broken_site, MSCORE_STRICT_PLUGINS="1")
    assert proc.returncode == 0, proc.stderr
    assert "NUMPY 1.0" in proc.stdout, proc.stdout
    assert "STRICT" in proc.stdout, proc.stdout
    line = proc.stdout.strip().splitlines()[-1]
    assert "test_import_error" in line or "test_bad_hook" in line, line
    # Without strict mode the same program works.
    proc = run_py(["-c", STRICT_PROBE], broken_site)
    assert "NOT STRICT" in proc.stdout, proc.stdout + proc.stderr


# -- plugins that abort or hang at import --------------------------------------------------
DEADLY = ("abort_plugin", "hang_plugin")

NUMPY_ONLY = r"""
import numpy as np
import mscore as ms
from mscore import nn
net = nn.Dense(3, 2)
out = net(ms.Tensor(np.ones((4, 3), np.float32)))
print("SHAPE", out.shape)
"""


@pytest.fixture(scope="module")
def deadly_site(pip_target):
    return pip_target(*(PLUGINS / d for d in DEADLY))


def test_a_plugin_that_aborts_or_hangs_spares_numpy_programs(deadly_site, run_py):
    proc = run_py(["-c", NUMPY_ONLY], deadly_site, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "SHAPE (4, 2)" in proc.stdout, proc.stdout


def test_mscore_backends_names_the_plugin_that_aborted_or_hung(deadly_site, run_py):
    args = ["-m", "mscore.cli", "backends", "--json", "--timeout", "10"]
    proc = run_py(args, deadly_site, timeout=180)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    failures = {f["plugin"]: f["reason"] for f in data["failures"]}
    assert "SIGABRT" in failures.get("test_abort", ""), failures
    assert "did not finish within 10 s" in failures.get("test_hang", ""), failures
    status = {b["name"]: b["status"] for b in data["backends"]}
    assert status["numpy"] == "available"
    # each has a row saying it failed, with the first line of the cause
    assert status["test_abort"].startswith("failed to load: ") and "SIGABRT" in \
        status["test_abort"]
    assert status["test_hang"].startswith("failed to load: ") and "did not finish within " \
        "10 s" in status["test_hang"]


# -- in-process checks of the registry's validation (no installation needed) -------------------
class _Plugin:
    def __init__(self, specs):
        self._specs = specs

    @hookspecs.hookimpl
    def mscore_register_backends(self):
        return self._specs


class _BadSignature:
    @hookspecs.hookimpl
    def mscore_backend_override(self, backend_name, method, options):
        return None


def _fresh_registry():
    reg = Registry()
    reg._loaded = True  # only the plugins registered below, no entry points
    return reg


def _numpy_factory():
    from mscore.backends.numpy.plugin import _build
    return _build()


@pytest.mark.parametrize("bad, needle", [
    (["not a spec"], "expected BackendSpec"),
    ([BackendSpec("odd", "1", _numpy_factory, capabilities={"telepathy"})], "telepathy"),
])
def test_invalid_registrations_are_failures(bad, needle, monkeypatch):
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    reg = _fresh_registry()
    with pytest.warns(RuntimeWarning, match="not loaded"):
        reg.register_plugin(_Plugin(bad), "bad")
    assert [f.plugin for f in reg.failures] == ["bad"]
    assert needle in reg.failures[0].reason
    reg.register_plugin(_Plugin([BackendSpec("good", "1", _numpy_factory)]), "good")
    assert reg.names() == ["good"]
    assert reg.get("good").name == "numpy"


def test_wrong_hook_signature_in_process(monkeypatch):
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    reg = _fresh_registry()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.register_plugin(_BadSignature(), "badsig")
    assert reg.failures and "options" in reg.failures[0].reason
    monkeypatch.setenv("MSCORE_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError, match="badsig2"):
        _fresh_registry().register_plugin(_BadSignature(), "badsig2")


def _claims_dup(reg, order):
    plugins = {"first": (_Plugin([BackendSpec("dup", "1", _numpy_factory)]), "dist-a 1.0"),
               "second": (_Plugin([BackendSpec("dup", "2", _numpy_factory)]), "dist-b 2.0")}
    for name in order:
        plugin, dist = plugins[name]
        reg.register_plugin(plugin, name, distribution=dist)


@pytest.mark.parametrize("order", [("first", "second"), ("second", "first")])
def test_a_backend_name_claimed_twice_is_used_by_neither(order, monkeypatch):
    """The rule does not depend on the order of registration (sys.path, entry points)."""
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    monkeypatch.delenv("MSCORE_BACKEND_PLUGIN_DUP", raising=False)
    reg = _fresh_registry()
    with pytest.warns(RuntimeWarning, match="claimed by 2 plugins"):
        _claims_dup(reg, order)
    assert "dup" not in reg.names()
    with pytest.raises(BackendNameCollision) as info:
        reg.spec("dup")
    message = str(info.value)
    assert "dist-a 1.0 (plugin 'first')" in message and "dist-b 2.0 (plugin 'second')" in message
    assert "MSCORE_BACKEND_PLUGIN_DUP=<distribution>" in message
    with pytest.raises(BackendNameCollision):
        reg.get("dup")
    assert [f.plugin for f in reg.failures] == ["first, second"]


@pytest.mark.parametrize("pin, version", [("dist-a", "1"), ("DIST_B", "2"), ("second", "2")])
def test_a_pin_chooses_the_claimant(pin, version, monkeypatch):
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    monkeypatch.setenv("MSCORE_BACKEND_PLUGIN_DUP", pin)
    reg = _fresh_registry()
    _claims_dup(reg, ("first", "second"))
    assert reg.spec("dup").version == version and not reg.failures
    x = reg.get("dup").from_numpy(np.ones(2))
    assert reg.get("dup").to_numpy(x).tolist() == [1.0, 1.0]


def test_pin_in_code_and_a_pin_that_matches_nothing(monkeypatch):
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    monkeypatch.setenv("MSCORE_BACKEND_PLUGIN_DUP", "dist-c")
    reg = _fresh_registry()
    with pytest.warns(RuntimeWarning, match="matches none of them"):
        _claims_dup(reg, ("first", "second"))
    assert "dup" not in reg.names()
    reg.pin("dup", "dist-b")
    assert reg.spec("dup").version == "2"


def test_strict_mode_raises_on_a_collision(monkeypatch):
    monkeypatch.setenv("MSCORE_STRICT_PLUGINS", "1")
    monkeypatch.delenv("MSCORE_BACKEND_PLUGIN_DUP", raising=False)
    with pytest.raises(BackendNameCollision, match="dist-a 1.0"):
        _claims_dup(_fresh_registry(), ("first", "second"))


def test_the_numpy_name_belongs_to_the_core(monkeypatch):
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    from mscore.backends.numpy import plugin as numpy_plugin
    reg = _fresh_registry()
    impostor = _Plugin([BackendSpec("numpy", "99", _numpy_factory)])
    with pytest.warns(RuntimeWarning, match="built-in reference"):
        reg.register_plugin(impostor, "impostor", distribution="evil 1.0")
        reg.register_plugin(numpy_plugin, "numpy", distribution="mscore 0.1.0")
    assert reg.spec("numpy").distribution == "mscore 0.1.0"
    assert reg.failures[0].plugin == "impostor" and "evil 1.0" in reg.failures[0].reason


def test_a_taken_plugin_name_is_reported(monkeypatch):
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    reg = _fresh_registry()
    reg.register_plugin(_Plugin([BackendSpec("one", "1", _numpy_factory)]), "p",
                        distribution="dist-a 1.0")
    with pytest.warns(RuntimeWarning, match="already used by dist-a 1.0"):
        reg.register_plugin(_Plugin([BackendSpec("two", "1", _numpy_factory)]), "p")
    assert reg.names() == ["one"]


# -- the hooks: what each one changes -------------------------------------------------------
class _Override:
    """Overrides one method of one backend with a callable."""

    def __init__(self, backend_name, method, fn):
        self.target, self.fn = (backend_name, method), fn

    @hookspecs.hookimpl(tryfirst=True)
    def mscore_backend_override(self, backend_name, method):
        return self.fn if (backend_name, method) == self.target else None


def _numpy_registry(*plugins):
    from mscore.backends.numpy import plugin as numpy_plugin
    reg = _fresh_registry()
    reg.register_plugin(numpy_plugin, "numpy", distribution="mscore 0.1.0")
    for i, plugin in enumerate(plugins):
        reg.register_plugin(plugin, f"override{i}")
    return reg


def test_a_second_plugin_overrides_one_method_of_a_backend():
    with_inf = [np.array([1.0, np.inf], np.float32)]
    assert _numpy_registry().get("numpy").all_finite(with_inf) is False
    reg = _numpy_registry(_Override("numpy", "all_finite", lambda arrays: "overridden"))
    backend = reg.get("numpy")
    assert backend.all_finite(with_inf) == "overridden"
    a = np.array([[1.0, 2.0]], np.float32)
    assert backend.matmul(a, a.T).tolist() == [[5.0]]          # other methods unchanged
    # An override for another backend name changes nothing here.
    other = _numpy_registry(_Override("torch", "all_finite", lambda arrays: "overridden"))
    assert other.get("numpy").all_finite(with_inf) is False


def test_overriding_cast_alone_turns_off_the_float_caster(monkeypatch):
    # float_caster stands for the library's cast: an override of cast must not be bypassed.
    monkeypatch.setattr(type(_numpy_registry().get("numpy")), "float_caster",
                        staticmethod(np.ndarray.astype), raising=False)
    assert _numpy_registry().get("numpy").float_caster is np.ndarray.astype
    cast = _Override("numpy", "cast", lambda a, dtype: "overridden")
    assert _numpy_registry(cast).get("numpy").float_caster is None
    both = _numpy_registry(cast, _Override("numpy", "float_caster", np.ndarray.copy))
    assert both.get("numpy").float_caster is np.ndarray.copy


def test_the_first_override_answer_wins():
    first = _Override("numpy", "matmul", lambda a, b: "first")
    second = _Override("numpy", "matmul", lambda a, b: "second")
    # pluggy calls the implementations registered last first (both are tryfirst).
    assert _numpy_registry(first, second).get("numpy").matmul(None, None) == "second"


class _CastLists:
    @hookspecs.hookimpl
    def mscore_amp_cast_lists(self, backend_name):
        return {"white": ["Conv1d"]} if backend_name == "numpy" else None


def test_amp_cast_list_additions_come_from_the_hook():
    assert _numpy_registry().amp_cast_list_additions("numpy") == {"white": [], "black": []}
    reg = _numpy_registry(_CastLists())
    assert reg.amp_cast_list_additions("numpy") == {"white": ["Conv1d"], "black": []}
    assert reg.amp_cast_list_additions("torch") == {"white": [], "black": []}


class _Collectives:
    @hookspecs.hookimpl(tryfirst=True)
    def mscore_collectives_impl(self, backend_name):
        return _Collectives if backend_name == "numpy" else None


def test_a_collectives_factory_comes_from_the_hook():
    from mscore.backends.numpy.collectives import NumpyCollectives
    assert _numpy_registry().collectives_factory("numpy") is NumpyCollectives
    assert _numpy_registry(_Collectives()).collectives_factory("numpy") is _Collectives


class _Misspelt:
    @hookspecs.hookimpl
    def mscore_backend_overide(self, backend_name, method):
        return None


def test_a_misspelt_hook_is_a_failure_naming_it(monkeypatch):
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    reg = _fresh_registry()
    with pytest.warns(RuntimeWarning, match="mscore_backend_overide"):
        reg.register_plugin(_Misspelt(), "typo")
    assert [f.plugin for f in reg.failures] == ["typo"]
    assert "unknown hook 'mscore_backend_overide'" in reg.failures[0].reason
    assert reg.pm.get_plugin("typo") is None
    reg.register_plugin(_Plugin([BackendSpec("good", "1", _numpy_factory)]), "good")
    assert reg.names() == ["good"]                              # the others still load
    monkeypatch.setenv("MSCORE_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError, match="mscore_backend_overide"):
        _fresh_registry().register_plugin(_Misspelt(), "typo")


class _DeclaresItself(ArrayModuleBackend):
    """A backend class that declares capabilities its spec does not."""

    capabilities = frozenset({"compile"})

    def __init__(self):
        super().__init__(np, "selfish")


def test_capabilities_come_from_the_spec_only(monkeypatch):
    monkeypatch.delenv("MSCORE_STRICT_PLUGINS", raising=False)
    reg = _fresh_registry()
    reg.register_plugin(_Plugin([BackendSpec("plain", "1", _numpy_factory,
                                             capabilities={"deterministic"}),
                                 BackendSpec("selfish", "1", _DeclaresItself)]), "p")
    assert reg.get("plain").capabilities == frozenset({"deterministic"})
    with pytest.raises(TypeError, match=r"Backend.capabilities \['compile'\] differs from "
                                        r"BackendSpec.capabilities \[\]"):
        reg.get("selfish")


# -- an impostor distribution whose entry point and backend are both named "torch" -----------
IMPOSTOR_PROBE = r"""
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from mscore.plugin.registry import get_registry
    reg = get_registry()
    names = reg.names()
print("RESULT" + json.dumps({
    "names": names, "collisions": reg.collisions,
    "torch": reg.spec("torch").distribution if "torch" in names else None,
    "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]}))
"""


def _real_torch_plugin_installed():
    from importlib import metadata
    return any(ep.name == "torch" for ep in
               metadata.entry_points().select(group="mscore.backends"))


def test_an_impostor_named_torch_is_never_chosen_silently(pip_target, run_py, tmp_path):
    if not _real_torch_plugin_installed():
        pytest.skip("mscore-torch is not installed: there is no real 'torch' to collide with")
    site = pip_target(PLUGINS / "impostor_torch")
    res = child_result(run_py(["-c", IMPOSTOR_PROBE], site))
    assert "torch" not in res["names"] and "numpy" in res["names"]
    why = res["collisions"]["torch"]
    assert "mscore-torch " in why and "mscore-test-impostor 0.0.1" in why, why
    assert "MSCORE_BACKEND_PLUGIN_TORCH=<distribution>" in why
    assert any("mscore-test-impostor" in w and "mscore-torch" in w for w in res["warnings"])
    for pin, chosen in (("mscore-torch", "mscore-torch "),
                        ("mscore_test_impostor", "mscore-test-impostor ")):
        res = child_result(run_py(["-c", IMPOSTOR_PROBE], site, MSCORE_BACKEND_PLUGIN_TORCH=pin))
        assert res["torch"].startswith(chosen) and not res["collisions"], res
    # The kit refuses to certify either: exit status 2 and one line naming both.
    proc = run_py(["-m", "mscore.conformance", "torch", "--report", str(tmp_path / "r.json")],
                  site, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("mscore conformance: backend 'torch' cannot be tested: backend "
                           "name 'torch' is claimed by 2 plugins"), line
    assert "mscore-torch" in line and "mscore-test-impostor" in line


def test_backends_table_wraps_a_long_capability_list_between_names():
    names = sorted(KNOWN_CAPABILITIES)
    lines = _wrapped(names)
    assert len(lines) > 1 and "".join(lines).split(",") == names
    assert all(len(line.rstrip(",")) <= CAPABILITIES_WIDTH for line in lines)
    assert _wrapped(["compile"]) == ("compile",) and _wrapped([]) == ("-",)
