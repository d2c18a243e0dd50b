"""Tuned k-SSC and SSC for the accuracy experiments (`hopkins155`, `yale_subjects`).

Both follow Elhamifar and Vidal's SSC code (TPAMI 2013; `SSC.m`, `admmLasso_mat_func.m`,
`admmOutlier_mat_func.m`, `thrC.m`, `BuildAdjacency.m`, `SpectralClustering.m`), which is
what their published Hopkins 155 and Extended Yale B figures come from:
- one global penalty per data set: mu1 = alpha / lam0, lam0 = min_i max_j |x_i^T x_j|,
  mu2 = alpha, for every point i
      min_z ||z||_1 + mu1/2 ||x_i - A_i^T z||^2   [s.t. 1^T z = 1 if `affine`],
  solved by their ADMM (z = c splitting, the affine constraint by a multiplier), stopped at
  max |z - c| <= 2e-4 or 200 iterations, as their code does (the inexact solution is part
  of the method: solved to 1e-7 with a per-point lam the same neighbours gave 7.9 % on
  Hopkins instead of 2.4 %, docs/tuned_accuracy.md);
- `outlier`: a sparse error term, min ||z||_1 + ||e||_1 + mu1/2 ||x_i - A_i^T z - e/gamma||^2,
  gamma = alpha / max_j ||x_j||_1 (their face setting), by their ADMM on [A_i^T, I/gamma]
  (inexact here too: on a 10-subject Yale B draw it gave 7.7 % where FISTA run to
  convergence on the same objective gave 41 %);
- `threshold` rho: keep each row's largest coefficients holding rho of its l1 mass (thrC);
- the affinity: rows of |Z| divided by their max (BuildAdjacency), then |Z| + |Z|^T;
- Ng, Jordan and Weiss spectral clustering (normalised Laplacian, unit rows, k-means with
  20 restarts).

k-SSC restricts A_i to a candidate set: the `n_neighbors` nearest points by `metric` (found
after removing the top `neighbour_pcs` principal directions; several such views may add
their own neighbours) plus `n_random` other points drawn uniformly at random (seeded by
`random_state`). The random candidates keep each subspace's graph connected: with local
neighbours only, a large motion's graph is a chain that N-Cut cuts in the middle
(docs/tuned_accuracy.md).
"""

from numbers import Integral, Real
from time import perf_counter

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from kssc._base import SelfExpressiveClustering
from kssc._validation import check_n_neighbors, normalize_rows
from kssc.neighbours import METRICS, nearest_neighbours
from kssc.prox import soft_threshold
from kssc.representation import coefficients_to_sparse

ADMM_TOL = 2e-4           # Elhamifar's thr
ADMM_MAX_ITER = 200       # Elhamifar's maxIter


def lasso_admm(gram, corr, mu1, mu2, *, affine=True, tol=ADMM_TOL, max_iter=ADMM_MAX_ITER):
    """Elhamifar and Vidal's ADMM for a batch of (affine) lasso problems.

    Point i: min_z ||z||_1 + mu1/2 ||x_i - A_i^T z||^2 [s.t. 1^T z = 1], given
    gram (n, k, k) = A_i A_i^T and corr (n, k) = A_i x_i; mu1, mu2 scalars. Like their code,
    every point iterates until the largest max |z - c|, max |z - c_prev| (and |1^T z - 1|)
    over all points is <= tol: the stopping point is part of the method.
    Returns (c (n, k), the iteration count).
    """
    n, k = corr.shape
    shift = mu2 if affine else 0.0
    inverse = np.linalg.inv(mu1 * gram + mu2 * np.eye(k) + shift)
    rhs = mu1 * corr + shift
    c = np.zeros((n, k))
    dual = np.zeros((n, k))
    dual_affine = np.zeros((n, 1))
    for it in range(1, max_iter + 1):
        z = np.matmul(inverse, (rhs + mu2 * c - dual - dual_affine)[:, :, None])[:, :, 0]
        c_new = soft_threshold(z + dual / mu2, 1.0 / mu2)
        dual += mu2 * (z - c_new)
        gap = max(np.abs(z - c_new).max(), np.abs(z - c).max())
        if affine:
            excess = z.sum(axis=1, keepdims=True) - 1.0
            dual_affine += mu2 * excess
            gap = max(gap, np.abs(excess).max())
        c = c_new
        if gap <= tol:
            break
    return c, it


