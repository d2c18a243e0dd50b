"""A label-free choice between k-SSC settings: fit each candidate, keep the one whose
clusters are best explained as a union of low-dimensional subspaces.

Criteria, computed on the points and a candidate's labels and affinity only:

- "residual" (lower is better): the share of the points' energy left outside a `subspace_dim`-
  dimensional linear subspace fitted per cluster (unit-norm points, so the data's scale
  does not matter), sum_c sum_{j > d} s_{c,j}^2 / n with s_c the singular values of
  cluster c: it asks what subspace clustering assumes.
- "eigengap" (higher is better): lambda_k - lambda_{k+1} of D^-1/2 W D^-1/2 for the k
  clusters found: k well-separated groups in the candidate's own affinity.

Both are recorded for every candidate; `criterion` says which one chooses. How each ranks
the settings on real data is measured by experiments/panel.py (docs/presets.md).
"""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._validation import normalize_rows
from .estimator import KSSC
from .presets import PRESETS, preset_params
from .spectral import _normalized_adjacency, top_eigenvectors

CRITERIA = ("residual", "eigengap")


def subspace_residual(X, labels, subspace_dim):
    """Share of the unit-norm points' energy outside a `subspace_dim`-dim subspace per cluster.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points (scaled to unit norm here).
    labels : ndarray of shape (n_samples,)
        Cluster of every point.
    subspace_dim : int
        Dimension d of the linear subspace fitted to every cluster.

    Returns
    -------
    residual : float
        sum over clusters of sum_{j > d} s_j^2, divided by n_samples; in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0, 0], [2, 0, 0], [0, 1, 0], [0, 0, 3]])
    >>> float(subspace_residual(X, np.array([0, 0, 1, 1]), 1))
    0.25
    """
    P = normalize_rows(np.asarray(X, dtype=float))[0]
    left = 0.0
    for label in np.unique(labels):
        s = np.linalg.svd(P[labels == label], compute_uv=False)
        left += float(np.sum(s[subspace_dim:] ** 2))
    return left / len(P)


def eigengap(W, n_clusters, random_state=None):
    """lambda_k - lambda_{k+1} of the normalised adjacency D^-1/2 W D^-1/2 (k = `n_clusters`)."""
    n = W.shape[0]
    if n_clusters >= n:
        return 0.0
    values, _ = top_eigenvectors(_normalized_adjacency(W), n_clusters + 1, random_state)
    return float(values[n_clusters - 1] - values[n_clusters])


class AutoKSSC(ClusterMixin, BaseEstimator):
    """Clustering by k-SSC with its setting chosen without labels among a few candidates.

    Every candidate is fitted (same `random_state`); the kept one is the best by `criterion`:
    the lowest union-of-subspaces residual (`subspace_residual`), or the largest eigengap of
    its affinity (`eigengap`). `selection_` shows every candidate's criteria.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters, passed to every candidate (None: each estimates its own, and
        the residual then favours more clusters).
    candidates : tuple of str or dict, default=("generic", "faces", "motion")
        Preset names (`kssc.presets.PRESETS`) or dicts of `KSSC` parameters.
    criterion : {"residual", "eigengap"}, default="residual"
        What chooses the candidate (module docstring).
    subspace_dim : int, default=5
        Dimension of the subspace fitted to every cluster by the residual (at most
        n_features - 1).
    random_state : int, RandomState instance or None, default=None
        Passed to every candidate.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The chosen candidate's labels.
    best_candidate_ : str or int
        The chosen candidate: its preset name, or its position in `candidates`.
    best_estimator_ : KSSC
        The chosen candidate, fitted.
    selection_ : dict
        Per candidate: {"residual", "eigengap", "time_s"}.
    n_clusters_ : int
        Number of distinct labels of the chosen candidate.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    KSSC : One setting; `kssc.presets.preset_params` gives the named ones.

    Examples
    --------
    >>> from kssc.auto import AutoKSSC
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 40, 20, random_state=0)
    >>> auto = AutoKSSC(3, candidates=("generic", "paper"), random_state=0).fit(X)
    >>> sorted(auto.selection_)
    ['generic', 'paper']
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "candidates": [tuple, list],
        "criterion": [StrOptions(set(CRITERIA))],
        "subspace_dim": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=None, *, candidates=("generic", "faces", "motion"),
                 criterion="residual", subspace_dim=5, random_state=None):
        self.n_clusters = n_clusters
        self.candidates = candidates
        self.criterion = criterion
        self.subspace_dim = subspace_dim
        self.random_state = random_state

    def _candidate_params(self):
        if not len(self.candidates):
            raise ValueError("candidates is empty: name at least one preset or parameter dict.")
        out = {}
        for i, candidate in enumerate(self.candidates):
            if isinstance(candidate, str):
                if candidate not in PRESETS:
                    raise ValueError(f"Unknown preset {candidate!r} in candidates; choose "
                                     f"among {list(PRESETS)} or pass a dict of KSSC parameters.")
                out[candidate] = preset_params(candidate)
            elif isinstance(candidate, dict):
                out[i] = dict(candidate)
            else:
                raise ValueError(f"candidates[{i}]={candidate!r} is neither a preset name nor "
                                 "a dict of KSSC parameters.")
        return out

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit every candidate on X and keep the one `criterion` prefers.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points as rows.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
        # One seed for every candidate, so that a candidate here equals its KSSC fit.
        seed = (self.random_state if isinstance(self.random_state, Integral)
                else check_random_state(self.random_state).randint(2**31 - 1))
        dim = max(1, min(self.subspace_dim, X.shape[1] - 1))
        fitted, selection = {}, {}
        for key, params in self._candidate_params().items():
            model = KSSC(self.n_clusters, random_state=seed, **params).fit(X)
            fitted[key] = model
            selection[key] = {
                "residual": subspace_residual(X, model.labels_, dim),
                "eigengap": eigengap(model.affinity_matrix_, model.n_clusters_, seed),
                "time_s": model.timings_["total"]}
        sign = 1.0 if self.criterion == "residual" else -1.0
        best = min(selection, key=lambda key: sign * selection[key][self.criterion])
        self.selection_ = selection
        self.best_candidate_ = best
        self.best_estimator_ = fitted[best]
        self.labels_ = fitted[best].labels_
        self.n_clusters_ = fitted[best].n_clusters_
        return self
