"""Linear algebra: matrix products and the matrix functions (determinants, solves,
decompositions, norms)."""
