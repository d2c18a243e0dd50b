"""The fit shared by every self-expressive clustering estimator (k-SSC and the baselines)."""

from contextlib import contextmanager
from numbers import Integral
from time import perf_counter

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from .neighbors._exact import rescore
from .spectral._clustering import ASSIGN_LABELS, choose_n_clusters, spectral_labels
from .spectral.affinity import symmetric_affinity
from .spectral.isolation import warn_isolated
from .utils._progress import ProgressMixin
from .utils._validation import (
    ROW_CHUNK_BYTES,
    check_n_clusters,
    normalize_rows,
    refuse_sparse,
    warn_few_distinct,
    warn_inexact_integers,
)
from .utils._warnings import warn_caller


class SelfExpressiveClustering(ProgressMixin, ClusterMixin, BaseEstimator):
    """Base class: build a representation Z, the affinity |Z| + |Z|^T, then N-Cut.

    Subclasses implement `_representation(X, random_state) -> (Z, info)` where Z is a
    sparse (n, n) matrix whose row i rebuilds point i, and `info` a dict that may hold
    `n_iter`. A stage inside it that `timings_` reports runs in `with self._timed(name):`.
    A method whose pipeline is not Z -> W -> spectral step overrides `_cluster` (SSSC).
    """

    # Whether fit takes scipy.sparse X (as CSR); the subclass refuses the settings that cannot.
    _sparse_input = False

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "max_clusters": [Interval(Integral, 1, None, closed="left")],
        "assign_labels": [StrOptions(set(ASSIGN_LABELS))],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _representation(self, X, random_state):
        raise NotImplementedError

    @contextmanager
    def _timed(self, name):
        """A stage of the fit (`_stage`, reported when verbose) whose seconds become
        ``timings_[name]``; yields the stage's progress callback."""
        with self._stage(name) as progress, timed(self._timings, name):
            yield progress

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
        if not self._sparse_input:
            refuse_sparse(X, type(self).__name__)
        if not sp.issparse(X):
            warn_inexact_integers(X)
        X = validate_data(self, X, accept_sparse="csr" if self._sparse_input else False,
                          dtype=[np.float64, np.float32], ensure_min_samples=2)
        n_clusters = check_n_clusters(self.n_clusters, X.shape[0])
        warn_few_distinct(X, n_clusters)
        rng = check_random_state(self.random_state)
        self._timings = {}
        with timed(self._timings, "total"):
            self.labels_ = self._cluster(X, n_clusters, rng)
        self.n_clusters_ = int(np.unique(self.labels_).size)
        self.timings_ = self.__dict__.pop("_timings")
        return self

    def _cluster(self, X, n_clusters, rng):
        """Labels of the rows of X: Z, then W = |Z| + |Z|^T, then the spectral step.

        Sets ``representation_matrix_``, ``affinity_matrix_`` and ``n_iter_``. A method whose
        pipeline differs (SSSC) overrides this stage only.
        """
        with self._timed("representation"):
            Z, info = self._representation(X, rng)
        # "spectral" covers building W from Z too. The steps of spectral_clustering, with the
        # eigen-gap's eigenvalues kept and the isolated points reported here, where their
        # cause is known (same generator, so the same labels).
        with self._timed("spectral"):
            W = symmetric_affinity(Z)
            self.laplacian_eigenvalues_ = None
            if n_clusters is None:
                n_clusters, self.laplacian_eigenvalues_ = choose_n_clusters(
                    W, self.max_clusters, rng)
            warn_isolated(W, lambda isolated: self._isolation_reason(X, isolated), points=X,
                          n_clusters=n_clusters)
            labels = spectral_labels(W, n_clusters, self.assign_labels, rng,
                                     report_isolated=False)
        self.representation_matrix_ = Z
        self.affinity_matrix_ = W
        self.n_iter_ = info.get("n_iter")
        return labels

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


@contextmanager
def timed(timings, name):
    """Record the seconds the block takes in ``timings[name]``."""
    start = perf_counter()
    try:
        yield
    finally:
        timings[name] = perf_counter() - start


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


def unit_rows(X, dtype=float, warn=True):
    """X with every row scaled to unit norm, as every method here codes points, in `dtype`.

    Computed in float64 a chunk of rows at a time (X may be a memory map: no float64 copy
    of the whole data set is made unless `dtype` is float64). Zero-norm points have no
    direction (documented behaviour, no error): they stay zero and get all-zero
    coefficients; with `warn` a warning names them (the shared fit passes False: it names
    them with the isolated points, `warn_isolated`).
    """
    n = X.shape[0]
    X_unit = np.empty(X.shape, dtype=dtype)
    zero = np.empty(n, dtype=bool)
    step = max(1, ROW_CHUNK_BYTES // (8 * X.shape[1]))
    for start in range(0, n, step):
        part = slice(start, start + step)
        X_unit[part], zero[part] = normalize_rows(np.asarray(X[part], dtype=float))
    if warn and zero.any():
        rows = np.flatnonzero(zero)
        warn_caller(
            f"{rows.size} point(s) have zero norm (rows {rows[:5].tolist()}): they have no "
            "direction, get all-zero coefficients and, isolated, the largest cluster's label.",
            UserWarning,
        )
    return X_unit
