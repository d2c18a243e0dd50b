"""The k-SSC coefficient step: every point coded over its k neighbours, in memory-bounded chunks."""

from contextlib import contextmanager, nullcontext

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from threadpoolctl import threadpool_limits

from .admm import ADMM

SOLVERS = ("relaxed", "exact")
LAM_MODES = ("absolute", "relative", "global")
_CHUNK_BYTES = 64 * 2**20
# ADMM iterations a point runs in turn under the "all" rule (`_admm_advance`): its candidates
# are read from memory once per stretch; a stop inside one costs it once more.
_ADMM_SEGMENT = 20
# FISTA's rho_0 and growth, LADMPSAP's mu_0, mu_max and growth (the paper's constants).
_FISTA_STEP = (1.0, 1.1)
_LADMPSAP_STEP = (0.5, 10.0, 1.1)


def _compiled():
    """The numba kernels, imported on first use: numba's import costs about 110 MB and half
    a second, which `import kssc` alone should not pay."""
    from . import _point_kernels
    from ._kernels import blocks

    return _point_kernels, blocks


def _n_threads():
    import numba

    return numba.get_num_threads()


@contextmanager
def numba_threads(n_threads):
    """At most `n_threads` threads (and NUMBA_NUM_THREADS) for numba's compiled kernels in
    this thread, restored afterwards: threadpoolctl limits BLAS only (the experiments'
    trial workers, and `kssc_coefficients` given n_jobs)."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _solve_chunk(X, rows, indices, method, weight, ridge, options, max_iter, positive, parallel):
    """(coef, n_iter, converged) of one chunk; `parallel`: over numba's threads, else on
    the calling thread only (inside a joblib worker)."""
    kernels, blocks = _compiled()
    from ._kernels import notice_first_compile

    notice_first_compile(kernels.solve_blocks if parallel else kernels.solve_range)
    n, k = indices.shape
    coef = np.zeros((n, k))
    n_iter = np.zeros(n, dtype=np.int64)
    converged = np.zeros(n, dtype=bool)
    args = (method, X, rows, indices, weight, ridge, np.asarray(options, dtype=float),
            int(max_iter), bool(positive), coef, n_iter, converged)
    if parallel:
        kernels.solve_blocks(blocks(n, _n_threads()), *args)
    else:
        kernels.solve_range(0, n, *args)
    return coef, n_iter, converged


def _chunk_scale(X, rows, indices, positive, outlier_gamma):
    """lambda_max of each point: the smallest lam giving all-zero codes (outlier: also over
    the identity atoms I / gamma)."""
    corr = np.einsum("nkd,nd->nk", np.asarray(X[indices], dtype=float),
                     np.asarray(X[rows], dtype=float))
    scale = corr.max(axis=1) if positive else np.abs(corr).max(axis=1)
    if outlier_gamma is not None:
        scale = np.maximum(scale, np.abs(X[rows]).max(axis=1) / outlier_gamma)
    return scale


def penalty(X, indices, lam, lam_mode, *, positive, outlier_gamma=None, chunk_size):
    """Per-point l1 weight (n,): lam ("absolute"), lam * lambda_max_i ("relative"), or
    lam * min_i lambda_max_i ("global": Elhamifar and Vidal's lam0 = 1 / alpha scaled)."""
    n = indices.shape[0]
    if lam_mode == "absolute":
        return np.full(n, float(lam))
    scale = np.concatenate([
        _chunk_scale(X, np.arange(s, min(s + chunk_size, n)), indices[s:s + chunk_size],
                     positive, outlier_gamma) for s in range(0, n, chunk_size)])
    # A point with lambda_max <= 0 gets the zero code under any lam: it must not set the
    # scale (1 stands in for it, and for a data set of such points).
    positive_scale = scale > 0
    if lam_mode == "global":
        return np.full(n, lam * (scale[positive_scale].min() if positive_scale.any() else 1.0))
    return lam * np.where(positive_scale, scale, 1.0)


def outlier_gamma(X, lam):
    """gamma of the outlier term: 1 / (lam * max_j ||x_j||_1) (their alpha / max_j ||x_j||_1)."""
    return 1.0 / (lam * max(np.abs(X).sum(axis=1).max(), np.finfo(float).tiny))


def _admm_options(solver, lam, l1_ratio, gamma):
    """(mu2, q, gamma) of Elhamifar and Vidal's scaling (`kssc.coding.admm`)."""
    return 1.0 / lam, (1.0 - l1_ratio) / l1_ratio, (gamma if solver.outlier else 1.0)


def _admm_each(X, rows, indices, lam_rows, lam, solver, positive, l1_ratio, gamma, parallel):
    mu2, q, gamma = _admm_options(solver, lam, l1_ratio, gamma)
    options = (solver.tol, mu2, q, gamma, float(solver.affine), float(solver.outlier))
    return _solve_chunk(X, rows, indices, _compiled()[0].ADMM_EACH, 1.0 / (lam_rows * l1_ratio),
                        np.zeros(len(rows)), options, solver.max_iter, positive, parallel)


def _admm_advance(start, target, state, X, rows, indices, lam_rows, lam, solver, positive,
                  l1_ratio, gamma, parallel):
    """Iterate a chunk from iteration `start` to at least `target`, then on until its
    largest change is <= tol or max_iter. Returns (state, the iteration reached, met).

    Every point runs `_ADMM_SEGMENT` iterations in turn, its candidates kept in cache (in
    lock step over the chunk every iteration read them all again from memory: 3x the time
    for Yale B's faces). A point's iterates do not depend on the others', so this is the
    lock step's result; where the chunk's stop falls inside a stretch, the stretch is run
    again from its saved start up to it."""
    kernels, blocks = _compiled()
    from ._kernels import notice_first_compile

    notice_first_compile(kernels.admm_segment_blocks if parallel else kernels.admm_segment_range)
    n, k = indices.shape
    mu1 = 1.0 / (lam_rows * l1_ratio)
    mu2, q, gamma = _admm_options(solver, lam, l1_ratio, gamma)
    D = X.shape[1] if solver.outlier else 0
    if state is None:
        state = {"c": np.zeros((n, k)), "dual": np.zeros((n, k)),
                 "dual_affine": np.zeros((n, 1)), "e": np.zeros((n, D)),
                 "dual_e": np.zeros((n, D))}
    inverse, rhs = np.empty((n, k, k)), np.empty((n, k))
    bounds = blocks(n, _n_threads())
    setup = (X, rows, indices, mu1, mu2, q, gamma, solver.affine, solver.outlier, inverse, rhs)
    step = (X, rows, indices, inverse, rhs, mu1, mu2, gamma, solver.affine, solver.outlier,
            bool(positive), solver.tol, state["c"], state["dual"], state["dual_affine"],
            state["e"], state["dual_e"])
    (kernels.admm_setup_blocks(bounds, *setup) if parallel
     else kernels.admm_setup_range(0, n, *setup))

    def advance(begin, end):
        """Iterations begin + 1 .. end; whether every change was <= tol at each."""
        flags = np.ones((len(bounds) - 1 if parallel else 1, end - begin), dtype=bool)
        if parallel:
            kernels.admm_segment_blocks(bounds, begin, end, *step, flags)
        else:
            kernels.admm_segment_range(0, n, begin, end, *step, flags[0])
        return flags.all(axis=0)

    it, met = start, False
    while it < solver.max_iter:
        end = min(solver.max_iter, it + _ADMM_SEGMENT)
        # The stretch's start, to run it again if the stop falls inside (only from target on).
        saved = ({key: value.copy() for key, value in state.items()} if end >= target
                 else None)
        met_at = advance(it, end)
        stops = np.flatnonzero(met_at & (np.arange(it + 1, end + 1) >= target))
        if not stops.size:
            it, met = end, bool(met_at[-1])
            continue
        stop = it + 1 + int(stops[0])
        if stop < end:
            for key, value in state.items():
                value[...] = saved[key]
            advance(it, stop)
        return state, stop, True
    return state, it, met


def _run(tasks, n_jobs, progress=None):
    """Results of the delayed `tasks`, in order; `progress(done, total)` after each one."""
    if n_jobs is None or n_jobs == 1:
        solved = (f(*a, **kw) for f, a, kw in tasks)
    else:
        # Threads by default: the kernels release the GIL, and process workers each import
        # numba and load its kernels inside the timed fit (13.8 s against 0.05 s on one core
        # for 1,000 points in results/runtime_cores.csv). `joblib.parallel_config` still
        # picks any other backend.
        solved = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(tasks)
    parts = []
    for part in solved:
        parts.append(part)
        if progress is not None:
            progress(len(parts), len(tasks))
    return parts


def _admm_coefficients(X, indices, lam, lam_rows, solver, positive, l1_ratio, gamma, spans,
                       n_jobs, progress=None):
    parallel = n_jobs is None or n_jobs == 1

    def args(span):
        rows = np.arange(*span)
        return (X, rows, indices[rows], lam_rows[rows], lam, solver, positive, l1_ratio, gamma,
                parallel)

    if solver.stopping == "each":
        return _run([delayed(_admm_each)(*args(span)) for span in spans], n_jobs, progress)
    # Their rule over all chunks: the first iteration at which every chunk's largest change
    # is <= tol. Each round brings the chunks behind up to the furthest one and on to their
    # next such iteration; chunks keep only their iterates between rounds (O(n k) memory).
    states = [None] * len(spans)
    reached = [0] * len(spans)
    met = [False] * len(spans)
    target = 0
    while True:
        todo = [c for c in range(len(spans))
                if reached[c] < solver.max_iter and (reached[c] < target or not met[c])]
        if not todo:
            break
        parts = _run([delayed(_admm_advance)(reached[c], target, states[c], *args(spans[c]))
                      for c in todo], n_jobs)
        for c, (state, it, ok) in zip(todo, parts, strict=True):
            states[c], reached[c], met[c] = state, it, ok
        target = max(reached)
        if all(r == target and ok for r, ok in zip(reached, met, strict=True)):
            break
    n_iter = max(reached)
    converged = all(met) and n_iter == min(reached)
    if progress is not None:
        progress(len(spans), len(spans))
    return [(state["c"], np.full(len(state["c"]), n_iter), np.full(len(state["c"]), converged))
            for state in states]


def kssc_coefficients(X, indices, lam, *, solver="relaxed", positive=True, lam_mode="absolute",
                      l1_ratio=1.0, tol=1e-6, max_iter=200, chunk_size=None, n_jobs=None,
                      progress=None, lam_rows=None, gamma=None, order=None):
    """Code every row of `X` over its neighbours `indices` (n, k).

    Point i: min_z lam_i (l1_ratio ||z||_1 + (1 - l1_ratio)/2 ||z||^2) + 1/2 ||x_i - A_i^T z||^2
    (relaxed, FISTA; l1_ratio = 1 in the exact model), lam_i from `lam` and `lam_mode`
    (`penalty`). `solver` is "relaxed", "exact" or an `ADMM` (its own model, tol and
    max_iter; `tol` and `max_iter` here are ignored for it).

    Returns (coef (n, k), n_iter (n,), converged (n,)). Every point is solved by a compiled
    kernel (`kssc.coding._point_kernels`) that forms its k x k Gram matrix from `X` and iterates on
    k-vectors. The points are split into chunks of `chunk_size` points (default: about 64 MiB
    of per-chunk arrays, sized as k x max(D, k) doubles per point), solved in turn with
    numba's threads spreading each chunk's points over the cores (`numba.set_num_threads`
    or NUMBA_NUM_THREADS bound them), or with `n_jobs` set, one chunk per joblib task on one
    thread each, so joblib's workers are the only parallelism: threads by default (the
    kernels release the GIL), any joblib backend (e.g. dask) through
    ``joblib.parallel_config``; the default chunks are then at most n / n_jobs points. When
    every point fits one default chunk (a small problem), it runs on at most n_jobs of
    numba's threads instead (joblib's start-up would cost more).
    `progress(done, total)`, if given, is called with the number of chunks solved so far.
    `lam_rows` (n,) and `gamma` fix the per-point weights and the outlier term's gamma when
    they come from other data (`KSSC.predict`: the training points' scale); None computes
    them from `X`.
    `order` (a permutation of the n rows, or None: as they come) is the order in which the
    points are coded, not what they get: one in which points that share neighbours come
    together (the IVF's lists, `kssc.neighbors._ann.approximate_search`) keeps their
    neighbours' rows in cache while their Gram matrices are formed (at 10^6 x 64, 1.8
    against 3.4 s). The ADMM solver, whose "all" rule stops a chunk's points together,
    codes them as they come.
    """
    n, k = indices.shape
    X = np.ascontiguousarray(X)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    if order is not None and (np.shape(order) != (n,) or not np.array_equal(
            np.bincount(order, minlength=n), np.ones(n))):
        raise ValueError(f"order must be a permutation of the {n} rows.")
    one_chunk = False
    if chunk_size is None:
        chunk_size = int(max(1, min(n, _CHUNK_BYTES // (8 * k * max(X.shape[1], k)))))
        one_chunk = chunk_size >= n
        if n_jobs not in (None, 1):
            # At least one chunk per worker, or the workers beyond the first would idle.
            chunk_size = min(chunk_size, -(-n // effective_n_jobs(n_jobs)))
    spans = [(s, min(s + chunk_size, n)) for s in range(0, n, chunk_size)]
    parallel = n_jobs is None or n_jobs == 1
    threads = nullcontext()
    if not parallel and one_chunk:
        # Every point fits one default chunk: joblib's start-up (15-20 ms a call, 3x the
        # coding of 1,000 points) would outweigh it; numba's threads, at most n_jobs, code it
        # in one call (a point's code is the same whichever thread solves it).
        threads = numba_threads(min(effective_n_jobs(n_jobs), _n_threads()))
        spans, n_jobs, parallel = [(0, n)], None, True
    # LAPACK runs inside the kernels (eigvalsh, inv) on tiny matrices: one BLAS thread each.
    with threadpool_limits(limits=1, user_api="blas"), threads:
        if isinstance(solver, ADMM):
            if gamma is None and solver.outlier:
                gamma = outlier_gamma(X, lam)
            if lam_rows is None:
                lam_rows = penalty(X, indices, lam, lam_mode, positive=positive,
                                   outlier_gamma=gamma, chunk_size=chunk_size)
            parts = _admm_coefficients(X, indices, lam, lam_rows, solver, positive, l1_ratio,
                                       gamma, spans, n_jobs, progress)
        else:
            if lam_rows is None:
                lam_rows = penalty(X, indices, lam, lam_mode, positive=positive,
                                   chunk_size=chunk_size)
            kernels = _compiled()[0]
            if solver == "relaxed":
                # The elastic net's l2 part joins the smooth part: G + lam (1 - l1_ratio) I.
                method, options = kernels.FISTA, (tol, *_FISTA_STEP)
                weight, ridge = lam_rows * l1_ratio, lam_rows * (1.0 - l1_ratio)
            else:
                method, options = kernels.LADMPSAP, (1e-3, 1e-4, *_LADMPSAP_STEP)
                weight, ridge = lam_rows, np.zeros(n)
            rows = [np.arange(a, b) if order is None else np.asarray(order[a:b], dtype=np.int64)
                    for a, b in spans]
            parts = _run([delayed(_solve_chunk)(X, r, indices[r], method, weight[r], ridge[r],
                                                options, max_iter, positive, parallel)
                          for r in rows], n_jobs, progress)
            if order is not None:
                return tuple(_scatter([p[j] for p in parts], order) for j in range(3))
    coef = np.concatenate([p[0] for p in parts])
    n_iter = np.concatenate([p[1] for p in parts])
    converged = np.concatenate([p[2] for p in parts])
    return coef, n_iter, converged


def _scatter(pieces, order):
    """The rows order[0], order[1], ... of the pieces (stacked) put back in place."""
    out = np.empty((order.size, *pieces[0].shape[1:]), dtype=pieces[0].dtype)
    at = 0
    for piece in pieces:
        out[order[at:at + piece.shape[0]]] = piece
        at += piece.shape[0]
    return out


def code_residuals(points, X, indices, coef):
    """||points[i] - sum_m coef[i, m] X[indices[i, m]]|| of every row, summed in float64 by a
    compiled kernel over numba's threads (rows read from X in place: no gathered copy)."""
    kernels, blocks = _compiled()
    out = np.empty(indices.shape[0])
    kernels.residual_blocks(blocks(indices.shape[0], _n_threads()), np.asarray(points),
                            np.asarray(X), np.ascontiguousarray(indices),
                            np.ascontiguousarray(coef, dtype=float), out)
    return out
