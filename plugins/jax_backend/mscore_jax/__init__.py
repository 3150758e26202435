"""mscore-jax: the JAX backend plugin of mscore (entry point ``jax`` in ``mscore.backends``).

``pip install -e plugins/jax_backend`` then ``ms.set_context(backend="jax")``. JAX itself is
imported only when the backend is first selected (or probed), so ``import mscore`` stays fast.
"""
__version__ = "0.1.0"
