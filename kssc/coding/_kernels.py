"""Compiled (numba) building blocks of the per-point coefficient kernels.

Loops instead of BLAS calls: calling BLAS on k x D blocks from inside numba's parallel loop
makes OpenBLAS start its own threads per call and oversubscribes the cores, and the loops
below reach the same rate on these small blocks. `cache=True` everywhere: the compile cost
is paid once per machine and numba version, and a kernel always runs from that cache
(`fill_cache`).
"""

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numba
import numpy as np

jit = numba.njit(cache=True, fastmath=True, nogil=True)
parallel_jit = numba.njit(cache=True, fastmath=True, nogil=True, parallel=True)


@jit
def prox(v, threshold, positive):
    """prox of threshold * |.| (positive: + indicator(. >= 0)): max(v - t, 0) or
    sign(v) max(|v| - t, 0)."""
    if positive:
        return max(v - threshold, 0.0)
    shrunk = abs(v) - threshold
    if shrunk <= 0.0:
        return 0.0
    return shrunk if v > 0 else -shrunk


@jit
def sparse_matvec(M, v, out):
    """out = M v for a symmetric M, skipping the zero entries of v (sparse codes)."""
    n = v.size
    out[:] = 0.0
    for q in range(n):
        vq = v[q]
        if vq != 0.0:
            for p in range(n):
                out[p] += vq * M[q, p]


@jit
def matvec(M, v, out):
    """out = M v."""
    n = v.size
    for p in range(M.shape[0]):
        s = 0.0
        for q in range(n):
            s += M[p, q] * v[q]
        out[p] = s


@jit
def gram_point(X, row, neighbours, gram, corr):
    """gram = A A^T and corr = A x for A = X[neighbours], x = X[row]; returns ||x||^2.
    Four Gram entries per pass over a row of A, read straight from X (no gather copy)."""
    k = neighbours.size
    D = X.shape[1]
    x = X[row]
    sq_norm = 0.0
    for d in range(D):
        sq_norm += x[d] * x[d]
    for p in range(k):
        a = X[neighbours[p]]
        s = 0.0
        for d in range(D):
            s += a[d] * x[d]
        corr[p] = s
        q = 0
        while q + 4 <= p + 1:
            b0, b1, b2, b3 = (X[neighbours[q]], X[neighbours[q + 1]], X[neighbours[q + 2]],
                              X[neighbours[q + 3]])
            s0 = s1 = s2 = s3 = 0.0
            for d in range(D):
                s0 += a[d] * b0[d]
                s1 += a[d] * b1[d]
                s2 += a[d] * b2[d]
                s3 += a[d] * b3[d]
            gram[p, q], gram[p, q + 1], gram[p, q + 2], gram[p, q + 3] = s0, s1, s2, s3
            q += 4
        while q <= p:
            b0 = X[neighbours[q]]
            s = 0.0
            for d in range(D):
                s += a[d] * b0[d]
            gram[p, q] = s
            q += 1
    for p in range(k):
        for q in range(p + 1, k):
            gram[p, q] = gram[q, p]
    return sq_norm


def blocks(n, n_threads, per_thread=8):
    """Block boundaries (n_blocks + 1,) splitting n points for `n_threads` threads."""
    n_blocks = max(1, min(n, n_threads * per_thread))
    return np.linspace(0, n, n_blocks + 1).astype(np.int64)


_compile_noticed = False


def is_cached(dispatcher):
    """Whether numba's on-disk cache holds compiled code of `dispatcher` for its current
    source (numba's cache index; its API is internal, so when it changes: assume cached)."""
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # an internal numba API: no notice rather than a failure
        return True


def notice_first_compile(dispatcher):
    """One line on stderr, once per process, when `dispatcher` is about to be compiled (the
    first fit after installing: about 25 s, silent otherwise)."""
    global _compile_noticed
    if _compile_noticed:
        return
    _compile_noticed = True
    if not is_cached(dispatcher):
        print("kssc: compiling the coefficient kernels (numba, first run only, about half a "
              "minute; cached on disk afterwards)...", file=sys.stderr, flush=True)


_FAMILIES_NOTICED = set()


