"""mscore backend on array-api-strict (an out-of-tree example plugin)."""
__version__ = "0.1.0"
