"""Every worker process's thread pools and memory allocator during a fit, restored after it.

Threads. The single machine's kernels size their thread pools by joblib's `cpu_count` (the
IVF join, the probes, the exact search) or by numba's thread count (the coefficient
kernels), both the whole host by default, so two workers on one host would run twice as many
compute threads as there are cores. During a fit every worker process gets its host's cores
divided among the task threads of the workers on that host, through LOKY_MAX_CPU_COUNT,
which joblib's `cpu_count` reads on every call and `solve_block` passes to numba.

Allocator. dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which also turns
off glibc's adaptive mmap threshold: every allocation above 128 KiB is then a fresh mmap,
its pages faulted in again at each use. The single machine's kernels allocate such buffers
over and over (the float64 re-scoring gathers 1 MiB at a time): 3.1-4.0 s against 1.4-1.8 s
for 3 x 10^5 queries (`benchmarks/bench_allocator.py`, docs/scaling.md).
Where that variable is set, a fit raises the mmap threshold to glibc's adaptive maximum
(32 MiB) and keeps freed memory up to twice that, then puts both back and trims the heap.

A worker that joins or restarts during the fit runs with the defaults: slower, the same
result (no kernel's result depends on its thread count or allocator).
"""

import ctypes
import os
from collections import Counter
from contextlib import contextmanager

from joblib import cpu_count

CORES_VARIABLE = "LOKY_MAX_CPU_COUNT"
# glibc's mallopt parameters, its adaptive mmap threshold's ceiling on 64-bit, its default.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_FIT_MMAP_THRESHOLD = 32 * 2**20
_DEFAULT_MMAP_THRESHOLD = 128 * 2**10


def _libc():
    """glibc, or None (another C library: its allocator is left alone)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") else None
    except OSError:
        return None


def _set_allocator(mmap_threshold, trim_threshold, trim=False):
    libc = _libc()
    if libc is None or "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        return
    libc.mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold))
    libc.mallopt(_M_TRIM_THRESHOLD, int(trim_threshold))
    if trim:
        libc.malloc_trim(0)


def _process(dask_worker):
    return dask_worker.address, os.getpid()


def _tune(shares, dask_worker):
    """Set this process's core share and allocator; return the core variable it replaces."""
    previous = os.environ.get(CORES_VARIABLE)
    os.environ[CORES_VARIABLE] = str(shares[dask_worker.address])
    _set_allocator(_FIT_MMAP_THRESHOLD, 2 * _FIT_MMAP_THRESHOLD)
    return previous


def _restore(previous, dask_worker):
    value = previous[dask_worker.address]
    if value is None:
        os.environ.pop(CORES_VARIABLE, None)
    else:
        os.environ[CORES_VARIABLE] = value
    threshold = os.environ.get("MALLOC_TRIM_THRESHOLD_")
    if threshold is not None:  # else the fit left the allocator alone (`_set_allocator`)
        _set_allocator(os.environ.get("MALLOC_MMAP_THRESHOLD_", _DEFAULT_MMAP_THRESHOLD),
                       threshold, trim=True)


def core_shares(client):
    """Per worker process (one address per process): its host's cores (joblib's count:
    affinity and cgroup limits included) over the task threads of all workers on the host."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    threads = Counter()
    for info in workers.values():
        threads[info["host"]] += info["nthreads"]
    cores = client.run(cpu_count)
    # Workers in one process (LocalCluster(processes=False)) share its environment: one each.
    first = {pid: address for address, (_, pid) in sorted(client.run(_process).items())}
    return {address: max(1, cores[address] // threads[workers[address]["host"]])
            for address in first.values() if address in workers}


@contextmanager
def tuned_workers(client):
    """Within the block, every worker process's thread pools sized by its `core_shares` and
    its allocator keeping buffers up to 32 MiB; yields the shares."""
    shares = core_shares(client)
    previous = client.run(_tune, shares, workers=list(shares))
    try:
        yield shares
    finally:
        # Only the workers still there (one lost during the fit is gone, its restart has
        # another address); one lost meanwhile is skipped.
        alive = [a for a in previous if a in client.scheduler_info(n_workers=-1)["workers"]]
        if alive:
            client.run(_restore, previous, workers=alive, on_error="ignore")
