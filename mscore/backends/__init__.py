"""Built-in backends: the numpy reference, and the array-module base CuPy reuses."""
