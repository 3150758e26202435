"""Arrays: creation, shape manipulation, indexing and scatter, sorting and searching."""
