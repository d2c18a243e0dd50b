"""Memory checks before a stage allocates: what it needs against what the machine has free."""


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
        import os

        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def gib(n_bytes):
    return f"{n_bytes / 2**30:.2f} GiB"


def check_memory(needed, what, advice):
    """Raise NeighborMemoryError when `needed` bytes exceed the available memory."""
    available = available_memory()
    if available is not None and needed > available:
        raise NeighborMemoryError(
            f"{what} needs about {gib(needed)} of memory and {gib(available)} is available: "
            f"{advice}")
