"""The public conformance kit: the same tests over every installed backend."""
