"""Online algorithms, one subpackage per system, each a :class:`mlsched.sim.Policy`."""
