"""Memory checks before a stage allocates: what it needs against what the process may still take.

What the process may take is the smallest of three limits (`memory_limit`): the machine's
available memory, its cgroup's limit less what the cgroup holds (a container's memory), and
the address-space limit (``ulimit -v``, RLIMIT_AS) less the address space already mapped.
"""

import os

try:
    import resource
except ImportError:  # Windows: no address-space limit to read
    resource = None

# A cgroup v1 "no limit" is the largest page-aligned int64; anything this large is none.
_NO_LIMIT = 2**60


class NeighborMemoryError(MemoryError):
    """The neighbour search would need more memory than is available.

    Raised before the search allocates anything, with what it needs, what is available and
    what to change, instead of the process being killed part-way through a fit.

    See Also
    --------
    KSSC : Checks the memory of its neighbour stage before it starts.
    nearest_neighbors : Checks it too.

    Examples
    --------
    >>> from kssc import NeighborMemoryError
    >>> issubclass(NeighborMemoryError, MemoryError)
    True
    """


class FitMemoryError(MemoryError):
    """A fit would need more memory than the process may take: raised before it allocates,
    naming what each stage needs and the limit that binds."""


def available_memory():
    """Bytes the system can give without swapping (MemAvailable of /proc/meminfo, else the
    free physical pages), or None where neither is known."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _read_int(path):
    try:
        with open(path) as handle:
            text = handle.read().strip()
    except OSError:
        return None
    try:
        return int(text)
    except ValueError:
        return None  # v2's "max"


def _inactive_file(path):
    """Bytes of inactive page cache the cgroup holds (reclaimed before it runs out)."""
    try:
        with open(path) as handle:
            stat = dict(line.split() for line in handle if line.count(" ") == 1)
    except (OSError, ValueError):
        return 0
    return int(stat.get("total_inactive_file", stat.get("inactive_file", 0)))


def _cgroup_folders(root, proc_cgroup):
    """(folder, version) of the process's memory cgroup and each of its parents, leaf first.

    The path /proc/self/cgroup names is looked for under `root` (v2: ``root/path``; v1:
    ``root/memory/path``); inside a container, whose cgroup is mounted as the root, the
    mount point itself is taken.
    """
    try:
        with open(proc_cgroup) as handle:
            lines = handle.read().splitlines()
    except OSError:
        lines = []
    found = []
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and controllers == "":
            version, mount = 2, root
        elif "memory" in controllers.split(","):
            version, mount = 1, os.path.join(root, "memory")
        else:
            continue
        parts = [part for part in path.strip("/").split("/") if part]
        for depth in range(len(parts), -1, -1):
            folder = os.path.join(mount, *parts[:depth])
            if folder not in (f for f, _ in found):
                found.append((folder, version))
    for version, mount in ((2, root), (1, os.path.join(root, "memory"))):
        if (mount, version) not in found:
            found.append((mount, version))
    return found


def cgroup_available(root="/sys/fs/cgroup", proc_cgroup="/proc/self/cgroup"):
    """(bytes the process's memory cgroup may still charge, its limit), or None without a
    limit: the smallest over the cgroup and its parents of limit - (usage - inactive page
    cache), from cgroup v2's memory.max and memory.current or v1's memory.limit_in_bytes and
    memory.usage_in_bytes."""
    best = None
    for folder, version in _cgroup_folders(root, proc_cgroup):
        names = (("memory.max", "memory.current") if version == 2
                 else ("memory.limit_in_bytes", "memory.usage_in_bytes"))
        limit, usage = (_read_int(os.path.join(folder, name)) for name in names)
        if limit is None or usage is None or limit >= _NO_LIMIT:
            continue
        used = usage - _inactive_file(os.path.join(folder, "memory.stat"))
        free = max(0, limit - max(used, 0))
        if best is None or free < best[0]:
            best = (free, limit)
    return best


def virtual_size():
    """Bytes of address space the process has mapped (VmSize), or None where unknown."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def address_space_available():
    """(bytes the address-space limit RLIMIT_AS leaves, the limit), or None without one."""
    if resource is None:
        return None
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return None
    mapped = virtual_size()
    return max(0, limit - (mapped or 0)), limit


def memory_limit():
    """(bytes the process may still take, which limit binds), the smallest of the machine's
    available memory, the cgroup's and the address space's; (None, None) if none is known."""
    limits = []
    available = available_memory()
    if available is not None:
        limits.append((available, f"{gib(available)} is available"))
    cgroup = cgroup_available()
    if cgroup is not None:
        limits.append((cgroup[0], f"{gib(cgroup[0])} is left under the cgroup's (container's) "
                                  f"limit of {gib(cgroup[1])}"))
    address = address_space_available()
    if address is not None:
        limits.append((address[0], f"{gib(address[0])} of address space is left under the "
                                   f"limit of {gib(address[1])} (RLIMIT_AS, ulimit -v)"))
    return min(limits, key=lambda limit: limit[0]) if limits else (None, None)


def gib(n_bytes):
    return f"{n_bytes / 2**30:.2f} GiB"


def check_memory(needed, what, advice):
    """Raise NeighborMemoryError when `needed` bytes exceed what the process may take."""
    available, which = memory_limit()
    if available is not None and needed > available:
        raise NeighborMemoryError(
            f"{what} needs about {gib(needed)} of memory and {which}: {advice}")


# Bytes a fit holds beyond the arrays its stages' formulas count: the first call of the
# compiled kernels, and the memory the allocator keeps of a stage's freed small blocks for
# the next (measured by benchmarks/bench_memory.py, whose ratios it keeps within 1.3x).
FIXED_BYTES = 96 * 2**20
# Bytes per stored coefficient (n_samples x n_candidates) that the spectral step holds at its
# peak beyond a fixed part (2 x FIXED_BYTES: the eigensolver's and the allocator's): the
# candidates (8), Z (12) and building W = |Z| + |Z|^T beside it; measured by
# benchmarks/bench_memory.py from 2e5 to 4e5 points (k = 20).
_SPECTRAL_PER_COEFFICIENT = 48
# Bytes per point and eigenvector of the eigensolver's blocks (iterate, residuals, products
# and their float64 copies).
_SPECTRAL_PER_VECTOR = 32


def kssc_fit_memory(n, d, itemsize, n_candidates, search, *, copy=True, n_vectors=21,
                    lam_scale=True, removed_components=False):
    """Bytes each stage of a KSSC fit holds at its peak beyond what the process held before
    it, as {stage: bytes} in order: "unit rows" (the copy of the data as unit rows, in the
    data's float type, held through the coefficient stage), "neighbours" (with the search's
    own `search` bytes), "coefficients" and "spectral".

    `n_candidates` is the candidates per point (neighbours and random ones); `n_vectors` the
    eigenvectors the spectral step computes; `lam_scale` whether the coefficient step first
    computes each point's lambda_max (lam_mode "relative" or "global": a chunk of gathered
    neighbours, cast to float64); `removed_components` whether a view searches a copy of
    the data (principal directions removed, or unit rows made there): at most a float64
    copy and its unit rows.
    """
    from ..coding.representation import _CHUNK_BYTES

    nk = n * n_candidates
    unit = n * d * itemsize if copy else 0
    views = 16 * n * d if removed_components else 0
    # A chunk's neighbours gathered in the data's type, then as float64.
    gathered = min(_CHUNK_BYTES, 8 * nk * d) * (1.5 if itemsize == 4 else 1.0) * lam_scale
    coefficients = 8 * nk + max(gathered, 16 * nk + 42 * n)
    spectral = _SPECTRAL_PER_COEFFICIENT * nk + _SPECTRAL_PER_VECTOR * n * n_vectors
    if n <= 1000:
        spectral += 16 * n * n  # the dense eigensolver of a small affinity
    return {"unit rows": unit,
            "neighbours": FIXED_BYTES + unit + views + search,
            "coefficients": FIXED_BYTES + unit + coefficients,
            "spectral": 2 * FIXED_BYTES + spectral}


def search_memory(n, d, n_neighbors, metric, algorithm, dtype):
    """Bytes the neighbour search allocates at its peak (`kssc.neighbors._exact.memory_bytes` or
    `kssc.neighbors._ann.memory_bytes`); `algorithm` is "exact" or an IVF."""
    from ._ann import memory_bytes as approximate_memory
    from ._exact import memory_bytes as exact_memory

    if algorithm == "exact":
        return exact_memory(n, d, n_neighbors, metric, dtype)
    return approximate_memory(n, d, n_neighbors, algorithm, dtype)


def check_fit_memory(stages, what, advice):
    """Raise FitMemoryError when the largest stage of `stages` ({stage: bytes}, as
    `kssc_fit_memory` gives them) exceeds what the process may take; the message names
    each stage's need and the limit that binds."""
    needed = max(stages.values())
    available, which = memory_limit()
    if available is None or needed <= available:
        return
    peak = max(stages, key=stages.get)
    parts = ", ".join(f"{stage} {gib(size)}" for stage, size in stages.items())
    raise FitMemoryError(
        f"not enough memory: {what} needs about {gib(needed)} at its peak (in the {peak} "
        f"stage; per stage: {parts}) and {which}. {advice}")
