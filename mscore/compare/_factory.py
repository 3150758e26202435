"""The user's factory: where it is found, and what it built.

A factory is a function of no arguments returning ``(network, loss_fn, optimizer, dataset)``
or ``(model, dataset)`` where ``model`` is an :class:`mscore.train.Model`. It is called once
per backend, with that backend active and the seed just set, so every Parameter it creates
lives on that backend.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass

from mscore._optional import missing_dependency_hint
from mscore.compare.errors import CompareSetupError
from mscore.nn.cell import Cell
from mscore.train import Model


def load_factory(spec):
    """The callable named by ``"module.path:function"`` or ``"path/to/script.py:function"``.

    A script is executed as a fresh module (its ``if __name__ == "__main__"`` block does not
    run); a module is imported. Any failure is a :class:`CompareSetupError` naming ``spec``.
    """
    if not isinstance(spec, str):
        raise TypeError(f"factory: expected 'SCRIPT_OR_MODULE:FACTORY' or a callable, got "
                        f"{type(spec).__name__}")
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr.isidentifier():
        raise CompareSetupError(f"factory: expected 'SCRIPT_OR_MODULE:FACTORY' (for example "
                                f"'train.py:build' or 'mypkg.models:build'), got {spec!r}")
    module = _load_script(where) if where.endswith(".py") else _import_module(where)
    try:
        factory = getattr(module, attr)
    except AttributeError:
        raise CompareSetupError(f"factory: {where!r} has no attribute {attr!r}") from None
    if not callable(factory):
        raise CompareSetupError(f"factory: {spec!r} is a {type(factory).__name__}, not a "
                                f"function")
    return factory


def _load_script(path):
    if not os.path.isfile(path):
        raise CompareSetupError(f"factory: the script {path!r} does not exist")
    name = "_mscore_compare_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    folder = os.path.dirname(os.path.abspath(path))
    added = folder not in sys.path
    if added:  # the script's sibling modules import as they do when it runs as a script
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except SystemExit as exc:
        sys.modules.pop(name, None)
        raise CompareSetupError(f"factory: running {path!r} called sys.exit({exc.code!r}); "
                                f"nothing was compared (keep the script's own work under "
                                f"'if __name__ == \"__main__\":')") from None
    except Exception as exc:
        sys.modules.pop(name, None)
        raise CompareSetupError(f"factory: running {path!r} failed: "
                                f"{_reason(exc)}") from exc
    return module


def _import_module(name):
    try:
        return importlib.import_module(name)
    except SystemExit as exc:
        raise CompareSetupError(f"factory: importing {name!r} called sys.exit({exc.code!r}); "
                                f"nothing was compared") from None
    except Exception as exc:
        raise CompareSetupError(f"factory: importing {name!r} failed: "
                                f"{_reason(exc)}") from exc


def _reason(exc):
    """Why importing the factory failed: the install line of a missing optional dependency,
    else the exception."""
    return missing_dependency_hint(exc) or f"{type(exc).__name__}: {exc}"


@dataclass
class Trainee:
    """What one factory call built on one backend, normalised to a Model."""

    model: object          # mscore.train.Model
    network: object        # the network whose parameters are compared
    optimizer: object
    dataset: object
    amp_level: str


def build_trainee(factory, amp_level):
    """Call ``factory()`` and wrap its result in a :class:`Trainee`.

    ``amp_level`` (None for "the factory decides") applies to the 4-tuple form; a factory
    returning a Model keeps the Model's own level, and giving one too is an error.
    """
    result = factory()
    if not isinstance(result, (tuple, list)):
        raise CompareSetupError(f"factory: expected it to return (network, loss_fn, optimizer, "
                                f"dataset) or (model, dataset), got {type(result).__name__}")
    if len(result) == 2 and isinstance(result[0], Model):
        model, dataset = result
        level = getattr(model, "_amp_level", "O0")
        if amp_level is not None and amp_level != level:
            raise CompareSetupError(f"amp_level: the factory returns a Model built with "
                                    f"amp_level={level!r}; --amp/amp_level={amp_level!r} cannot "
                                    f"change it (leave it out, or return the 4-tuple)")
        amp_level = level
    elif len(result) == 4:
        network, loss_fn, optimizer, dataset = result
        for what, value in (("network", network), ("loss_fn", loss_fn),
                            ("optimizer", optimizer)):
            if not isinstance(value, Cell):
                raise CompareSetupError(f"factory: the {what} it returned is a "
                                        f"{type(value).__name__}, expected an mscore Cell")
        amp_level = amp_level or "O0"
        model = Model(network, loss_fn, optimizer, amp_level=amp_level)
    else:
        raise CompareSetupError(f"factory: expected (network, loss_fn, optimizer, dataset) or "
                                f"(model, dataset), got a {type(result).__name__} of "
                                f"{len(result)} item(s)")
    optimizer = getattr(model.train_network, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "parameters"):
        raise CompareSetupError("factory: the model has no optimizer; compare trains it, so "
                                "give one")
    if dataset is None:
        raise CompareSetupError("factory: the dataset it returned is None")
    return Trainee(model=model, network=model.predict_network, optimizer=optimizer,
                   dataset=dataset, amp_level=amp_level)
