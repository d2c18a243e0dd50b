"""The spectral step: N-Cut as the paper's code ran it (Cour, Yu and Shi's `ncutW`).

`ncut` follows docs/protocol.md 1.7: drop |W| <= 1e-6, add the offset 0.5 to the degrees and the
diagonal, take the top eigenvectors of D^-1/2 W D^-1/2 with a sparse eigensolver, and
discretise them with Yu and Shi's multiclass rotation (random first row). The k-means
option embeds and row-normalises the same eigenvectors (Ng, Jordan and Weiss). The "njw"
option is Ng, Jordan and Weiss as Elhamifar and Vidal's SSC code runs it
(`SpectralClustering.m`): D^-1/2 W D^-1/2 with neither threshold nor offset, unit rows,
k-means with 20 restarts.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh, svd
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import eigsh, lobpcg
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from ..utils._validation import warn_degenerate
from ..utils._warnings import warn_caller
from . import _multilevel
from .isolation import isolated_message, leaves_out, linked_points

ASSIGN_LABELS = ("discretize", "kmeans", "njw")
_DENSE_LIMIT = 1000
# Rows of P scaled at a time in `_normalized_affinity` (bounds the gathered scale factors).
_SCALE_ROWS = 2**16
# Entries of W and its transpose compared at a time in `_is_symmetric`.
_COMPARE_ENTRIES = 2**20


def _normalized_affinity(W, offset=0.5, threshold=1e-6):
    """P = D^-1/2 (W + offset I) D^-1/2 with d = sum_j |W_ij| + 2 offset; returns (P, d).

    Memory: W and one more copy at a time (P, or W's transpose for the symmetry check; a
    thresholded copy of W only when some entry is at most `threshold`); P is scaled in place,
    in row chunks, with the products of ``scale @ W @ scale`` (s_i w_ij, then times s_j), so
    the values are the same."""
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"the affinity must be square; got shape {W.shape}.")
    small = np.abs(W.data) <= threshold
    if small.any():
        W = W.copy()
        W.data[small] = 0.0
        W.eliminate_zeros()
    del small
    if not _is_symmetric(W):
        raise ValueError("the affinity matrix must be symmetric.")
    abs_sum = np.asarray(abs(W).sum(axis=1)).ravel()
    signed_sum = np.asarray(W.sum(axis=1)).ravel()
    degrees = abs_sum + 2.0 * offset
    P = W + sp.diags(0.5 * (abs_sum - signed_sum) + offset)
    del W
    scale = 1.0 / np.sqrt(degrees)
    return scale_entries(P, scale, scale), degrees


def scale_entries(P, row_scale, column_scale):
    """P (CSR) with entry p_ij replaced by (row_scale[i] p_ij) column_scale[j], in place, in
    chunks of `_SCALE_ROWS` rows (bounds the gathered scale factors)."""
    counts = np.diff(P.indptr)
    for start in range(0, P.shape[0], _SCALE_ROWS):
        stop = min(start + _SCALE_ROWS, P.shape[0])
        part = P.data[P.indptr[start]:P.indptr[stop]]
        part *= np.repeat(row_scale[start:stop], counts[start:stop])
        part *= column_scale[P.indices[P.indptr[start]:P.indptr[stop]]]
    return P


def _is_symmetric(W, tol=1e-10):
    """Whether the CSR matrix W (no explicit zeros) equals its transpose within `tol`: with
    sorted indices by comparing W and its transpose entry by entry (one copy, compared in
    chunks), else by their difference."""
    if not W.has_sorted_indices:
        asymmetry = W - W.T
        return not (asymmetry.nnz and abs(asymmetry).max() > tol)
    T = W.T.tocsr()
    T.sort_indices()
    if not (np.array_equal(W.indptr, T.indptr) and np.array_equal(W.indices, T.indices)):
        return False
    step = _COMPARE_ENTRIES
    return all(np.abs(W.data[at:at + step] - T.data[at:at + step]).max() <= tol
               for at in range(0, W.nnz, step))


EIGEN_SOLVERS = ("auto", "arpack", "lobpcg", "multilevel")
# "auto" takes the multilevel route above this many points and ARPACK up to it: on the scale
# data the labels were ARPACK's at 10^4 and 10^5 points, but the results of the experiments
# with at most 50,000 points must stay exactly as committed.
_MULTILEVEL_FROM = 50_000
MULTILEVEL_TOL = 1e-3  # the multilevel route's residual tolerance (the distributed one's too)
_MULTILEVEL_TOL = MULTILEVEL_TOL
_LOBPCG_TOL = 1e-5


def top_eigenvectors(P, n_vectors, random_state=None, dense_limit=_DENSE_LIMIT, solver="auto",
                     tol=None):
    """The `n_vectors` largest eigenpairs of the symmetric matrix P, in descending order.

    Dense `eigh` up to `dense_limit` points. Above, `solver` "auto" (the default) is
    "multilevel" above 50,000 points and "arpack" up to it; "arpack": Lanczos (ARPACK
    `eigsh`, matrix-vector products only) started from a vector drawn from `random_state`;
    "multilevel": the eigenvectors of P restricted to aggregates of its graph, prolonged and
    refined by LOBPCG on P to the residual tolerance `tol` (default 1e-3;
    `kssc.spectral._multilevel`; ARPACK's pairs where LOBPCG does not reach it, as where the
    aggregates mix the clusters): 5-25x less CPU time than ARPACK's on k-SSC's affinities of 10^5 to
    10^6 points, for the same labels (docs/scaling.md, "Eigen-solver";
    benchmarks/bench_spectral.py); "lobpcg": LOBPCG on I - P for its smallest eigenvalues,
    from a block drawn from `random_state`, preconditioned by a smoothed-aggregation AMG
    V-cycle, to the residual tolerance `tol` (default 1e-5).
    """
    if solver not in EIGEN_SOLVERS:
        raise ValueError(f"solver must be one of {EIGEN_SOLVERS}; got {solver!r}.")
    n = P.shape[0]
    if solver == "auto":
        solver = "multilevel" if n > _MULTILEVEL_FROM else "arpack"
    if n <= dense_limit or n_vectors >= n - 1:
        # One BLAS thread: the tridiagonal reduction is mostly matrix-vector products, which
        # threads share only by waiting on each other; on the loaded 2-core machine eigh of
        # 1,000 points took 6-12 s on two threads against 0.25-0.4 s on one.
        with threadpool_limits(limits=1, user_api="blas"):
            values, vectors = _dense_top(P.toarray(), n_vectors)
    elif solver == "lobpcg":
        values, vectors = _lobpcg_top(P, n_vectors, check_random_state(random_state),
                                      _LOBPCG_TOL if tol is None else tol)
    elif solver == "multilevel":
        values, vectors = _multilevel_top(P, n_vectors, random_state,
                                          _MULTILEVEL_TOL if tol is None else tol)
    else:
        v0 = check_random_state(random_state).uniform(-1.0, 1.0, n)
        values, vectors = arpack_top(P, n_vectors, v0)
    if vectors.shape[1] != n_vectors:
        raise RuntimeError(f"the eigensolver returned {vectors.shape[1]} eigenvectors of the "
                           f"{n_vectors} asked for a {n} x {n} affinity.")
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def _dense_top(dense, n_vectors):
    """The `n_vectors` largest eigenpairs of the symmetric array `dense` by LAPACK (ascending)."""
    n = dense.shape[0]
    values, vectors = eigh(dense, subset_by_index=[n - n_vectors, n - 1])
    if vectors.shape[1] < n_vectors:
        # LAPACK's subset driver can return fewer pairs than asked on highly degenerate
        # spectra (duplicated points; it returned none at all); the full one cannot.
        values, vectors = eigh(dense)
        values, vectors = values[n - n_vectors:], vectors[:, n - n_vectors:]
    return values, vectors


def arpack_top(P, n_vectors, v0, tol=0.0, fallback=None):
    """The `n_vectors` largest eigenpairs of the symmetric P (unordered) by ARPACK's Lanczos
    (`eigsh`) from `v0`, to the relative tolerance `tol` (0: machine precision), one
    connected component of P's graph at a time.

    From one start vector, Lanczos finds a repeated eigenvalue once per start direction it
    can tell apart: on an affinity of exactly k components (the eigenvalue 1 k times) it
    returned 1 fewer than k times, and the labels then split a component. Each component is
    solved on its own instead: ARPACK from `v0`'s entries there, dense `eigh` up to
    `_DENSE_LIMIT` rows, a lone point's P_ii; the largest pairs over every component are
    kept (the first components' on ties). A component where `v0` is zero starts from
    `fallback`'s entries (a start vector, given when `v0` may vanish on some components). A
    connected P, or an operator that is not a matrix (no graph to split), is the one solve
    it always was, from the same `v0`."""
    n_components, component = ((1, None) if not sp.issparse(P)
                               else connected_components(P, directed=False))
    # ARPACK's BLAS calls are vector operations too small to share: threaded, they cost
    # 3x the time on a loaded machine (docs/scaling.md, "Eigen-solver").
    with threadpool_limits(limits=1, user_api="blas"):
        if n_components == 1:
            return eigsh(P, k=n_vectors, which="LA", v0=v0, tol=tol)
        order = np.argsort(component, kind="stable")
        bounds = np.searchsorted(component[order], np.arange(n_components + 1))
        P = sp.csr_matrix(P)[order][:, order].tocsr()  # each component a diagonal block
        sizes = np.diff(bounds)
        # Lone points at once (their pair is (P_ii, e_i)): the n_vectors largest at most.
        lone = np.flatnonzero(sizes == 1)
        lone = lone[np.argsort(-P.diagonal()[bounds[lone]], kind="stable")[:n_vectors]]
        values, owner, columns = [], [], []
        pieces = {c: np.ones((1, 1)) for c in lone}
        for c in np.sort(np.concatenate([lone, np.flatnonzero(sizes > 1)])):
            lo, hi = bounds[c], bounds[c + 1]
            size, m = hi - lo, min(n_vectors, hi - lo)
            if size == 1:
                values.append(P.diagonal()[lo:hi])
            else:
                block = P[lo:hi, lo:hi]
                if size <= _DENSE_LIMIT or m >= size - 1:
                    found, pieces[c] = _dense_top(block.toarray(), m)
                else:
                    start = v0[order[lo:hi]]
                    if fallback is not None and not start.any():
                        start = fallback[order[lo:hi]]
                    found, pieces[c] = eigsh(block, k=m, which="LA", v0=start, tol=tol)
                values.append(found)
            owner.append(np.full(values[-1].size, c))
            columns.append(np.arange(values[-1].size))
    values, owner, columns = (np.concatenate(values), np.concatenate(owner),
                              np.concatenate(columns))
    chosen = np.argsort(-values, kind="stable")[:n_vectors]
    vectors = np.zeros((P.shape[0], chosen.size))
    for j, pair in enumerate(chosen):
        c = owner[pair]
        vectors[order[bounds[c]:bounds[c + 1]], j] = pieces[c][:, columns[pair]]
    return values[chosen], vectors


def _multilevel_top(P, n_vectors, random_state, tol, max_iter=200):
    """Largest eigenpairs of P from the coarse graph's (`kssc.spectral._multilevel`), signs
    fixed; ARPACK's on P (`arpack_top`, from the vector the "arpack" route draws) when
    LOBPCG does not reach `tol` in `max_iter` products: where the aggregates mix the
    clusters the start is far from the eigenvectors (10^5 points with 20 random candidates
    each: 296 aggregates, about a fifth of each aggregate's points in its largest cluster),
    LOBPCG stalled at a residual of 0.38 and its labels were 4.9 % wrong, ARPACK's 0 %."""
    P = sp.csr_matrix(P)
    # The N-Cut matrix's diagonal is offset / d_i (`_normalized_affinity`): 1 / P_ii gives
    # the degrees' proportions. Without the offset, equal weights: any positive weights give
    # a start, the degrees a better one.
    diagonal = P.diagonal()
    degrees = 1.0 / diagonal if (diagonal > 0).all() else np.ones(P.shape[0])

    def solve(coarse, m):
        return coarse_top(coarse, m, random_state, tol ** 2)

    start = _multilevel.coarse_start(P, degrees, n_vectors, solve,
                                     dtype=_multilevel.refine_dtype(tol))
    values, vectors, residual = _multilevel.refine(P, start, tol, max_iter)
    if residual > tol:
        v0 = check_random_state(random_state).uniform(-1.0, 1.0, P.shape[0])
        values, vectors = arpack_top(_multilevel.with_values(P, np.float64), n_vectors, v0)
    return values, _fix_signs(vectors)


def coarse_top(coarse, n_vectors, random_state, tol):
    """The multilevel start's coarse solve: the `n_vectors` largest eigenpairs of the coarse
    matrix, descending; dense up to `_DENSE_LIMIT` points, else ARPACK to the relative
    tolerance `tol` (`_multilevel_top` and the distributed fit: LOBPCG's squared, 1e-6, so
    that the start's residuals stay far below the tolerance LOBPCG then refines to on the
    whole graph). At machine precision the distributed fit's client took 12.3 s on the
    43,831-aggregate graph of a 10^6-point fit with KSSC's defaults while the workers idled;
    at 1e-6, 4.8 s (largest residual 5e-7) with as few LOBPCG products after it; at 1e-3
    (1.4 s) LOBPCG then made 12 halo products a worker instead of 4 (docs/scaling.md)."""
    n = coarse.shape[0]
    if n <= _DENSE_LIMIT or n_vectors >= n - 1:
        return top_eigenvectors(coarse, n_vectors, random_state)
    v0 = check_random_state(random_state).uniform(-1.0, 1.0, n)
    values, vectors = arpack_top(coarse, n_vectors, v0, tol)  # one component at a time
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def _fix_signs(vectors):
    # Threaded BLAS sums in a varying order; fix each vector's sign by its largest entry so
    # that a seed gives the same vectors.
    largest = vectors[np.argmax(np.abs(vectors), axis=0), np.arange(vectors.shape[1])]
    return vectors * np.where(largest < 0, -1.0, 1.0)


def _lobpcg_top(P, n_vectors, rng, tol, max_iter=500):
    """Largest eigenpairs of P by LOBPCG on I - P, AMG-preconditioned when pyamg imports."""
    n = P.shape[0]
    laplacian = (sp.identity(n, format="csr") - sp.csr_matrix(P)).tocsr()
    try:
        import pyamg
    except ImportError:
        preconditioner = None
    else:
        # The shift keeps the multigrid hierarchy of the singular Laplacian well defined.
        shifted = laplacian + 1e-5 * sp.identity(n, format="csr")
        preconditioner = pyamg.smoothed_aggregation_solver(shifted).aspreconditioner()
    block = rng.uniform(-1.0, 1.0, (n, n_vectors))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scipy's own; ours below names the cost
        values, vectors = lobpcg(laplacian, block, M=preconditioner, tol=tol, maxiter=max_iter,
                                 largest=False)
    residual = np.linalg.norm(laplacian @ vectors - vectors * values, axis=0).max()
    if residual > tol:
        warn_caller(f"LOBPCG stopped at residual {residual:.2g} above tol={tol:g} in at most "
                    f"{max_iter} iterations: the embedding may be inaccurate; raise tol or "
                    "use solver='arpack'.", ConvergenceWarning)
    return 1.0 - values, _fix_signs(vectors)


def discretize(vectors, random_state=None, max_iter=20):
    """Yu and Shi's multiclass discretisation of continuous N-Cut eigenvectors into labels."""
    n, p = vectors.shape
    rng = check_random_state(random_state)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    V = vectors / np.where(norms == 0, 1.0, norms)
    R = np.zeros((p, p))
    R[:, 0] = V[rng.randint(n)]
    cumulative = np.zeros(n)
    for j in range(1, p):
        cumulative += np.abs(V @ R[:, j - 1])
        R[:, j] = V[np.argmin(cumulative)]
    last = 0.0
    for _ in range(max_iter):
        labels = np.argmax(V @ R, axis=1)
        Y = np.zeros((n, p))
        Y[np.arange(n), labels] = 1.0
        U, s, Vt = svd(Y.T @ V, full_matrices=False)
        ncut_value = 2.0 * (n - s.sum())
        if abs(ncut_value - last) < np.finfo(float).eps:
            break
        last = ncut_value
        R = Vt.T @ U.T
    return labels


def ncut_embedding(W, n_clusters, *, random_state=None):
    """The N-Cut eigenvectors D^-1/2 v, scaled to norm sqrt(n), first entry negative."""
    P, degrees = _normalized_affinity(W)
    if P.shape[0] > _MULTILEVEL_FROM:
        # The multilevel route's LOBPCG iterates in float32 (`_multilevel.refine_dtype`):
        # cast here, the float64 values are let go before its blocks are allocated.
        P = _multilevel.with_values(P, _multilevel.refine_dtype(_MULTILEVEL_TOL))
    _, vectors = top_eigenvectors(P, n_clusters, random_state)
    vectors = vectors / np.sqrt(degrees)[:, None]
    vectors *= np.sqrt(len(degrees)) / np.linalg.norm(vectors, axis=0)
    signs = np.where(vectors[0] > 0, -1.0, 1.0)
    return vectors * signs


def njw_embedding(W, n_clusters, *, random_state=None):
    """Top eigenvectors of D^-1/2 W D^-1/2 (d = row sums + eps), rows scaled to unit norm."""
    W = sp.csr_matrix(W, dtype=np.float64)
    eps = np.finfo(float).eps
    scale = sp.diags(1.0 / np.sqrt(np.asarray(W.sum(axis=1)).ravel() + eps))
    _, vectors = top_eigenvectors((scale @ W @ scale).tocsr(), n_clusters, random_state)
    return vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + eps)


def _normalized_adjacency(W):
    """I - L for the normalised Laplacian L of W (its diagonal ignored), as a CSR matrix.

    D^-1/2 |W| D^-1/2, with 1 on the diagonal of isolated points: each is a component of
    its own, as in `scipy.sparse.csgraph.laplacian(W, normed=True)`.
    """
    W = abs(sp.csr_matrix(W, dtype=np.float64))
    W.setdiag(0.0)
    W.eliminate_zeros()
    degrees = np.asarray(W.sum(axis=1)).ravel()
    isolated = degrees == 0
    scale = sp.diags(1.0 / np.sqrt(np.where(isolated, 1.0, degrees)))
    return (scale @ W @ scale + sp.diags(isolated.astype(float))).tocsr()


def estimate_n_clusters(W, max_clusters=20, random_state=None):
    """Number of clusters: the largest relative gap in the normalised Laplacian's spectrum.

    With Laplacian eigenvalues l_1 <= l_2 <= ..., the estimate is the 2 <= c <= max_clusters
    that maximises the relative eigen-gap (l_{c+1} - l_c) / max(l_{c+1}, 0.05 l_max)
    (`n_clusters_by_relative_gap`).
    The Laplacian has no threshold or offset, unlike the N-Cut matrix, so the estimate does
    not change when W is scaled.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinity.
    max_clusters : int, default=20
        Largest number of clusters considered.
    random_state : int, RandomState instance or None, default=None
        Seeds the start vector of the sparse eigensolver.

    Returns
    -------
    n_clusters : int
        The c (2 <= c <= max_clusters; 1 when max_clusters is 1 or n_samples below 3)
        that maximises the relative eigen-gap.

    See Also
    --------
    spectral_clustering : Calls this function when `n_clusters` is None.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kssc import estimate_n_clusters
    >>> block = np.ones((3, 3)) - np.eye(3)
    >>> estimate_n_clusters(sp.block_diag([block, block]))
    2
    """
    return choose_n_clusters(W, max_clusters, random_state, warn=False)[0]


def _adjacency_top(W, n_values, random_state):
    """The `n_values` (at most n) largest eigenvalues of I - L, descending."""
    m = min(n_values, W.shape[0])
    return top_eigenvectors(_normalized_adjacency(W), m, random_state)[0]


def laplacian_eigenvalues(W, n_values, random_state=None):
    """The `n_values` smallest eigenvalues of W's normalised Laplacian, ascending (at most n)."""
    return 1.0 - _adjacency_top(W, n_values, random_state)


CLEAR_GAP = 0.73
"""The relative eigen-gap (`relative_eigengap`) of the chosen number of clusters below which
`choose_n_clusters` reports the choice as unsure. Chosen by leave-one-family-out on the
real-data panel's tasks with the generic preset (benchmarks/bench_suitability.py --part k;
docs/user_guide.rst, "The number of clusters")."""

_ZERO_EIGENVALUE = 1e-9
"""Laplacian eigenvalues below this count as 0 in `n_clusters_by_relative_gap`: c exactly
disconnected components give c zero eigenvalues, which the eigensolver returns as rounding
errors of about 1e-15; without the floor their ratios would look like gaps."""

SPECTRUM_FLOOR = 0.05
"""In `n_clusters_by_relative_gap`, a gap is measured relative to l_{c+1}, but never to less
than this share of the largest eigenvalue computed: a weak link (l_3 = 0.0015 after two
exact zeros, with the spectrum reaching 0.9) is no step. Chosen by leave-one-family-out on
the real-data panel's tasks among 0, 0.01, 0.02, 0.05, 0.1 and 0.2
(benchmarks/bench_suitability.py --part k)."""


def relative_eigengap(eigenvalues, n_clusters):
    """(l_{c+1} - l_c) / l_{c+1} for c = `n_clusters` and the ascending Laplacian
    eigenvalues l: in [0, 1], 1 when the c clusters are disconnected components and 0
    when the curve has no step there (the confidence of an eigen-gap choice, as in AutoSC,
    Fan et al., NeurIPS 2022). 0 when there is no (c + 1)-th eigenvalue."""
    values = np.clip(np.asarray(eigenvalues, dtype=float), 0.0, None)
    if n_clusters >= len(values) or values[n_clusters] <= 0:
        return 0.0
    return float((values[n_clusters] - values[n_clusters - 1]) / values[n_clusters])


def n_clusters_by_relative_gap(eigenvalues, max_clusters, floor=SPECTRUM_FLOOR):
    """(c, confidence): the c in 2..max_clusters with the largest relative eigen-gap
    (l_{c+1} - l_c) / max(l_{c+1}, floor l_max) of the ascending Laplacian eigenvalues l
    (those below `_ZERO_EIGENVALUE` taken as 0; l_max the last one given, at most
    l_{max_clusters+1}), and that gap, in [0, 1]. (1, relative gap at 1) when fewer than two
    clusters can be told apart (max_clusters < 2, or fewer than 3 eigenvalues).

    The absolute gap l_{c+1} - l_c favours the steps high in the curve, where eigenvalues
    are large and spread; over l_{c+1} a step counts by how many times larger the next
    eigenvalue is than the last one kept, so that c clusters with weak links between them
    (c eigenvalues near 0, then a jump) win, and the floor keeps a step between two
    eigenvalues that are both tiny next to the spectrum from counting. It never chooses
    1 cluster: l_1 = 0 would give 1 for any data, so a single group shows as a low
    confidence instead.

    Examples
    --------
    >>> n_clusters_by_relative_gap([0.0, 0.01, 0.02, 0.5, 0.6, 0.9], 4)
    (3, 0.96)
    """
    values = np.clip(np.asarray(eigenvalues, dtype=float), 0.0, None)
    values = np.where(values < _ZERO_EIGENVALUE, 0.0, values)
    top = min(max_clusters, len(values) - 1)
    if top < 2:
        return 1, relative_eigengap(values, 1)
    scale = np.maximum(values[2:top + 1], floor * values[top])
    gaps = np.divide(values[2:top + 1] - values[1:top], scale, out=np.zeros(top - 1),
                     where=scale > 0)
    best = int(np.argmax(gaps))
    return best + 2, float(gaps[best])


def n_clusters_warning(n_clusters, confidence, max_clusters, n_samples, clear_gap=CLEAR_GAP):
    """Why the eigen-gap's choice of `n_clusters` (relative eigen-gap `confidence`) deserves
    a DegenerateFitWarning, or None: a single cluster, a choice at `max_clusters` (when more
    were possible), or a relative eigen-gap below `clear_gap`."""
    if n_clusters == 1:
        return (f"the eigen-gap picked 1 cluster (max_clusters={max_clusters}): every point "
                "gets label 0. Pass n_clusters if the data has several clusters.")
    if n_clusters == max_clusters and max_clusters < n_samples - 1:
        return (f"the eigen-gap picked max_clusters={max_clusters}, the most it may: the data "
                "may hold more clusters. Raise max_clusters or pass n_clusters.")
    if confidence < clear_gap:
        return (f"the eigen-gap picked {n_clusters} clusters without a clear gap: relative "
                f"eigen-gap {confidence:.2f} (l_{n_clusters + 1} - l_{n_clusters}) / "
                f"max(l_{n_clusters + 1}, {SPECTRUM_FLOOR} l_max), below {clear_gap}; on the "
                "real-data panel 9 of the 13 choices below it were wrong. Pass n_clusters if "
                "you know it.")
    return None


def choose_n_clusters(W, max_clusters=20, random_state=None, *, warn=True):
    """(n_clusters, eigenvalues): the relative eigen-gap choice of `n_clusters_by_relative_gap`
    and the max_clusters + 1 smallest Laplacian eigenvalues behind it (fewer for small W).
    With `warn`, a DegenerateFitWarning when `n_clusters_warning` gives a reason."""
    if min(max_clusters + 1, W.shape[0]) < 2:
        return 1, np.zeros(min(max_clusters + 1, W.shape[0]))
    values = 1.0 - _adjacency_top(W, max_clusters + 1, random_state)
    n_clusters, confidence = n_clusters_by_relative_gap(values, max_clusters)
    message = n_clusters_warning(n_clusters, confidence, max_clusters, W.shape[0])
    if warn and message is not None:
        warn_degenerate(message)
    return n_clusters, values


def _check_graph(W, n_clusters):
    """Warn when W has more connected components than clusters (as spectral_embedding does).

    W is the affinity the eigenvectors are computed from (isolated points already left out:
    they have their own warning)."""
    n_components, _ = connected_components(W, directed=False)
    if n_components > n_clusters:
        warn_degenerate(
            f"graph is not fully connected: the affinity has {n_components} connected "
            f"components for n_clusters={n_clusters}; the spectral embedding may not work as "
            "expected and the split between components is arbitrary. Raise n_neighbors or "
            "n_random.")


def spectral_clustering(W, n_clusters=None, *, assign_labels="discretize", random_state=None,
                        max_clusters=20):
    """Labels of the points of the affinity W.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinity.
    n_clusters : int or None, default=None
        Number of clusters; None estimates it by the eigen-gap (at most `max_clusters`).
    assign_labels : {"discretize", "kmeans", "njw"}, default="discretize"
        "discretize": N-Cut eigenvectors and Yu and Shi's rotation (the paper's code);
        "kmeans": the same eigenvectors with unit rows, k-means with 10 restarts;
        "njw": Ng, Jordan and Weiss as Elhamifar and Vidal's SSC code runs it (module
        docstring).
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver, the rotation's first row and k-means.
    max_clusters : int, default=20
        Largest number of clusters the eigen-gap may choose.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Cluster of every point, 0 to n_clusters - 1. A DegenerateFitWarning reports each
        cause once: an eigen-gap of 1 cluster or of `max_clusters`; isolated points (no
        affinity above 1e-6 to another point), which are left out of the spectral step and
        get the label of the largest cluster; more connected components than clusters among
        the other points ("graph is not fully connected"); fewer clusters out than asked.

    See Also
    --------
    ncut : This function with ``assign_labels="discretize"``.
    estimate_n_clusters : The eigen-gap rule used when `n_clusters` is None.
    sklearn.cluster.SpectralClustering : The spectral clustering of scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kssc import clustering_error, spectral_clustering
    >>> block = np.ones((3, 3)) - np.eye(3)
    >>> W = sp.block_diag([block, block])
    >>> labels = spectral_clustering(W, random_state=0)
    >>> float(clustering_error([0, 0, 0, 1, 1, 1], labels))
    0.0
    """
    if assign_labels not in ASSIGN_LABELS:
        raise ValueError(f"assign_labels must be one of {ASSIGN_LABELS}; got {assign_labels!r}.")
    rng = check_random_state(random_state)
    if n_clusters is None:
        n_clusters = choose_n_clusters(W, max_clusters, rng)[0]
    return spectral_labels(W, n_clusters, assign_labels, rng)


def spectral_labels(W, n_clusters, assign_labels, rng, *, report_isolated=True):
    """`spectral_clustering` for a given number of clusters; `report_isolated=False` when the
    caller has already warned about the isolated points (the estimators' fit)."""
    n = W.shape[0]
    if n_clusters == 1:
        return np.zeros(n, dtype=np.int64)
    linked = linked_points(W)
    left_out = leaves_out(linked, n_clusters)
    if report_isolated and not linked.all():
        warn_degenerate(isolated_message(np.flatnonzero(~linked), n, left_out))
    if not linked.all() and not left_out:
        # (Nearly) every point isolated: the labels are arbitrary, as the warning says.
        return _assign(W, n_clusters, assign_labels, rng)
    labels = np.empty(n, dtype=np.int64)
    # An isolated point is a component of its own: in the N-Cut matrix it adds a unit
    # eigenvalue, whose eigenvector (its indicator) can displace a cluster's. Cluster the
    # linked points alone; an isolated point carries no affinity to go by.
    W = sp.csr_matrix(W) if linked.all() else sp.csr_matrix(W)[linked][:, linked]
    _check_graph(W, n_clusters)
    labels[linked] = _assign(W, n_clusters, assign_labels, rng)
    if not linked.all():
        labels[~linked] = np.bincount(labels[linked]).argmax()
    found = np.unique(labels).size
    if found < n_clusters:
        warn_degenerate(
            f"{found} cluster(s) came out of the spectral step for n_clusters={n_clusters}: "
            f"{n_clusters - found} stayed empty (duplicated points, or an affinity with "
            "fewer well-separated groups than asked).")
    return labels


def _assign(W, n_clusters, assign_labels, rng):
    """Labels from the top `n_clusters` eigenvectors, by the method `assign_labels`."""
    if assign_labels == "njw":
        embedding = njw_embedding(W, n_clusters, random_state=rng)
        labels = KMeans(n_clusters, n_init=20, random_state=rng).fit_predict(embedding)
        return labels.astype(np.int64)
    vectors = ncut_embedding(W, n_clusters, random_state=rng)
    if assign_labels == "discretize":
        return discretize(vectors, rng)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    embedding = vectors / np.where(norms == 0, 1.0, norms)
    return KMeans(n_clusters, n_init=10, random_state=rng).fit_predict(embedding).astype(np.int64)


def ncut(W, n_clusters, *, random_state=None):
    """N-Cut labels with Yu and Shi's discretisation (the paper's `ncutW`).

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinity.
    n_clusters : int
        Number of clusters.
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver and the rotation's random first row.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Cluster of every point, 0 to n_clusters - 1.

    See Also
    --------
    spectral_clustering : The same step with other label assignments.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kssc import clustering_error, ncut
    >>> block = np.ones((3, 3)) - np.eye(3)
    >>> labels = ncut(sp.block_diag([block, block]), 2, random_state=0)
    >>> float(clustering_error([0, 0, 0, 1, 1, 1], labels))
    0.0
    """
    return spectral_clustering(W, n_clusters, assign_labels="discretize", random_state=random_state)
