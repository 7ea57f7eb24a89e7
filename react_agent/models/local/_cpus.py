"""How many threads the embedded model decodes with by default: one per physical core the process may use.

llama-cpp-python's own default is half the logical CPUs (``os.cpu_count() // 2``), which assumes two hardware
threads per core. On a machine without SMT (most cloud VMs: each vCPU is a core to the guest) that leaves half
the cores idle while a token is decoded; on a machine with SMT, one thread per core is what llama.cpp's own
programs use. The cores are read from Linux's CPU topology (``/sys/devices/system/cpu``) for the CPUs the process
may run on, and capped by the CPU quota of the process's cgroup (a container given 2 CPUs of a 64-core host
decodes with 2 threads); where the topology cannot be read, the choice is left to llama-cpp-python (``None``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["CGROUP", "SYS_CPU", "cpu_quota", "decoding_threads", "physical_cores"]

SYS_CPU = Path("/sys/devices/system/cpu")
CGROUP = Path("/sys/fs/cgroup")


def decoding_threads() -> int | None:
    """The default thread count of decoding: :func:`physical_cores`, at most :func:`cpu_quota`."""
    cores, quota = physical_cores(), cpu_quota()
    return cores if cores is None or quota is None else min(cores, quota)


def cpu_quota(root: Path = CGROUP) -> int | None:
    """The CPUs the process's cgroup may use, rounded up (cgroup v2 ``cpu.max``, else v1 ``cpu.cfs_quota_us`` over
    ``cpu.cfs_period_us``), or ``None`` when there is no quota or it cannot be read."""
    try:
        quota, _, period = (root / "cpu.max").read_text().strip().partition(" ")
    except OSError:
        try:
            quota = (root / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (root / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    try:
        share = int(quota) / int(period)
    except (ValueError, ZeroDivisionError):
        return None  # "max", "-1": no quota
    return max(1, math.ceil(share)) if share > 0 else None


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
