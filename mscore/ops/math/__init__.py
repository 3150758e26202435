"""Elementwise math: arithmetic, comparisons, exponentials and logarithms, trigonometry,
complex parts, bit functions and special functions."""
