"""The conformance kit's tests; every ``test_*.py`` here is collected (see ``kit`` fixture)."""
