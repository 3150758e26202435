"""mscore-torch: the PyTorch backend plugin of mscore.

Installed, it registers the backend ``torch`` in the entry-point group ``mscore.backends``;
select it with ``mscore.set_context(backend="torch")`` (and ``device_target="GPU"`` for CUDA).
torch itself is imported only when the backend is probed or built.
"""
__version__ = "0.1.0"