def outlier_lasso_admm(X, indices, gram, corr, mu1, mu2, gamma, *, tol=ADMM_TOL,
                       max_iter=ADMM_MAX_ITER):
    """Elhamifar and Vidal's outlier ADMM (admmOutlier_mat_func), point i of X (n, D) coded
    over its candidates A_i = X[indices[i]] (indices (n, k), distinct per row; gram and corr
    as `candidate_products` gives them).

    Point i: min ||z||_1 + ||e||_1 + mu1/2 ||x_i - A_i^T z - e / gamma||^2: their ADMM on the
    dictionary [A_i^T, I / gamma], its (k + D)-square system solved through the Schur
    complement of the identity block (k x k per point). The products with the A_i are
    matrix products: A_i b_i gathered from B X^T, A_i^T u_i as the rows of U X with U (n, n)
    holding u_i at the candidates (O(n^2) memory: a few thousand points).
    Returns (z (n, k), the iteration count).
    """
    n, k = indices.shape
    rows = np.arange(n)[:, None]
    beta, s = mu1 / gamma, mu1 / gamma**2 + mu2
    schur_inverse = np.linalg.inv((mu1 - beta**2 / s) * gram + mu2 * np.eye(k))
    rhs_z, rhs_e = mu1 * corr, beta * X
    U = np.zeros((n, n))
    z_c, z_e = np.zeros((n, k)), np.zeros(X.shape)
    dual_z, dual_e = np.zeros((n, k)), np.zeros(X.shape)
    for it in range(1, max_iter + 1):
        a = rhs_z + mu2 * z_c - dual_z
        b = rhs_e + mu2 * z_e - dual_e
        u = np.matmul(schur_inverse, (a - beta / s * (b @ X.T)[rows, indices])[:, :, None])[:, :, 0]
        U[rows, indices] = u
        v = (b - beta * (U @ X)) / s
        c_new = soft_threshold(u + dual_z / mu2, 1.0 / mu2)
        e_new = soft_threshold(v + dual_e / mu2, 1.0 / mu2)
        dual_z += mu2 * (u - c_new)
        dual_e += mu2 * (v - e_new)
        gap = max(np.abs(u - c_new).max(), np.abs(v - e_new).max(),
                  np.abs(u - z_c).max(), np.abs(v - z_e).max())
        z_c, z_e = c_new, e_new
        if gap <= tol:
            break
    return z_c, it


def candidate_products(X, indices):
    """(gram (n, k, k), corr (n, k)): A_i A_i^T and A_i x_i for A_i = X[indices[i]], gathered
    from X X^T (O(n^2) memory: a few thousand points)."""
    G = X @ X.T
    return G[indices[:, :, None], indices[:, None, :]], G[np.arange(len(X))[:, None], indices]


def ssc_admm(X, alpha, *, affine=True, outlier=False, tol=ADMM_TOL, max_iter=ADMM_MAX_ITER):
    """Elhamifar and Vidal's SSC-ADMM over all points (rows of X), one shared system.

    Like their code, the diagonal is zeroed after each unconstrained solve. With `outlier`,
    their dictionary [Y, I / gamma] (Y = X^T), its system solved through the Schur complement
    of the identity block. Returns (dense C (n, n), row i codes point i; the iteration count).
    """
    n = X.shape[0]
    G = X @ X.T
    lam_max = np.abs(G - np.diag(np.diag(G))).max(axis=1)
    mu2 = alpha
    if outlier:
        mu1, gamma = outlier_scales(X, alpha, lam_max)
        beta, s = mu1 / gamma, mu1 / gamma**2 + mu2
        system = (mu1 - beta**2 / s) * G + mu2 * np.eye(n)
    else:
        mu1 = alpha / global_lam(lam_max)
        system = mu1 * G + mu2 * np.eye(n) + (mu2 if affine else 0.0)
    inverse = np.linalg.inv(system)
    rhs = mu1 * G + (mu2 if affine else 0.0)
    C = np.zeros((n, n))          # column j codes point j here (their layout)
    dual = np.zeros((n, n))
    dual_affine = np.zeros(n)
    if outlier:
        E, dual_e, rhs_e = np.zeros(X.shape), np.zeros(X.shape), beta * X
    for it in range(1, max_iter + 1):
        a = rhs + mu2 * C - dual - dual_affine[None, :]
        if outlier:
            b = rhs_e + mu2 * E - dual_e
            Z = inverse @ (a - beta / s * (X @ b.T))
            V = (b - beta * (Z.T @ X)) / s
        else:
            Z = inverse @ a
        np.fill_diagonal(Z, 0.0)
        C_new = soft_threshold(Z + dual / mu2, 1.0 / mu2)
        np.fill_diagonal(C_new, 0.0)
        dual += mu2 * (Z - C_new)
        gap = max(np.abs(Z - C_new).max(), np.abs(Z - C).max())
        if outlier:
            E_new = soft_threshold(V + dual_e / mu2, 1.0 / mu2)
            dual_e += mu2 * (V - E_new)
            gap = max(gap, np.abs(V - E_new).max(), np.abs(V - E).max())
            E = E_new
        if affine:
            excess = Z.sum(axis=0) - 1.0
            dual_affine += mu2 * excess
            gap = max(gap, np.abs(excess).max())
        C = C_new
        if gap <= tol:
            break
    return C.T, it


