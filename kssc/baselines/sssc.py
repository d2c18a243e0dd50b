"""Scalable sparse subspace clustering (SSSC).

Method: X. Peng, L. Zhang and Z. Yi, "Scalable Sparse Subspace Clustering", IEEE Conference
on Computer Vision and Pattern Recognition (CVPR 2013), 430-437.
As run by the k-SSC authors (`get_sssc_clusters(X, n_in, lambda, p)` with Peng et al.'s
code, docs/protocol.md 2.4 and D22).

1. A random in-sample set of `n_in_sample` points (without replacement).
2. Each in-sample point is coded over the other in-sample points,
   min_c lam ||c||_1 + 1/2 ||y - A c||^2 (signed).
3. In-sample affinity: every row of |C| divided by its largest entry, W = |C| + |C|^T.
4. Spectral clustering of the in-sample points.
5. Every other point is coded over all in-sample points by ridge regression,
   c = (A^T A + kappa I)^-1 A^T y, and joins the class c minimising
   ||y - A_c c_c||^2 / ||c_c||^2 (first class on ties).
Points are normalised to unit norm first (the authors' scripts; no PCA).

Differences from Peng et al.'s code:
- step 2 uses scikit-learn's coordinate-descent Lasso (alpha = lam / n_features, tol 1e-10)
  instead of the homotopy solver SolveHomotopy (tol 1e-6): the same minimiser, reached
  more tightly;
- step 4 is the shared spectral step of `kssc.spectral` (N-Cut matrix, then k-means on the
  row-normalised eigenvectors with `assign_labels="kmeans"`, 10 restarts, or Yu-Shi
  discretisation) instead of an SVD of the normalised Laplacian and `litekmeans` with 500
  replicates;
- step 5 is one linear solve and Gram-matrix algebra for all points at once;
- a failure raises (the authors' scripts counted any exception as 100% error).
There is no representation matrix over all points (no `representation_matrix_`);
`affinity_matrix_` is the in-sample affinity, of shape (n_in_sample, n_in_sample).
`timings_["representation"]` covers the whole pipeline, as the authors timed SSSC;
`timings_["spectral"]` is the in-sample spectral step, a part of it.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso
from sklearn.utils._param_validation import Interval
from threadpoolctl import threadpool_limits

from .._base import SelfExpressiveClustering, lam_max_reason, unit_rows, warn_isolated
from ..spectral._clustering import spectral_clustering


def in_sample_codes(A, lam, tol=1e-10, max_iter=100_000):
    """Lasso code of every row of A over the other rows: C (m, m), zero diagonal.

    min_c lam ||c||_1 + 1/2 ||a_i - c A_{-i}||^2; scikit-learn's Lasso divides the squared
    loss by the number of regression samples (the features here), hence alpha = lam / d.
    """
    m, d = A.shape
    C = np.zeros((m, m))
    lasso = Lasso(alpha=lam / d, fit_intercept=False, tol=tol, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for i in range(m):
            others = np.delete(np.arange(m), i)
            C[i, others] = lasso.fit(A[others].T, A[i]).coef_
    return C


def in_sample_affinity(C):
    """Peng et al.'s BuildAdjacency: rows of |C| scaled to a largest entry of 1, plus transpose."""
    A = np.abs(C)
    top = A.max(axis=1, keepdims=True)
    A = np.divide(A, top, out=np.zeros_like(A), where=top > 0)
    return sp.csr_matrix(A + A.T)


