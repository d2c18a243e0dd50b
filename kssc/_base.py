"""The fit shared by every self-expressive clustering estimator (k-SSC and the baselines)."""

import warnings
from numbers import Integral
from time import perf_counter

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._validation import check_n_clusters, normalize_rows
from .affinity import symmetric_affinity
from .spectral import ASSIGN_LABELS, spectral_clustering


class SelfExpressiveClustering(ClusterMixin, BaseEstimator):
    """Base class: build a representation Z, the affinity |Z| + |Z|^T, then N-Cut.

    Subclasses implement `_representation(X, random_state) -> (Z, info)` where Z is a
    sparse (n, n) matrix whose row i rebuilds point i, and `info` a dict that may hold
    `n_iter` and extra `timings`.
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "assign_labels": [StrOptions(set(ASSIGN_LABELS))],
        "random_state": ["random_state"],
    }

    def _representation(self, X, random_state):
        raise NotImplementedError

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
        Z, info = self._representation(X, rng)
        built = perf_counter()
        W = symmetric_affinity(Z)
        self.labels_ = spectral_clustering(W, n_clusters, assign_labels=self.assign_labels,
                                           random_state=rng)
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


def unit_rows(X):
    """X (float64) with every row scaled to unit norm, as every method here codes points.

    Zero-norm points have no direction (documented behaviour, no error): they stay zero
    and a warning names them; they get all-zero coefficients.
    """
    X_unit, zero = normalize_rows(X.astype(float, copy=False))
    if zero.any():
        rows = np.flatnonzero(zero)
        warnings.warn(
            f"{rows.size} point(s) have zero norm (rows {rows[:5].tolist()}): they have no "
            "direction, get all-zero coefficients and are labelled by the spectral step alone.",
            UserWarning,
            stacklevel=3,
        )
    return X_unit
