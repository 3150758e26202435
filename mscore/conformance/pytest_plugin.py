"""pytest plugin of the conformance kit (registered under ``pytest11``; inert unless asked)."""
