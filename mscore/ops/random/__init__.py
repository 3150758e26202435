"""Random draws from the backend's stream (distributions, dropout) and ``Generator``."""
