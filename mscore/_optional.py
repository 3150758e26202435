"""mscore's optional dependencies: which extra of the ``mscore`` distribution brings each one,
and the one line that tells a user how to get a missing one.

An optional library is imported where it is used; when it is missing, the ``ModuleNotFoundError``
names the module, and :func:`missing_dependency_hint` turns that name into an install line. The
commands print that line instead of a traceback (``mscore/commands``).
"""
from __future__ import annotations

# top-level import name -> (distribution name, the extra of mscore that installs it)
OPTIONAL_MODULES = {
    "sklearn": ("scikit-learn", "demo"),
    "threadpoolctl": ("threadpoolctl", "demo"),
    "matplotlib": ("matplotlib", "plot"),
    "tqdm": ("tqdm", "progress"),
    "onnx": ("onnx", "onnx"),
    "safetensors": ("safetensors", "safetensors"),
    "cryptography": ("cryptography", "crypto"),
    "PIL": ("pillow", "vision"),
    "pytest": ("pytest", "conformance"),
}


def install_line(module):
    """How to install the optional top-level ``module`` (an import name such as ``"sklearn"``),
    or None when it is not one of mscore's optional dependencies."""
    known = OPTIONAL_MODULES.get(module.split(".")[0]) if module else None
    if known is None:
        return None
    distribution, extra = known
    return (f"{distribution} is not installed: install mscore with its [{extra}] extra "
            f"(pip install -e \".[{extra}]\" in a clone of mscore) or pip install "
            f"{distribution}")


def missing_dependency_hint(exc):
    """The install line for a ``ModuleNotFoundError`` (or one it was raised from) that names an
    optional dependency, else None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            line = install_line(exc.name)
            if line is not None:
                return line
        exc = exc.__cause__ or exc.__context__
    return None
