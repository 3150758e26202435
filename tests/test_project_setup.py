"""The project's packaging and CI script: SPDX license strings, and `.ci/run` installing the
CUDA build of CuPy only where an NVIDIA GPU is present."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECTS = ("pyproject.toml", "plugins/torch_backend/pyproject.toml",
              "plugins/jax_backend/pyproject.toml", "plugins/cupy_backend/pyproject.toml")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


@pytest.mark.parametrize("path", PYPROJECTS)
def test_license_is_an_spdx_string_and_setuptools_reads_it(path):
    """A license table makes setuptools print a 15-line deprecation warning per build."""
    data = tomllib.loads((ROOT / path).read_text())
    assert data["project"]["license"] == "Apache-2.0"
    requires = data["build-system"]["requires"]
    # SPDX strings need setuptools 77; an older one rejects the string form.
    floors = [re.fullmatch(r"setuptools\s*>=\s*(\d+)(\.\d+)*", r) for r in requires]
    assert any(m and int(m.group(1)) >= 77 for m in floors), requires


def _ci(script, tmp_path, nvidia_smi=None):
    """Run bash ``script`` after sourcing .ci/run, with a fake ``nvidia-smi`` (printing
    ``nvidia_smi`` and exiting 0; None: a failing one) first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "nvidia-smi"
    if nvidia_smi is None:
        fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed: no driver' >&2\nexit 9\n")
    else:
        fake.write_text("#!/bin/sh\ncat <<'EOF'\n" + nvidia_smi + "\nEOF\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "MSCORE_CI_GPU"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    proc = subprocess.run(["bash", "-c", f"source {ROOT / '.ci' / 'run'}\n{script}"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert "Traceback" not in proc.stderr
    return proc


def _installed(tmp_path, nvidia_smi, dev_nodes=()):
    """The pip arguments .ci/run's install step uses (a stub python records them)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    stub = venv / "bin" / "python"
    stub.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'args'}\n")
    stub.chmod(0o755)
    dev = tmp_path / "dev"
    dev.mkdir()
    for node in dev_nodes:
        (dev / node).write_text("")
    proc = _ci(f"install {venv} {dev}", tmp_path, nvidia_smi)
    assert proc.returncode == 0, proc.stderr
    return (tmp_path / "args").read_text().split()


H100 = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0a1b2c3d-0000-1111-2222-333344445555)"
BANNER = "| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: {} |"


def test_ci_installs_the_cupy_plugin_without_cuda_where_there_is_no_gpu(tmp_path):
    args = _installed(tmp_path, None)
    assert "plugins/cupy_backend" in args
    assert not any("cuda" in a for a in args), args
    assert "torch==2.13.0" in args and "--no-compile" in args


def test_ci_installs_the_cuda_build_where_a_gpu_is_listed(tmp_path):
    args = _installed(tmp_path, H100)
    assert "plugins/cupy_backend[cuda12x]" in args


def test_ci_sees_a_gpu_by_its_device_node_when_nvidia_smi_fails(tmp_path):
    args = _installed(tmp_path, None, dev_nodes=("nvidia0", "nvidiactl"))
    assert "plugins/cupy_backend[cuda12x]" in args


def test_ci_ignores_device_nodes_that_are_no_gpu(tmp_path):
    args = _installed(tmp_path, None, dev_nodes=("nvidiactl", "nvidia-uvm"))
    assert "plugins/cupy_backend" in args


@pytest.mark.parametrize("cuda, extra", [("12.4", "cuda12x"), ("13.0", "cuda13x"),
                                         ("11.8", "cuda12x")])
def test_ci_picks_the_cupy_wheel_of_the_driver_cuda_version(tmp_path, cuda, extra):
    proc = _ci("cupy_extra", tmp_path, H100 + "\n" + BANNER.format(cuda))
    assert proc.stdout.strip() == extra


def test_ci_gpu_override(tmp_path):
    proc = _ci("MSCORE_CI_GPU=1 has_nvidia_gpu && echo yes; "
               "MSCORE_CI_GPU=0 has_nvidia_gpu || echo no", tmp_path, H100)
    assert proc.stdout.split() == ["yes", "no"]


def test_ci_runs_again_on_the_lowest_numpy_pyproject_allows(tmp_path):
    """The second CI run installs the numpy floor pyproject.toml declares (read from it, so
    raising the floor moves the run), and its test files exist."""
    floor = re.search(r'"numpy>=([0-9.]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    proc = _ci(f"cd {ROOT} && numpy_floor_version && printf '%s\\n' "
               f"\"${{NUMPY_FLOOR_TESTS[@]}}\"", tmp_path)
    assert proc.returncode == 0, proc.stderr
    version, *files = proc.stdout.split()
    assert version == floor
    assert files and all((ROOT / f).is_file() for f in files)
