"""Pyomo builders, one module per system: ``build(instance, *, relax=False, ...) -> Built``."""
