"""``mscore compare`` never reports agreement it did not measure: user code that calls
``sys.exit`` (the script, the factory, the dataset) or a dataset that raises is exit 2 with
one line naming what happened; ``--timeout`` gives up with exit 2."""
import pytest

from mscore.cli import main

FACTORY = '''
import sys
import numpy as np
import mscore as ms
from mscore import nn

def _parts(dataset):
    net = nn.Dense(3, 2)
    return (net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1), dataset)

def _rows():
    x = np.ones((8, 3), np.float32)
    return ms.dataset.NumpySlicesDataset((x, x[:, :2]), shuffle=False).batch(4)

def exits_in_factory():
    sys.exit(0)

class _Exits:
    def __getitem__(self, i):
        sys.exit(0)
    def __len__(self):
        return 8

class _Raises:
    def __getitem__(self, i):
        raise OSError("the disk went away")
    def __len__(self):
        return 8

def exits_in_dataset():
    return _parts(ms.dataset.GeneratorDataset(_Exits(), ["x", "y"]).batch(4))

def raises_in_dataset():
    return _parts(ms.dataset.GeneratorDataset(_Raises(), ["x", "y"]).batch(4))

def slow():
    import time
    time.sleep(30)
    return _parts(_rows())
'''


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "factories.py"
    path.write_text(FACTORY)
    return path


def _one_line(capsys):
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return captured.err.strip()


@pytest.mark.parametrize("factory, message", [
    ("exits_in_factory", "the factory called sys.exit(0)"),
    ("exits_in_dataset", "the dataset called sys.exit(0)"),
    ("raises_in_dataset", "the dataset failed at batch 1: RuntimeError: GeneratorDataset "
                          "source raised OSError: the disk went away")])
def test_user_code_that_exits_or_fails_is_exit_2(script, factory, message, capsys):
    status = main(["compare", f"{script}:{factory}", "--backends", "numpy,torch",
                   "--steps", "2"])
    out = capsys.readouterr()
    assert status == 2, out
    assert message in out.out + out.err
    assert "agree" not in (out.out + out.err).lower().replace("disagree", "")


def test_a_script_that_exits_at_import_is_exit_2(tmp_path, capsys):
    path = tmp_path / "exits.py"
    path.write_text("import sys\nsys.exit(0)\ndef build():\n    pass\n")
    assert main(["compare", f"{path}:build", "--backends", "numpy,torch"]) == 2
    err = _one_line(capsys)
    assert err.count("\n") == 0 and "called sys.exit(0)" in err


def test_timeout_gives_up_with_exit_2(script, capsys):
    assert main(["compare", f"{script}:slow", "--backends", "numpy,torch", "--timeout",
                 "1"]) == 2
    err = _one_line(capsys)
    assert err.count("\n") == 0 and "did not finish within 1 s" in err
