"""Instance generators, one module per system, each reproducing its paper's settings."""

from mlsched.instance.generators.oasis import generate_oasis

__all__ = ["generate_oasis"]
