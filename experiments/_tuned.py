"""Tuned k-SSC and SSC for the accuracy experiments (`hopkins155`, `yale_subjects`).

A prototype of options the core estimators lack, kept here until they move into `kssc/`:
- `affine`: the affine constraint 1^T z = 1 of Elhamifar and Vidal (TPAMI 2013, eq. 6),
  which motion trajectories need (each motion spans an affine subspace of dimension <= 3);
- `normalize=False`: code the raw points (the affine model is not scale invariant);
- `row_normalize="max"`: divide each row of Z by its largest |entry| before the affinity
  (the `BuildAdjacency` step of Elhamifar's code), so points with small coefficients weigh
  as much as the others in the graph;
- lam relative to each point's lambda_max = max_j |x_i^T x_j| over its dictionary;
- `union_metric` / `union_fraction` (k-SSC): a share of the k neighbours taken by a second
  metric, e.g. "centred_abs_cosine" (abs-cosine after removing the mean of all points, for
  Hopkins the mean trajectory), so that the kNN graph of a motion stays connected;
- `threshold` rho: keep the largest coefficients of each row holding rho of its l1 mass
  (Elhamifar's `thrC`, rho = 0.7 in `run_SSC_MS.m`) before the affinity.

Both problems, per point i with dictionary A (its k neighbours, or all other points),
    min_z lam_i ||z||_1 + 1/2 ||x_i - A^T z||^2   [s.t. 1^T z = 1],
are solved by ADMM with the splitting z = c (Boyd et al. 2011, 6.4), batched over points.
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


def lasso_admm(gram, corr, lam, rho, *, affine=True, tol=1e-7, max_iter=300):
    """ADMM for a batch of (affine) lasso problems sharing nothing but their size.

    gram (n, k, k), corr (n, k), lam and rho (n,). Returns (z (n, k), n_iter).
    Stops when every problem's primal residual max|c - z| and dual change max|z - z_prev|
    are <= tol (relative to the largest |z|).
    """
    n, k = corr.shape
    rho = np.asarray(rho, dtype=float)
    M = np.linalg.inv(gram + rho[:, None, None] * np.eye(k))
    M1 = M.sum(axis=2)                      # M 1 (M symmetric)
    one_M_one = M1.sum(axis=1)
    z = np.zeros((n, k))
    u = np.zeros((n, k))
    thresh = (lam / rho)[:, None]
    for it in range(1, max_iter + 1):
        q = corr + rho[:, None] * (z - u)
        c = np.matmul(M, q[:, :, None])[:, :, 0]
        if affine:
            nu = (c.sum(axis=1) - 1.0) / one_M_one
            c -= nu[:, None] * M1
        z_prev = z
        z = soft_threshold(c + u, thresh)
        u += c - z
        scale = np.maximum(np.abs(z).max(axis=1), 1e-12)
        if max(np.max(np.abs(c - z).max(axis=1) / scale),
               np.max(np.abs(z - z_prev).max(axis=1) / scale)) <= tol:
            break
    return z, it


def ssc_admm(X, lam_rel, *, affine=True, tol=1e-7, max_iter=300):
    """Elhamifar and Vidal's SSC-ADMM over all points (rows of X); returns dense Z (row i codes i).

    lam_i = lam_rel * max_{j != i} |x_i^T x_j|; one factorisation of (G + rho I), rho the
    mean lam_i / lam_rel, shared by all points. Memory O(n^2).
    """
    n = X.shape[0]
    G = X @ X.T
    off = np.abs(G - np.diag(np.diag(G)))
    lam_max = np.maximum(off.max(axis=1), np.finfo(float).tiny)
    lam = lam_rel * lam_max
    rho = lam_max.mean()
    M = np.linalg.inv(G + rho * np.eye(n))
    M1 = M.sum(axis=1)
    one_M_one = M1.sum()
    Z = np.zeros((n, n))                      # column i codes point i here (paper layout)
    U = np.zeros((n, n))
    thresh = (lam / rho)[None, :]
    for it in range(1, max_iter + 1):
        C = M @ (G + rho * (Z - U))
        if affine:
            nu = (C.sum(axis=0) - 1.0) / one_M_one
            C -= np.outer(M1, nu)
        Z_prev = Z
        Z = soft_threshold(C + U, thresh)
        np.fill_diagonal(Z, 0.0)
        U += C - Z
        scale = np.maximum(np.abs(Z).max(axis=0), 1e-12)
        if max(np.max(np.abs(C - Z).max(axis=0) / scale),
               np.max(np.abs(Z - Z_prev).max(axis=0) / scale)) <= tol:
            break
    return Z.T, it


def l2_neighbours(X, k):
    """The k nearest other rows of X by Euclidean distance of the points as given (n, k)."""
    from sklearn.neighbors import NearestNeighbors

    _, indices = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    rows = np.arange(len(X))[:, None]
    # Drop each point itself (the first column unless exact duplicates tie with it).
    keep = indices != rows
    keep[keep.sum(axis=1) > k, -1] = False
    return indices[keep].reshape(len(X), k)


UNION_METRICS = ("centred_abs_cosine", "abs_cosine", "euclidean")


def union_neighbours(X, first, k_second, metric):
    """Append to each row of `first` (n, k1) its `k_second` nearest other points by `metric`
    that are not in it already (most similar first). Returns (n, k1 + k_second)."""
    n, k1 = first.shape
    if k_second <= 0:
        return first
    if metric == "centred_abs_cosine":
        X, metric = X - X.mean(axis=0), "abs_cosine"
    candidates, _ = nearest_neighbours(X, min(k1 + k_second, n - 1), metric=metric,
                                       algorithm="exact")
    fresh = ~(candidates[:, :, None] == first[:, None, :]).any(axis=2)
    # Each row has >= k_second fresh candidates (at most k1 overlap); keep the first ones.
    order = np.argsort(~fresh, axis=1, kind="stable")[:, :k_second]
    return np.hstack([first, np.take_along_axis(candidates, order, 1)])


def threshold_rows(coef, rho):
    """Keep, per row, the largest |entries| whose l1 mass first reaches rho of the row's."""
    a = np.abs(coef)
    order = np.argsort(-a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, 1)
    before = np.cumsum(s, axis=1) - s
    keep = np.zeros(coef.shape, dtype=bool)
    np.put_along_axis(keep, order, before < rho * s.sum(axis=1, keepdims=True), 1)
    return np.where(keep, coef, 0.0)