def class_residual_labels(A, labels, X, kappa):
    """Collaborative (ridge) representation over all of A, then the class-wise residual.

    Returns the label in `labels` (classes 0..p-1 of the rows of A) minimising
    ||x - A_c c_c||^2 / ||c_c||^2 for every row x of X, computed through Gram matrices, on
    one BLAS thread: the products have an in-sample set's rows (about 100), and a second
    thread's start-up cost about what it saved (runtime_cores' 1,000 points).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _class_residual_labels(A, labels, X, kappa)


def _class_residual_labels(A, labels, X, kappa):
    K = A @ A.T
    B = X @ A.T
    coef = np.linalg.solve(K + kappa * np.eye(len(K)), B.T).T
    classes = np.unique(labels)
    residual = np.full((len(X), len(classes)), np.inf)
    sq_norms = np.einsum("ij,ij->i", X, X)
    for c_idx, c in enumerate(classes):
        members = labels == c
        cc = coef[:, members]
        fit = sq_norms - 2 * np.einsum("ij,ij->i", cc, B[:, members]) + np.einsum(
            "ij,jk,ik->i", cc, K[np.ix_(members, members)], cc)
        weight = np.einsum("ij,ij->i", cc, cc)
        residual[:, c_idx] = np.divide(np.maximum(fit, 0.0), weight,
                                       out=np.full(len(X), np.inf), where=weight > 0)
    return classes[np.argmin(residual, axis=1)]


class SSSC(SelfExpressiveClustering):
    """Scalable sparse subspace clustering: SSC on a random in-sample set, ridge-coded rest.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; None estimates it from the in-sample eigen-gap.
    n_in_sample : int or None, default=None
        Points in the in-sample set; from n_clusters to n_samples. None takes
        min(n_samples, max(100, 10 * n_clusters)). The authors' 20 (what the paper's
        experiments ran, conf/method/sssc.yaml) leaves a few in-sample points per cluster,
        too few to find the clusters even on an easy union (tests/kssc/baselines/test_baselines.py).
    lam : float, default=0.1
        The l1 weight of the in-sample coding.
    kappa : float, default=1e-6
        Ridge weight of the out-of-sample coding.
    assign_labels : {"kmeans", "discretize", "njw"}, default="kmeans"
        Labels from the in-sample embedding: k-means (closest to Peng et al.), Yu-Shi, or
        Ng-Jordan-Weiss (`kssc.spectral`).
    max_clusters : int, default=20
        With n_clusters=None, the largest number of clusters the eigen-gap may pick.
    random_state : int, RandomState instance or None, default=None
        Draws the in-sample set and seeds the spectral step.
    verbose : int, default=0
        If > 0, report each stage of the fit on stderr.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every point, 0 to ``n_clusters_ - 1``.
    in_sample_indices_ : ndarray of shape (n_in_sample,)
        Sorted indices of the in-sample points.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_in_sample, n_in_sample)
        The in-sample affinity (there is no representation over all points).
    n_clusters_ : int
        Number of distinct labels found.
    n_features_in_ : int
        Number of features seen during fit.
    timings_ : dict
        Seconds: "representation" (the whole pipeline, as the authors timed SSSC),
        "spectral" (the in-sample spectral step, a part of it) and "total".

    See Also
    --------
    SSC : Sparse subspace clustering over all points.
    kssc.KSSC : Sparse coding over the k nearest neighbours.

    Examples
    --------
    >>> from kssc import clustering_error
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    >>> from kssc.baselines import SSSC
    >>> model = SSSC(n_clusters=3, random_state=0).fit(X)
    >>> model.in_sample_indices_.shape  # min(n_samples, max(100, 10 * n_clusters))
    (90,)
    >>> float(clustering_error(y, model.labels_))
    0.0
    """

    _parameter_constraints = {
        **SelfExpressiveClustering._parameter_constraints,
        "n_in_sample": [Interval(Integral, 2, None, closed="left"), None],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "kappa": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_clusters=None, *, n_in_sample=None, lam=0.1, kappa=1e-6,
                 assign_labels="kmeans", max_clusters=20, random_state=None, verbose=0):
        self.n_clusters = n_clusters
        self.n_in_sample = n_in_sample
        self.lam = lam
        self.kappa = kappa
        self.assign_labels = assign_labels
        self.max_clusters = max_clusters
        self.random_state = random_state
        self.verbose = verbose

    def _cluster(self, X, n_clusters, rng):
        n = X.shape[0]
        n_in_sample = self.n_in_sample
        if n_in_sample is None:
            n_in_sample = min(n, max(100, 10 * (n_clusters or 0)))
        if n_in_sample > n:
            raise ValueError(f"n_in_sample={n_in_sample} must be <= n_samples={n}.")
        if n_clusters is not None and n_in_sample < n_clusters:
            raise ValueError(f"n_in_sample={n_in_sample} must be >= n_clusters={n_clusters}: "
                             "every cluster needs in-sample points.")
        # The authors timed the whole pipeline as SSSC's representation.
        with self._timed("representation"):
            X_unit = unit_rows(X)
            chosen = np.sort(rng.choice(n, n_in_sample, replace=False))
            A = X_unit[chosen]
            with self._stage("in-sample codes"):
                W = in_sample_affinity(in_sample_codes(A, self.lam))
            warn_isolated(W, lambda isolated: lam_max_reason(self.lam, A, isolated,
                                                              positive=False))
            with self._timed("spectral"):
                in_labels = spectral_clustering(W, n_clusters, assign_labels=self.assign_labels,
                                                random_state=rng, max_clusters=self.max_clusters)
            rest = np.setdiff1d(np.arange(n), chosen)
            labels = np.empty(n, dtype=np.int64)
            labels[chosen] = in_labels
            if rest.size:
                with self._stage("out-of-sample labels"):
                    labels[rest] = class_residual_labels(A, in_labels, X_unit[rest], self.kappa)
        self.in_sample_indices_ = chosen
        self.affinity_matrix_ = W
        return labels