def notice_uncached(families):
    """One line on stderr naming the kernel families that numba's on-disk cache does not
    hold yet, before a fit compiles them (`notice_first_compile` names the coefficient
    kernels of the process's first fit only; `AutoKSSC`'s candidates use several families).

    Parameters
    ----------
    families : dict
        Family name ("the ADMM kernels") -> the dispatchers it compiles.

    Returns
    -------
    missing : list of str
        The families named (empty: every one cached, nothing printed).
    """
    global _compile_noticed
    # Once per family and process: a family one of whose kernels this data never compiles
    # (a search path it does not take) stays "uncached" on disk.
    missing = [name for name, dispatchers in families.items() if name not in _FAMILIES_NOTICED
               and not all(is_cached(dispatcher) for dispatcher in dispatchers)]
    _FAMILIES_NOTICED.update(missing)
    if missing:
        _compile_noticed = True  # said here: the coefficient step's own notice stays quiet
        print(f"kssc: compiling {', '.join(missing)} (numba, first run only, about half a "
              "minute each; cached on disk afterwards)...", file=sys.stderr, flush=True)
    return missing


# Set in `kssc compile`'s own process, which compiles the kernels where it runs.
NO_FILL = "KSSC_NO_CACHE_FILL"
_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def running_compile(orig_argv=None, argv=None):
    """Whether this process is the `kssc compile` command itself (``python -m kssc compile``
    or the `kssc` script), which compiles every family anyway: its imports need not run it
    first (they did, and it printed its families twice on a cold cache)."""
    orig_argv = list(sys.orig_argv if orig_argv is None else orig_argv)
    argv = list(sys.argv if argv is None else argv)
    if "-m" in orig_argv:
        at = orig_argv.index("-m")
        return orig_argv[at + 1:at + 3] == ["kssc", "compile"]
    return len(argv) >= 2 and Path(argv[0]).name == "kssc" and argv[1] == "compile"


def fill_cache(module_name):
    """Compile every kernel family into numba's on-disk cache in a subprocess (`kssc
    compile`) when the cache lacks a kernel of the module `module_name`; called as that
    module's last statement, before any of its kernels has run (so on a cold cache the first
    `import kssc`, which imports three kernel modules, fills it).

    numba optimises a function it compiles in this process and the same function loaded
    from its cache differently (numba issue #10617): with fastmath, the FISTA coefficients
    of a 600-point union differed by up to 5.7e-14, and one synthetic_dvsn trial's
    clustering error by half a point. Filling the cache first makes every process run the
    cached code, so a number never depends on whether its process compiled the kernels (a
    fresh install, or the first run after a kernel's edit). A process that cannot fill the
    cache (the command fails) compiles in-process, as before. Concurrent processes (joblib's
    workers) fill it once, under a file lock. Nothing runs in `kssc compile` itself
    (`running_compile`) or with KSSC_NO_CACHE_FILL set.
    """
    if os.environ.get(NO_FILL) or running_compile():
        return
    module = sys.modules[module_name]
    kernels = [value for value in vars(module).values()
               if isinstance(value, numba.core.registry.CPUDispatcher)
               and value.__module__ == module_name]
    if all(is_cached(kernel) for kernel in kernels):
        return
    import fcntl

    cache_dir = os.environ.get("NUMBA_CACHE_DIR", str(_PACKAGE_PARENT))
    key = hashlib.sha256(cache_dir.encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"kssc-compile-{key}.lock"
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        if all(is_cached(kernel) for kernel in kernels):  # filled while this one waited
            return
        print("kssc: compiling the numba kernels into their on-disk cache (first run only, "
              "a minute or two; `kssc compile` does it ahead)...", file=sys.stderr, flush=True)
        path = os.pathsep.join(filter(None, [str(_PACKAGE_PARENT), os.environ.get("PYTHONPATH")]))
        done = subprocess.run([sys.executable, "-m", "kssc", "compile"],
                              env={**os.environ, NO_FILL: "1", "PYTHONPATH": path},
                              stdout=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        print(f"kssc: `kssc compile` failed (exit {done.returncode}); the kernels compile in "
              "this process", file=sys.stderr, flush=True)