def _max_normalize(Z):
    """Divide every row of the CSR matrix Z by its largest |entry| (rows of zeros stay zero)."""
    Z = sp.csr_matrix(Z)
    peak = np.asarray(abs(Z).max(axis=1).todense()).ravel()
    return sp.diags(1.0 / np.where(peak > 0, peak, 1.0)) @ Z


class _TunedMixin:
    def _prepare(self, X):
        X = X.astype(float, copy=False)
        return normalize_rows(X)[0] if self.normalize else X

    def _finish(self, Z):
        Z = _max_normalize(Z) if self.row_normalize == "max" else sp.csr_matrix(Z)
        Z.eliminate_zeros()
        return Z.tocsr()


_COMMON = {
    "lam": [Interval(Real, 0, None, closed="neither")],
    "affine": ["boolean"],
    "normalize": ["boolean"],
    "row_normalize": [StrOptions({"max"}), None],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
}


class TunedKSSC(_TunedMixin, SelfExpressiveClustering):
    """k-SSC with signed coefficients, lam relative to each point's lambda_max, optional
    affine constraint, optional raw (unnormalised) points and row max-normalisation.

    Neighbours are always found on unit vectors (`metric`); the lasso codes the points as
    prepared (`normalize`).
    """

    _parameter_constraints = {
        **SelfExpressiveClustering._parameter_constraints, **_COMMON,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "metric": [StrOptions({*METRICS, "l2"})],
        "union_metric": [StrOptions(set(UNION_METRICS)), None],
        "union_fraction": [Interval(Real, 0, 1, closed="both")],
        "threshold": [Interval(Real, 0, 1, closed="right"), None],
    }

    def __init__(self, n_clusters=None, *, n_neighbors=20, lam=0.01, affine=False, normalize=True,
                 row_normalize="max", metric="abs_cosine", union_metric=None, union_fraction=0.5,
                 threshold=None, assign_labels="kmeans", tol=1e-7, max_iter=300,
                 random_state=None):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.union_metric = union_metric
        self.union_fraction = union_fraction
        self.threshold = threshold
        self.lam = lam
        self.affine = affine
        self.normalize = normalize
        self.row_normalize = row_normalize
        self.metric = metric
        self.assign_labels = assign_labels
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _representation(self, X, random_state):
        n = X.shape[0]
        # Capped at n - 1: one k for a data set whose problems differ in size.
        k = check_n_neighbors(min(self.n_neighbors, n - 1), n)
        P = self._prepare(X)
        start = perf_counter()
        k_second = int(round(k * self.union_fraction)) if self.union_metric else 0
        if k == k_second:
            indices = np.empty((n, 0), dtype=np.int64)
        elif self.metric == "l2":
            indices = l2_neighbours(P, k - k_second)
        else:
            indices, _ = nearest_neighbours(P, k - k_second, metric=self.metric, algorithm="exact")
        if k_second:
            indices = union_neighbours(P, indices, k_second, self.union_metric)
        found = perf_counter()
        A = P[indices]
        gram = np.matmul(A, A.transpose(0, 2, 1))
        corr = np.einsum("nkd,nd->nk", A, P)
        lam_max = np.maximum(np.abs(corr).max(axis=1), np.finfo(float).tiny)
        coef, n_iter = lasso_admm(gram, corr, self.lam * lam_max, lam_max, affine=self.affine,
                                  tol=self.tol, max_iter=self.max_iter)
        if self.threshold is not None:
            coef = threshold_rows(coef, self.threshold)
        solved = perf_counter()
        self.neighbors_ = indices
        Z = self._finish(coefficients_to_sparse(indices, coef, n))
        return Z, {"n_iter": n_iter,
                   "timings": {"neighbours": found - start, "coefficients": solved - found}}


class TunedSSC(_TunedMixin, SelfExpressiveClustering):
    """SSC over all points with the same model as `TunedKSSC` (Elhamifar and Vidal's ADMM)."""

    _parameter_constraints = {**SelfExpressiveClustering._parameter_constraints, **_COMMON}

    def __init__(self, n_clusters=None, *, lam=0.01, affine=False, normalize=True,
                 row_normalize="max", assign_labels="kmeans", tol=1e-7, max_iter=300,
                 random_state=None):
        self.n_clusters = n_clusters
        self.lam = lam
        self.affine = affine
        self.normalize = normalize
        self.row_normalize = row_normalize
        self.assign_labels = assign_labels
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _representation(self, X, random_state):
        Z, n_iter = ssc_admm(self._prepare(X), self.lam, affine=self.affine, tol=self.tol,
                             max_iter=self.max_iter)
        return self._finish(Z), {"n_iter": n_iter}
