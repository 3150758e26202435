"""What the worker processes of ``test_dataset_workers.py`` run: a module with light imports,
so that a worker (which imports it to unpickle these functions) starts quickly."""
import ctypes
import os
import random
import signal
import threading

import numpy as np


def pid_of(x):
    return np.array(os.getpid(), np.int64)


def plus_ten(x):
    return x + 10


def noisy(x):
    return x * 1000 + np.random.randint(1000) + random.randrange(7) * 10 ** 6


def die(x):
    if x == 3:
        os._exit(3)
    return x


def kill_self(x):
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def segfault(x):
    if x == 3:
        ctypes.string_at(0)
    return x


def to_none(x):
    return None


class Locked:
    def __init__(self):
        self.lock = threading.Lock()

    def __call__(self, x):
        return x


class Broken:
    def __getitem__(self, i):
        if i == 2:
            raise KeyError("row 2 is gone")
        return (np.float32(i),)

    def __len__(self):
        return 4


def hang_on_row_2(x):
    if x == 2:
        threading.Event().wait()
    return x


class _Unsendable(np.ndarray):
    """An array that refuses to be pickled (so it cannot leave a worker)."""

    def __reduce__(self):
        raise TypeError("this array refuses to be pickled")


def unsendable(x):
    return np.asarray(x).view(_Unsendable)


def _refuse_to_load():
    raise ValueError("this array refuses to be unpickled")


class _Unloadable(np.ndarray):
    """An array that pickles, but whose unpickling raises."""

    def __reduce__(self):
        return _refuse_to_load, ()


def unloadable(x):
    return np.asarray(x).view(_Unloadable)
