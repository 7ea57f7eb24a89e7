"""How many threads the embedded model decodes with by default: one per physical core the process may use.

llama-cpp-python's own default is half the logical CPUs (``os.cpu_count() // 2``), which assumes two hardware
threads per core. On a machine without SMT (most cloud VMs: each vCPU is a core to the guest) that leaves half
the cores idle while a token is decoded; on a machine with SMT, one thread per core is what llama.cpp's own
programs use. The cores are read from Linux's CPU topology (``/sys/devices/system/cpu``) for the CPUs the process
may run on; where that cannot be read, the choice is left to llama-cpp-python (``None``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["SYS_CPU", "physical_cores"]

SYS_CPU = Path("/sys/devices/system/cpu")


def physical_cores(cpus: Iterable[int] | None = None, root: Path = SYS_CPU) -> int | None:
    """The number of distinct physical cores among ``cpus`` (default: the CPUs this process may run on), or
    ``None`` when the topology of any of them cannot be read."""
    if cpus is None:
        affinity = getattr(os, "sched_getaffinity", None)
        if affinity is None:
            return None
        cpus = affinity(0)
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topology = root / f"cpu{int(cpu)}" / "topology"
        try:
            cores.add(((topology / "physical_package_id").read_text().strip(),
                       (topology / "core_id").read_text().strip()))
        except OSError:
            return None
    return len(cores) or None