def global_lam(lam_max):
    """Elhamifar's lam0 = min_i lam_max_i (positive)."""
    return max(float(np.min(lam_max)), np.finfo(float).tiny)


def outlier_scales(X, alpha, lam_max):
    """(mu1, gamma) of the outlier model: gamma = alpha / max_j ||x_j||_1, and lam0 also
    counts the identity atoms I / gamma (their computeLambda_mat(Y, P))."""
    gamma = alpha / max(np.abs(X).sum(axis=1).max(), np.finfo(float).tiny)
    return alpha / global_lam(np.maximum(lam_max, np.abs(X).max(axis=1) / gamma)), gamma


def threshold_rows(coef, rho):
    """Keep, per row, the largest |entries| whose l1 mass first reaches rho of the row's."""
    a = np.abs(coef)
    order = np.argsort(-a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, 1)
    before = np.cumsum(s, axis=1) - s
    keep = np.zeros(coef.shape, dtype=bool)
    np.put_along_axis(keep, order, before < rho * s.sum(axis=1, keepdims=True), 1)
    return np.where(keep, coef, 0.0)


def l2_neighbours(X, k):
    """The k nearest other rows of X by Euclidean distance of the points as given (n, k)."""
    from sklearn.neighbors import NearestNeighbors

    _, indices = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    rows = np.arange(len(X))[:, None]
    # Drop each point itself (the first column unless exact duplicates tie with it).
    keep = indices != rows
    keep[keep.sum(axis=1) > k, -1] = False
    return indices[keep].reshape(len(X), k)


def remove_top_components(X, n_components):
    """X minus its projection on its top `n_components` right singular vectors (uncentred).

    On faces the leading components are mostly illumination (Belhumeur, Hespanha and
    Kriegman, 1997, drop the first three): removing 5 raised the same-subject share of 20
    abs-cosine neighbours from 38 % to 77-80 % on two 10-subject Yale B draws.
    """
    if n_components <= 0:
        return X
    top = np.linalg.svd(X, full_matrices=False)[2][:n_components]
    return X - (X @ top.T) @ top


def random_candidates(first, n_random, random_state):
    """Append to each row of `first` (n, k1) `n_random` distinct other points not in it,
    drawn uniformly at random. O(n^2) memory: meant for data sets of a few thousand points."""
    n, k1 = first.shape
    if n_random <= 0:
        return first
    keys = random_state.random_sample((n, n))
    rows = np.arange(n)[:, None]
    keys[rows, first] = np.inf
    keys[rows[:, 0], rows[:, 0]] = np.inf
    picks = np.argpartition(keys, n_random - 1, axis=1)[:, :n_random]
    return np.hstack([first, picks])


def _max_normalize(Z):
    """Divide every row of the CSR matrix Z by its largest |entry| (rows of zeros stay zero)."""
    Z = sp.csr_matrix(Z)
    peak = np.asarray(abs(Z).max(axis=1).todense()).ravel()
    return sp.diags(1.0 / np.where(peak > 0, peak, 1.0)) @ Z


class _TunedMixin:
    assign_labels = "njw"   # their spectral step; fixed, not a parameter

    def _prepare(self, X):
        X = X.astype(float, copy=False)
        return normalize_rows(X)[0] if self.normalize else X

    def _check_model(self):
        if self.affine and self.outlier:
            raise ValueError("affine=True with outlier=True is not supported; choose one.")

    def _finish(self, coef_or_Z, n=None, indices=None):
        if self.threshold is not None:
            coef_or_Z = threshold_rows(coef_or_Z, self.threshold)
        Z = coef_or_Z if indices is None else coefficients_to_sparse(indices, coef_or_Z, n)
        Z = _max_normalize(Z)
        Z.eliminate_zeros()
        return Z.tocsr()


_COMMON = {
    "n_clusters": SelfExpressiveClustering._parameter_constraints["n_clusters"],
    "random_state": ["random_state"],
    "alpha": [Interval(Real, 0, None, closed="neither")],
    "affine": ["boolean"],
    "outlier": ["boolean"],
    "normalize": ["boolean"],
    "threshold": [Interval(Real, 0, 1, closed="right"), None],
}


def merge_candidates(first, more, n_new):
    """Append to each row of `first` (n, k1) the first `n_new` entries of the same row of
    `more` (n, >= k1 + n_new, distinct per row) that are not in it."""
    taken = (more[:, :, None] == first[:, None, :]).any(axis=2)
    order = np.argsort(taken, axis=1, kind="stable")[:, :n_new]
    return np.hstack([first, np.take_along_axis(more, order, axis=1)])


