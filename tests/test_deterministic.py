"""``mscore.set_deterministic``: MindSpore's checks (recorded oracle), the backend's optional
``set_deterministic`` hook, per-device declarations, and torch's global switches."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import mscore as ms
from mscore.backends.numpy.backend import ArrayModuleBackend
from mscore.plugin import hookspecs
from mscore.plugin.backend import OPTIONAL_METHODS, BackendSpec
from mscore.plugin.registry import get_registry

ORACLE = json.loads((Path(__file__).parent / "data" / "deterministic_oracle.json").read_text())


@pytest.fixture(autouse=True)
def _flag_off_afterwards():
    yield
    ms.set_context(backend="numpy", device_target="CPU", device_id=0)
    ms.set_deterministic(False)


# -- MindSpore's behaviour ---------------------------------------------------------------------
@pytest.mark.parametrize("name", [n for n, r in ORACLE.items() if len(r["calls"]) <= 1])
def test_one_call_as_mindspore(name):
    ms.set_context(backend="numpy")
    record = ORACLE[name]
    if record["result"][0] == "OK":
        for arg in record["calls"]:
            ms.set_deterministic(arg)
        assert ms.get_context("deterministic") == record["result"][1]
    else:
        _, kind, message = record["result"]
        with pytest.raises({"TypeError": TypeError}[kind]) as exc:
            ms.set_deterministic(record["calls"][0])
        assert str(exc.value) == message
        assert ms.get_context("deterministic") == "OFF"


def test_switching_again_is_allowed_unlike_mindspore():
    # MindSpore allows one call per process (recorded); mscore lets the flag switch back.
    assert ORACLE["True then False"]["result"][1] == "RuntimeError"
    ms.set_context(backend="numpy")
    ms.set_deterministic(True)
    ms.set_deterministic(False)
    assert ms.get_context("deterministic") == "OFF"


# -- the optional backend hook -----------------------------------------------------------------
class _Recording(ArrayModuleBackend):
    """A numpy backend that records the switches it is told of and also takes "GPU"."""

    def __init__(self, name):
        super().__init__(np, name)
        self.switches = []

    def set_deterministic(self, flag):
        self.switches.append(flag)

    def set_device(self, device_target, device_id=0):
        self.device = device_target if device_target == "CPU" else f"GPU:{device_id}"


class _Plugin:
    def __init__(self, specs):
        self.specs = specs

    @hookspecs.hookimpl
    def mscore_register_backends(self):
        return self.specs


@pytest.fixture
def recorders():
    """Two recording backends: ``det_cpu`` deterministic on the CPU only, ``det_none``
    deterministic nowhere."""
    plugin = _Plugin([
        BackendSpec("det_cpu", "1", lambda: _Recording("det_cpu"), devices=("CPU", "GPU"),
                    capabilities={"deterministic"}, device_capabilities={"GPU": set()}),
        BackendSpec("det_none", "1", lambda: _Recording("det_none"))])
    registry = get_registry()
    registry.register_plugin(plugin, "det_recorders")
    try:
        yield registry
    finally:
        ms.set_context(backend="numpy", device_target="CPU", device_id=0)
        registry.pm.unregister(plugin)
        for name in ("det_cpu", "det_none"):
            registry.specs.pop(name, None)
            registry._built.pop(name, None)


def test_set_deterministic_is_an_optional_method():
    assert "set_deterministic" in OPTIONAL_METHODS


def test_the_backend_is_told_of_each_switch(recorders):
    ms.set_context(backend="det_cpu")
    backend = recorders.get("det_cpu")
    ms.set_deterministic(True)
    assert backend.switches == [True] and ms.get_context("deterministic") == "ON"
    ms.set_deterministic(False)
    assert backend.switches == [True, False] and ms.get_context("deterministic") == "OFF"


def test_a_backend_selected_while_on_is_told(recorders):
    ms.set_context(backend="numpy")
    ms.set_deterministic(True)
    ms.set_context(backend="det_cpu")
    assert recorders.get("det_cpu").switches == [True]


def test_undeclared_is_not_implemented_and_the_backend_is_not_told(recorders):
    ms.set_context(backend="det_none")
    with pytest.raises(NotImplementedError, match="backend 'det_none' does not declare the "
                                                  "'deterministic' capability on CPU"):
        ms.set_deterministic(True)
    assert recorders.get("det_none").switches == []
    assert ms.get_context("deterministic") == "OFF"
    ms.set_deterministic(False)     # switching off needs no capability
    assert recorders.get("det_none").switches == [False]


def test_the_declaration_is_per_device(recorders):
    ms.set_context(backend="det_cpu", device_target="GPU", device_id=0)
    with pytest.raises(NotImplementedError, match="'det_cpu' does not declare the "
                                                  "'deterministic' capability on GPU:0"):
        ms.set_deterministic(True)
    ms.set_context(device_target="CPU")
    ms.set_deterministic(True)
    assert recorders.get("det_cpu").switches == [True]


def test_moving_to_an_undeclared_device_while_on_is_refused(recorders):
    ms.set_context(backend="det_cpu")
    ms.set_deterministic(True)
    backend = recorders.get("det_cpu")
    with pytest.raises(NotImplementedError, match="'det_cpu' does not declare the "
                                                  "'deterministic' capability on GPU:1"):
        ms.set_context(device_target="GPU", device_id=1)
    assert (ms.get_context("device_target"), ms.get_context("device_id")) == ("CPU", 0)
    assert backend.device == "CPU" and ms.get_context("deterministic") == "ON"
    ms.set_deterministic(False)
    ms.set_context(device_target="GPU", device_id=1)     # allowed with the flag off
    assert backend.device == "GPU:1"


def test_selecting_an_undeclared_backend_while_on_is_refused(recorders):
    ms.set_context(backend="det_cpu")
    ms.set_deterministic(True)
    with pytest.raises(NotImplementedError, match="backend 'det_none' does not declare the "
                                                  "'deterministic' capability on CPU"):
        ms.set_context(backend="det_none")
    assert ms.get_context("backend") == "det_cpu"
    assert recorders.get("det_none").switches == []


def test_reset_switches_every_told_backend_back(recorders):
    from mscore import _state
    ms.set_context(backend="det_cpu")
    ms.set_deterministic(True)
    ms.set_context(backend="numpy")          # det_cpu stays switched on meanwhile
    _state.reset()
    assert recorders.get("det_cpu").switches == [True, False]
    assert ms.get_context("deterministic") == "OFF"
    assert _state.process.deterministic_backends == []


# -- the shipped backends ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["torch", "jax"])
def test_shipped_backends_declare_it_on_the_cpu_only(name):
    registry = get_registry()
    if name not in registry.names():
        pytest.skip(f"{name} backend is not installed")
    spec = registry.spec(name)
    assert "deterministic" in spec.capabilities_on("CPU")
    assert "deterministic" not in spec.capabilities_on("GPU")


@pytest.fixture
def torch_switches(monkeypatch):
    """torch's global deterministic switches, restored afterwards."""
    torch = pytest.importorskip("torch")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    saved = (torch.are_deterministic_algorithms_enabled(),
             torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    try:
        yield torch
    finally:
        torch.use_deterministic_algorithms(saved[0])
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved[1:]


def test_torch_switches_its_deterministic_algorithms(torch_switches):
    torch = torch_switches
    if "torch" not in get_registry().names():
        pytest.skip("torch backend is not installed")
    ms.set_context(backend="torch")
    torch.backends.cudnn.benchmark = True
    ms.set_deterministic(True)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    ms.set_deterministic(False)
    assert not torch.are_deterministic_algorithms_enabled()
    assert not torch.backends.cudnn.deterministic


def test_torch_keeps_a_cublas_workspace_setting_it_finds(torch_switches, monkeypatch):
    if "torch" not in get_registry().names():
        pytest.skip("torch backend is not installed")
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    ms.set_context(backend="torch")
    ms.set_deterministic(True)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"
    assert torch_switches.are_deterministic_algorithms_enabled()



def test_torch_warns_when_cuda_started_before_the_cublas_setting(torch_switches, monkeypatch):
    if "torch" not in get_registry().names():
        pytest.skip("torch backend is not installed")
    ms.set_context(backend="torch")
    monkeypatch.setattr(torch_switches.cuda, "is_initialized", lambda: True)
    with pytest.warns(RuntimeWarning, match="CUDA had started before CUBLAS_WORKSPACE_CONFIG"):
        ms.set_deterministic(True)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


@pytest.mark.parametrize("active", ["torch", "jax"])
def test_reset_turns_torchs_switch_off(active, torch_switches):
    """Whichever backend is active at reset (torch itself, or jax selected while the flag was
    on), torch's global deterministic switches go back off."""
    from mscore import _state
    for name in {"torch", active}:
        if name not in get_registry().names():
            pytest.skip(f"{name} backend is not installed")
    ms.set_context(backend="torch")
    ms.set_deterministic(True)
    ms.set_context(backend=active)
    assert torch_switches.are_deterministic_algorithms_enabled()
    _state.reset()
    assert ms.get_context("deterministic") == "OFF"
    assert not torch_switches.are_deterministic_algorithms_enabled()
    assert not torch_switches.backends.cudnn.deterministic
    ms.set_context(backend=active)
    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal((x * 3).asnumpy(), [3.0, 6.0])   # runs on after reset
