"""The built-in numpy reference backend (the conformance suite's golden reference)."""
