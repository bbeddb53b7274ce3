"""cujit's version (a leaf module: the cache keys on it)."""

__version__ = "0.1.0"
