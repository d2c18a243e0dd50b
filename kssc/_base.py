"""The fit shared by every self-expressive clustering estimator (k-SSC and the baselines)."""

from numbers import Integral
from time import perf_counter

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._exact import rescore
from ._progress import ProgressMixin
from ._validation import check_n_clusters, normalize_rows, warn_degenerate
from ._warnings import warn_caller
from .affinity import isolated_points, symmetric_affinity
from .spectral import ASSIGN_LABELS, spectral_clustering

# Rows of the data read (and cast to float64) at a time when scaling them to unit norm.
_CHUNK_BYTES = 4 * 2**20


class SelfExpressiveClustering(ProgressMixin, ClusterMixin, BaseEstimator):
    """Base class: build a representation Z, the affinity |Z| + |Z|^T, then N-Cut.

    Subclasses implement `_representation(X, random_state) -> (Z, info)` where Z is a
    sparse (n, n) matrix whose row i rebuilds point i, and `info` a dict that may hold
    `n_iter` and extra `timings`.
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "max_clusters": [Interval(Integral, 1, None, closed="left")],
        "assign_labels": [StrOptions(set(ASSIGN_LABELS))],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _representation(self, X, random_state):
        raise NotImplementedError

    def _isolation_reason(self, X, isolated):
        """Why the points `isolated` got no coefficient, for the warning ("" if unknown)."""
        return ""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Cluster the rows of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points as rows, at least two.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : object
            The fitted estimator, with ``labels_`` and the other learned attributes set.
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
        n_clusters = check_n_clusters(self.n_clusters, X.shape[0])
        rng = check_random_state(self.random_state)
        start = perf_counter()
        with self._stage("representation"):
            Z, info = self._representation(X, rng)
        built = perf_counter()
        W = symmetric_affinity(Z)
        warn_isolated(W, lambda isolated: self._isolation_reason(X, isolated))
        with self._stage("spectral"):
            self.labels_ = spectral_clustering(W, n_clusters, assign_labels=self.assign_labels,
                                               random_state=rng, max_clusters=self.max_clusters)
        done = perf_counter()
        self.representation_matrix_ = Z
        self.affinity_matrix_ = W
        self.n_clusters_ = int(np.unique(self.labels_).size)
        self.n_iter_ = info.get("n_iter")
        self.timings_ = {**info.get("timings", {}), "representation": built - start,
                         "spectral": done - built, "total": done - start}
        return self

    def fit_predict(self, X, y=None):
        """Fit and return the cluster label of every row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points as rows, at least two.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster of every point (``labels_``).
        """
        return self.fit(X).labels_


def warn_isolated(W, reason=lambda isolated: ""):
    """DegenerateFitWarning when some points have no affinity to any other point.

    `reason(isolated)` may explain it (e.g. lam >= lambda_max); it is called only then.
    """
    isolated = isolated_points(W)
    if not isolated.size:
        return
    n = W.shape[0]
    if isolated.size == n:
        message = ("the representation has no non-zero coefficient between points: every "
                   "point is isolated and the labels are arbitrary.")
    else:
        message = (f"{isolated.size} of {n} point(s) are isolated (no non-zero coefficient to "
                   f"or from another point; rows {isolated[:5].tolist()}): their labels are "
                   "arbitrary.")
    explanation = reason(isolated)
    warn_degenerate(f"{message} {explanation}" if explanation else message)


def lam_max_reason(lam, X_unit, isolated, *, positive, neighbours=None, hint=""):
    """Explain isolated points by lam >= lambda_max ("" if lam is below all their lambda_max).

    lambda_max_i, the smallest lam that zeroes point i's l1 code, is the largest inner
    product of x_i with its dictionary (absolute when the code is signed): the rows
    `neighbours[i]` of `X_unit`, or every other point when `neighbours` is None.
    """
    points = X_unit[isolated]
    if neighbours is None:
        corr = points @ X_unit.T
        corr[np.arange(isolated.size), isolated] = -np.inf if positive else 0.0
    else:
        corr = rescore(points, X_unit, neighbours[isolated])
    lam_max = np.maximum(corr.max(axis=1) if positive else np.abs(corr).max(axis=1), 0.0)
    zeroed = lam >= lam_max
    if not zeroed.any():
        return ""
    return (f"lam={lam:g} >= lambda_max for {zeroed.sum()} of them (lambda_max="
            f"{lam_max[zeroed].max():.3g} at most, the largest {'' if positive else 'absolute '}"
            "inner product of a point with the points that may code it: any lam >= lambda_max "
            f"gives an all-zero code, any lam >= 1 does for unit-norm points). Lower lam{hint}.")


def unit_rows(X, dtype=float):
    """X with every row scaled to unit norm, as every method here codes points, in `dtype`.

    Computed in float64 a chunk of rows at a time (X may be a memory map: no float64 copy
    of the whole data set is made unless `dtype` is float64). Zero-norm points have no
    direction (documented behaviour, no error): they stay zero and a warning names them;
    they get all-zero coefficients.
    """
    n = X.shape[0]
    X_unit = np.empty(X.shape, dtype=dtype)
    zero = np.empty(n, dtype=bool)
    step = max(1, _CHUNK_BYTES // (8 * X.shape[1]))
    for start in range(0, n, step):
        part = slice(start, start + step)
        X_unit[part], zero[part] = normalize_rows(np.asarray(X[part], dtype=float))
    if zero.any():
        rows = np.flatnonzero(zero)
        warn_caller(
            f"{rows.size} point(s) have zero norm (rows {rows[:5].tolist()}): they have no "
            "direction, get all-zero coefficients and, isolated, the largest cluster's label.",
            UserWarning,
        )
    return X_unit
