"""GPU cluster topology of the Themis family: racks -> machines -> slots -> GPUs (Themis §1.1).

GPUs carry stable integer ids in pool order (rack, machine, slot, gpu). The placement level of a
GPU set is 0 (one slot), 1 (one machine), 2 (one rack) or 3 (several racks); the topology is
also available as a networkx tree (``graph``). A heterogeneous cluster names the GPU type of each
machine (``machine_types``, e.g. ``v100``); an untyped cluster leaves it empty.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np


@dataclass(frozen=True)
class GpuTopology:
    """``machines[m] = (rack, [GPUs per slot, ...])``; GPU ids follow pool order;
    ``machine_types[m]`` the GPU type of machine m (all machines, or none)."""

    machines: tuple[tuple[int, tuple[int, ...]], ...]
    machine_types: tuple[str, ...] = ()

    @classmethod
    def uniform(cls, racks: int, machines_per_rack: int, slots_per_machine: int, gpus_per_slot: int) -> GpuTopology:
        return cls(tuple((r, (gpus_per_slot,) * slots_per_machine) for r in range(racks) for _ in range(machines_per_rack)))

    @cached_property
    def gpu_table(self) -> np.ndarray:
        """(rack, machine, slot) of every GPU id, shape (G, 3)."""
        rows = [(rack, m, s) for m, (rack, slots) in enumerate(self.machines) for s, n in enumerate(slots) for _ in range(n)]
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    @property
    def num_gpus(self) -> int:
        return len(self.gpu_table)

    def machine_of(self, gpu: int) -> int:
        return self._places[1][gpu]

    def rack_of(self, gpu: int) -> int:
        return self._places[0][gpu]

    @property
    def typed(self) -> bool:
        return bool(self.machine_types)

    @cached_property
    def type_names(self) -> tuple[str, ...]:
        """The GPU types in order of first appearance in the pool."""
        return tuple(dict.fromkeys(self.machine_types))

    @cached_property
    def gpu_types(self) -> tuple[str, ...]:
        """The GPU type of every GPU id (empty for an untyped cluster)."""
        if not self.typed:
            return ()
        return tuple(self.machine_types[m] for m in self.gpu_table[:, 1].tolist())

    @cached_property
    def _places(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """Rack, machine and (machine, slot) number of every GPU id, as tuples: ``level`` runs
        millions of times per simulation on sets of a few GPUs, where tuple lookups beat numpy."""
        table = self.gpu_table
        slot_key = table[:, 1] * (int(table[:, 2].max(initial=0)) + 1) + table[:, 2]
        return tuple(table[:, 0].tolist()), tuple(table[:, 1].tolist()), tuple(slot_key.tolist())

    @cached_property
    def _hash(self) -> int:
        return hash((self.machines, self.machine_types))

    def __hash__(self) -> int:
        """The fields' hash, computed once: a topology is part of the key of the physics' placement
        cache, looked up at every re-split."""
        return self._hash

    @cached_property
    def _levels(self) -> dict[frozenset[int], int]:
        """The level of every GPU set asked for as a frozenset (the simulator, its checker and the
        estimator ask for the same job GPU sets again and again)."""
        return {}

    def level(self, gpus: Iterable[int]) -> int:
        """0 one slot, 1 one machine, 2 one rack, 3 otherwise (a single GPU is level 0)."""
        if isinstance(gpus, frozenset):
            known = self._levels.get(gpus)
            if known is None:
                known = self._levels[gpus] = self._level(gpus)
            return known
        return self._level(gpus)

    def _level(self, gpus: Iterable[int]) -> int:
        ids = list(gpus)
        if len(ids) <= 1:
            return 0
        rack, machine, slot = self._places
        first = ids[0]
        if any(rack[g] != rack[first] for g in ids):
            return 3
        if any(machine[g] != machine[first] for g in ids):
            return 2
        return 0 if all(slot[g] == slot[first] for g in ids) else 1

    @cached_property
    def graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        for gpu, (rack, machine, slot) in enumerate(self.gpu_table):
            g.add_edge(("rack", int(rack)), ("machine", int(machine)))
            g.add_edge(("machine", int(machine)), ("slot", int(machine), int(slot)))
            g.add_edge(("slot", int(machine), int(slot)), ("gpu", gpu))
        return g
