"""mscore-cupy: the CuPy backend plugin of mscore.

Installed, it registers the backend ``cupy`` in the entry-point group ``mscore.backends``;
select it with ``mscore.set_context(backend="cupy", device_target="GPU", device_id=N)``.
CuPy is imported only when the backend is probed or built, so ``import mscore`` stays fast
and a machine without CUDA lists ``cupy`` as unavailable (with the reason) instead of failing.
"""
__version__ = "0.1.0"
