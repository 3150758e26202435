"""The progress bar and ``LossMonitor`` on a terminal: a training run in a child process
whose stdout and stderr are one pseudo-terminal, as in a console. The loss lines must be
written above the bar (never glued to the end of its line), and each drawing of the bar
must show the loss of the step it counts."""
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time

import pytest

from conftest import subprocess_env

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")
pytest.importorskip("tqdm")

TRAINING = """
import time
import numpy as np
import mscore as ms
from mscore import nn
from mscore.dataset import NumpySlicesDataset
from mscore.train import Callback, LossMonitor, Model

class Slow(Callback):
    # Longer than tqdm's 0.1 s between drawings: the bar draws at every step.
    def on_train_step_end(self, run_context):
        time.sleep(0.15)

ms.set_context(backend="numpy")
ms.set_seed(0)
rng = np.random.default_rng(0)
x = rng.standard_normal((8, 4)).astype(np.float32)
y = x[:, :3].argmax(1).astype(np.int32)
net = nn.Dense(4, 3)
model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
              nn.Momentum(net.trainable_params(), 0.1, 0.9))
model.train(2, NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(2),
            callbacks=[LossMonitor(1), Slow()])
print("done")
"""


def _run_on_a_terminal(code, timeout=120):
    """stdout and stderr of ``python -c code`` on one pseudo-terminal of 30 x 120, as text."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    env = subprocess_env()
    env.pop("MSCORE_PROGRESS", None)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                data = os.read(master, 65536)
            except OSError:          # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=max(1, deadline - time.monotonic())) == 0, \
            b"".join(chunks).decode(errors="replace")[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return b"".join(chunks).decode()


def test_loss_lines_are_written_above_the_bar_which_shows_the_current_loss():
    text = _run_on_a_terminal(TRAINING)
    rows = [row.rstrip("\r") for row in text.split("\n")]
    loss_rows = [row for row in rows if "loss is" in row]
    assert len(loss_rows) == 8, text
    losses = {}
    for row in loss_rows:
        shown = row.rsplit("\r", 1)[-1]          # what stays on the screen's line
        match = re.fullmatch(r"epoch: (\d) step: (\d), loss is ([\d.e+-]+)", shown.strip())
        assert match, f"a loss line that does not start its own line: {row!r}"
        losses[int(match[1]), int(match[2])] = float(match[3])
    # Every drawing of a bar of epoch E at k/4 that shows a loss shows step k's.
    drawings = re.findall(r"epoch (\d)/2:[^\r\n]*? (\d)/4 \[[^\]]*loss=([\d.]+)\]", text)
    counted = {(int(e), int(k)) for e, k, _ in drawings}
    assert {(1, 4), (2, 4)} <= counted and len(counted) >= 6, text
    for epoch, step, shown in drawings:
        assert shown == f"{losses[int(epoch), int(step)]:.4f}", (epoch, step, text)
    assert rows[-2].rsplit("\r", 1)[-1] == "done" or "done" in rows[-1], text
