"""Entry point of the example backend (group ``mscore.backends``, name ``array_api_strict``).

Importing this module must stay cheap and must not fail when array-api-strict is missing:
the probe reports that, and mscore lists the backend as unavailable with the reason.
"""
from __future__ import annotations

from importlib import metadata

from mscore.plugin.backend import BackendSpec
from mscore.plugin.hookspecs import hookimpl

NAME = "array_api_strict"
DTYPES = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
# mscore's other dtypes, and why this backend leaves them out (``mscore backends`` and the
# conformance kit's skips show the reason).
UNDECLARED_DTYPES = {
    "float16": "the array API standard has no float16",
    "bfloat16": "the array API standard has no bfloat16",
    **{name: "not mapped by this example (the array API standard has it: add it to "
             "ArrayAPIBackend's dtype table and declare it)"
       for name in ("uint16", "uint32", "uint64")},
}


def _version():
    try:
        return metadata.version("array-api-strict")
    except metadata.PackageNotFoundError:
        return "not installed"


def probe():
    """``(available, reason, devices)`` without building the backend."""
    try:
        import array_api_strict  # noqa: F401
    except ImportError as exc:
        return False, f"array-api-strict cannot be imported: {exc}", []
    return True, "", ["CPU"]


def build():
    """Build the backend (imports array-api-strict)."""
    from mscore_array_api.backend import ArrayAPIBackend
    return ArrayAPIBackend()


@hookimpl
def mscore_register_backends():
    """One backend: CPU, float32/float64/integers/bool, reference autodiff."""
    return [BackendSpec(name=NAME, version=_version(), factory=build, devices=("CPU",),
                        dtypes=DTYPES, undeclared_dtypes=UNDECLARED_DTYPES,
                        capabilities={"deterministic"}, probe=probe,
                        description="array API standard backend (array-api-strict), "
                                    "an out-of-tree example")]
