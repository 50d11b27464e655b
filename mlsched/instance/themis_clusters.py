"""Cluster presets of the Themis experiments (spec §5.2), as :class:`GpuTopology` values.

- ``testbed64``: the 64-GPU testbed, 8 machines with 2 GPUs then 12 machines with 4 GPUs (Azure
  NC12 and NC24, K80s), one rack, one GPU per slot (A22).
- ``sim_hetero``: the simulator's footnote cluster exactly as listed (A23): 16 machines with 8
  GPUs (4 slots x 2), 6 with 4 GPUs (4 slots x 1), 16 with 1 GPU; 168 GPUs; machines in that
  order, 4 per rack (10 racks, the last one holds 2 machines).
- ``sim_256``: 32 machines with 8 GPUs (4 slots x 2), 4 per rack (8 racks), 256 GPUs (A23).
- ``truth64``: the truth-telling study, one 8-GPU machine (4 slots x 2) then 28 machines with 2
  GPUs in one slot, 64 GPUs. The paper gives no racks; one rack, as for the testbed.
- ``testbed(gpus)``: a testbed-like cluster of any even size (Fig. 14 contention: 32 and 16
  GPUs). It holds ``a`` 2-GPU machines then ``b`` 4-GPU machines with 2a + 4b = gpus, the pair
  closest to the testbed's 8:12 = 2:3 machine ratio (least |3a - 2b|; ties: fewer machines);
  one rack, one GPU per slot. 64 GPUs give ``testbed64``, 32 give 4 + 6, 16 give 2 + 3.
- ``gavel108``: Gavel's heterogeneous simulation cluster, 36 V100 + 36 P100 + 36 K80 GPUs; here
  machines of 4 GPUs (one per slot), one rack per GPU type, V100 machines first in pool order, then
  P100, then K80 (Gavel's order of worker types). ``gavel(n)`` has n GPUs of each type (n a
  multiple of 4). Gavel's simulator ignores placement; the apps of its traces carry flat profiles.
"""

from __future__ import annotations

from collections.abc import Callable

from mlsched.errors import UsageError
from mlsched.instance.gpu_topology import GpuTopology


def testbed(gpus: int) -> GpuTopology:
    """A testbed-like cluster of ``gpus`` GPUs (even, >= 2): 2- and 4-GPU machines in one rack."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 2 or gpus % 2:
        raise UsageError(f"a testbed-like cluster needs an even number of GPUs >= 2 (2- and 4-GPU machines), got {gpus}")
    pairs = [((gpus - 4 * b) // 2, b) for b in range(gpus // 4 + 1)]
    small, large = min(pairs, key=lambda ab: (abs(3 * ab[0] - 2 * ab[1]), ab[0] + ab[1]))
    return GpuTopology(((0, (1, 1)),) * small + ((0, (1, 1, 1, 1)),) * large)


GAVEL_TYPES = ("v100", "p100", "k80")
GAVEL_MACHINE_GPUS = 4


def gavel(per_type: int) -> GpuTopology:
    """``per_type`` GPUs of each of V100, P100 and K80 in 4-GPU machines, one rack per type."""
    if isinstance(per_type, bool) or not isinstance(per_type, int) or per_type < GAVEL_MACHINE_GPUS \
            or per_type % GAVEL_MACHINE_GPUS:
        raise UsageError(f"a Gavel-like cluster needs a multiple of {GAVEL_MACHINE_GPUS} GPUs of each of "
                         f"{', '.join(GAVEL_TYPES)}, got {per_type}")
    machines = per_type // GAVEL_MACHINE_GPUS
    return GpuTopology(tuple((rack, (1,) * GAVEL_MACHINE_GPUS) for rack in range(len(GAVEL_TYPES))
                             for _ in range(machines)),
                       tuple(t for t in GAVEL_TYPES for _ in range(machines)))


def gavel108() -> GpuTopology:
    return gavel(36)


def testbed64() -> GpuTopology:
    return testbed(64)


def sim_hetero() -> GpuTopology:
    kinds = [(2, 2, 2, 2)] * 16 + [(1, 1, 1, 1)] * 6 + [(1,)] * 16
    return GpuTopology(tuple((m // 4, slots) for m, slots in enumerate(kinds)))


def sim_256() -> GpuTopology:
    return GpuTopology.uniform(racks=8, machines_per_rack=4, slots_per_machine=4, gpus_per_slot=2)


def truth64() -> GpuTopology:
    return GpuTopology(((0, (2, 2, 2, 2)),) + ((0, (2,)),) * 28)


PRESETS: dict[str, Callable[[], GpuTopology]] = {
    "testbed64": testbed64, "sim_hetero": sim_hetero, "sim_256": sim_256, "truth64": truth64, "gavel108": gavel108,
}


def preset(name: str) -> GpuTopology:
    if name not in PRESETS:
        raise UsageError(f"unknown cluster {name!r}; choose {', '.join(PRESETS)}")
    return PRESETS[name]()
