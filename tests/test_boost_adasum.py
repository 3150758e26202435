"""AdaSum (boost level O2) across two processes on 127.0.0.1, against numpy.

``tests/boost_dp_worker.py`` runs on 2 workers started by ``mscore run`` (the helpers of
``tests/test_data_parallel.py``: a free port, the launcher in its own session, killed on
timeout). Each rank trains a linear model with SGD on its half of each batch; with
``device_number`` 1 the two processes are two server groups and AdaSum combines their weight
changes, with the default 8 the step falls back to averaging the gradients. The references are
computed here in numpy from the same data; so is a gradient-freezing run (level O1), whose
per-group cells all-reduce their own group's gradients. The default run launches the numpy
backend (over torch's gloo); ``MSCORE_SLOW_TESTS=1`` adds torch and jax with the step
compiled.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends
from test_data_parallel import mscore_run, run_job

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import boost_dp_worker as W  # noqa: E402

SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"


def _grads(w, b, x, y):
    """Gradients of mean((x w' + b - y)^2) (numpy)."""
    out = x @ w.T + b
    d = 2.0 * (out - y) / out.size
    return d.T @ x, d.sum(0)


def _adasum(a, b):
    shape = a.shape
    a, b = a.ravel(), b.ravel()
    dot = a @ b
    return ((1 - dot / (2 * (a @ a))) * a + (1 - dot / (2 * (b @ b))) * b).reshape(shape)


def reference(config):
    """Weights and biases after every step, as the two ranks should have them."""
    x, y = W.data()
    w, b = [v.astype(np.float64) for v in W.initial_weights(3)]
    half = W.BATCH // 2
    weights, biases = [], []
    for step in range(W.STEPS):
        (gw0, gb0), (gw1, gb1) = [_grads(w, b, x[step, r * half:(r + 1) * half],
                                         y[step, r * half:(r + 1) * half]) for r in (0, 1)]
        if config == "adasum":
            w = w - _adasum(W.LR * gw0, W.LR * gw1)
            b = b - _adasum(W.LR * gb0, W.LR * gb1)
        else:
            w = w - W.LR * (gw0 + gw1) / 2
            b = b - W.LR * (gb0 + gb1) / 2
        weights.append(w)
        biases.append(b)
    return np.stack(weights), np.stack(biases)


def freeze_reference():
    """The chain's weights after every step of the 0 1 0 1 freezing schedule, trained on the
    whole batches (what two ranks averaging their halves' gradients must give)."""
    x, y = W.data()
    ws = [w.astype(np.float64) for w in W.chain_weights(5)]
    out = []
    for step in range(W.STEPS):
        acts = [x[step].astype(np.float64)]
        for w in ws:
            acts.append(acts[-1] @ w.T)
        d = 2.0 * (acts[-1] - y[step]) / acts[-1].size
        grads = [None] * len(ws)
        for i in reversed(range(len(ws))):
            grads[i] = d.T @ acts[i]
            d = d @ ws[i]
        for i in (range(len(ws)) if step % 2 == 0 else [len(ws) - 1]):
            ws[i] = ws[i] - W.LR * grads[i]
        out.append(np.concatenate([w.ravel() for w in ws]))
    return np.stack(out)


def _launch(tmp_path, backend, mode):
    out = tmp_path / f"{backend}-{mode}"
    out.mkdir()
    proc = run_job(mscore_run(HERE / "boost_dp_worker.py", "--backend", backend, "--mode", mode,
                              "--out", out), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [dict(np.load(out / f"rank{r}.npz")) for r in (0, 1)]


def _check(ranks):
    for config in ("adasum", "fallback"):
        want_w, want_b = reference(config)
        for rank, got in enumerate(ranks):
            assert bool(got[f"{config}_enabled"]) == (config == "adasum"), (config, rank)
            np.testing.assert_allclose(got[f"{config}_weights"], want_w, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{config} rank {rank}")
            np.testing.assert_allclose(got[f"{config}_biases"], want_b, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{config} rank {rank}")
    for rank, got in enumerate(ranks):
        np.testing.assert_allclose(got["freeze_weights"], freeze_reference(), rtol=1e-5,
                                   atol=1e-6, err_msg=f"freeze rank {rank}")
    # the data makes the ranks disagree, so AdaSum is not the average
    assert np.abs(reference("adasum")[0] - reference("fallback")[0]).max() > 1e-2


def test_adasum_two_processes_numpy(tmp_path):
    if "numpy" not in available_backends():
        pytest.skip("numpy backend unavailable")
    from mscore.backends.numpy.collectives import torch_installed
    if not torch_installed():
        pytest.skip("the numpy backend's collectives run on torch.distributed (gloo)")
    _check(_launch(tmp_path, "numpy", "pynative"))


@pytest.mark.skipif(not SLOW, reason="set MSCORE_SLOW_TESTS=1 for AdaSum in compiled steps")
@pytest.mark.parametrize("backend", [b for b in available_backends() if b in ("torch", "jax")])
def test_adasum_two_processes_compiled(tmp_path, backend):
    _check(_launch(tmp_path, backend, "graph"))
