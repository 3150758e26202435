"""What to tell a user who asked for a backend that is not installed: the closest name, and how
to install the project's own plugins.

The project's plugins (torch, jax, cupy) are not published on a package index yet, so the only
install that works is from a clone of the repository. A name that is none of them gets no
install command at all: a backend comes from whatever distribution registers it, and guessing a
package name sends users to a package that does not exist.
"""
from __future__ import annotations

import difflib

# The plugins shipped in this repository: backend name -> the pip argument that installs it
# from the root of a clone.
PROJECT_PLUGINS = {
    "torch": "-e plugins/torch_backend",
    "jax": "-e plugins/jax_backend",
    "cupy": '-e "plugins/cupy_backend[cuda12x]"',
}


def closest_name(name, candidates):
    """The candidate ``name`` most likely meant (same name in another case, else the closest
    spelling), or None."""
    if not isinstance(name, str) or not name:
        return None
    candidates = sorted(set(candidates))
    for candidate in candidates:
        if candidate.lower() == name.lower():
            return candidate
    lowered = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


def install_hint(name):
    """How to install the project's plugin ``name`` (from a clone), or None for any other name."""
    target = PROJECT_PLUGINS.get(name)
    if target is None:
        return None
    return (f"install it from a clone of mscore with 'pip install {target}' "
            f"(the plugins are not on PyPI yet)")


def unknown_backend_detail(name, installed):
    """One sentence for a backend ``name`` that is not among ``installed``: the closest name,
    the installed ones, and an install command only where one exists."""
    installed = sorted(installed)
    guess = None if name in PROJECT_PLUGINS else \
        closest_name(name, installed + list(PROJECT_PLUGINS))
    parts = [f"{name!r} is not installed" + ("" if guess is None else
                                              f" (did you mean {guess!r}?)")]
    parts.append(f"installed backends: {', '.join(installed) or 'none'}")
    meant = name if name in PROJECT_PLUGINS else guess
    if meant is not None and meant not in installed:
        parts.append(f"{meant!r} is a plugin of this project: {install_hint(meant)}")
    elif meant is None:
        parts.append("a backend comes with the distribution that registers it under the "
                     "'mscore.backends' entry point group")
    return "; ".join(parts)