def _int_list(value, name, low):
    values = np.atleast_1d(np.asarray(value))
    if (values.ndim != 1 or values.size == 0 or not np.issubdtype(values.dtype, np.integer)
            or values.min() < low):
        raise ValueError(f"{name} must be an integer >= {low} or a non-empty list of them; "
                         f"got {value!r}.")
    return values.tolist()


class TunedKSSC(_TunedMixin, SelfExpressiveClustering):
    """k-SSC with Elhamifar and Vidal's SSC model and solver on a candidate set per point:
    the `n_neighbors` nearest by `metric` (on unit vectors; "l2": the points as given), found
    after removing the top `neighbour_pcs` principal directions, plus `n_random` random other
    points. The lasso codes the points as prepared (`normalize`), components and all.

    Lists of equal length for `n_neighbors` and `neighbour_pcs` give several views: view j
    adds the n_neighbors[j] nearest points, with the top neighbour_pcs[j] directions removed,
    that earlier views did not add (on Hopkins 155, [15, 15] with [1, 3]).
    """

    _parameter_constraints = {
        **_COMMON,
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "n_random": [Interval(Integral, 0, None, closed="left")],
        "neighbour_pcs": [Interval(Integral, 0, None, closed="left"), "array-like"],
        "metric": [StrOptions({*METRICS, "l2"})],
    }

    def __init__(self, n_clusters=None, *, n_neighbors=20, n_random=0, neighbour_pcs=0,
                 alpha=800.0, affine=False, outlier=False, normalize=True, metric="abs_cosine",
                 threshold=None, random_state=None):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.n_random = n_random
        self.neighbour_pcs = neighbour_pcs
        self.alpha = alpha
        self.affine = affine
        self.outlier = outlier
        self.normalize = normalize
        self.metric = metric
        self.threshold = threshold
        self.random_state = random_state

    def _views(self):
        counts = _int_list(self.n_neighbors, "n_neighbors", 1)
        pcs = _int_list(self.neighbour_pcs, "neighbour_pcs", 0)
        if len(counts) != len(pcs):
            raise ValueError(f"n_neighbors ({self.n_neighbors!r}) and neighbour_pcs "
                             f"({self.neighbour_pcs!r}) must have the same length.")
        return zip(counts, pcs)

    def _nearest(self, Q, k):
        if self.metric == "l2":
            return l2_neighbours(Q, k)
        return nearest_neighbours(Q, k, metric=self.metric, algorithm="exact")[0]

    def _candidates(self, P, random_state):
        n = P.shape[0]
        indices = np.empty((n, 0), dtype=np.int64)
        for count, pcs in self._views():
            # Capped at n - 1 in all: one setting for a data set whose problems differ in size.
            count = min(count, n - 1 - indices.shape[1])
            if count == 0:
                break
            Q = remove_top_components(P, min(pcs, min(P.shape) - 1))
            found = self._nearest(Q, check_n_neighbors(indices.shape[1] + count, n))
            indices = merge_candidates(indices, found, count)
        return random_candidates(indices, min(self.n_random, n - 1 - indices.shape[1]),
                                 random_state)

    def _representation(self, X, random_state):
        self._check_model()
        P = self._prepare(X)
        n = P.shape[0]
        start = perf_counter()
        indices = self._candidates(P, random_state)
        found = perf_counter()
        gram, corr = candidate_products(P, indices)
        lam_max = np.abs(corr).max(axis=1)
        if self.outlier:
            mu1, gamma = outlier_scales(P, self.alpha, lam_max)
            coef, n_iter = outlier_lasso_admm(P, indices, gram, corr, mu1, self.alpha, gamma)
        else:
            coef, n_iter = lasso_admm(gram, corr, self.alpha / global_lam(lam_max), self.alpha,
                                      affine=self.affine)
        solved = perf_counter()
        self.neighbors_ = indices
        return self._finish(coef, n, indices), {
            "n_iter": n_iter, "timings": {"neighbours": found - start, "coefficients": solved - found}}


class TunedSSC(_TunedMixin, SelfExpressiveClustering):
    """SSC over all points with the same model and solver as `TunedKSSC`."""

    _parameter_constraints = dict(_COMMON)

    def __init__(self, n_clusters=None, *, alpha=800.0, affine=False, outlier=False,
                 normalize=True, threshold=None, random_state=None):
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.affine = affine
        self.outlier = outlier
        self.normalize = normalize
        self.threshold = threshold
        self.random_state = random_state

    def _representation(self, X, random_state):
        self._check_model()
        C, n_iter = ssc_admm(self._prepare(X), self.alpha, affine=self.affine,
                             outlier=self.outlier)
        return self._finish(C), {"n_iter": n_iter}
