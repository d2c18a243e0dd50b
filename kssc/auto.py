"""A label-free choice between k-SSC settings: fit each candidate, keep the one a criterion
computed without labels prefers.

Criteria, from the points and the candidates' labels and affinities only
(`candidate_criteria`; `CRITERIA` says whether the lowest or the largest value wins):

- "residual" (lowest): the share of the unit-norm points' energy left outside a
  `subspace_dim`-dimensional linear subspace fitted per cluster (`subspace_residual`): what
  subspace clustering assumes.
- "relative_residual" (lowest): the residual over that of the same cluster sizes with the
  points shuffled, so that making clusters of other sizes is not rewarded.
- "silhouette" (largest): the silhouette with per-cluster subspaces for centres
  (`subspace_silhouette`): a point's residual to its own cluster's subspace (left out of
  that fit to first order) against the nearest other cluster's.
- "eigengap" (largest): lambda_k - lambda_{k+1} of D^-1/2 W D^-1/2 for the k clusters
  found: k well-separated groups in the candidate's own affinity.
- "common_ncut" (lowest): the normalised cut of the candidate's labels on one graph shared
  by all candidates, the mean of their normalised affinities.
- "consensus" (largest): the mean adjusted Rand index with the other candidates' labels.

Every criterion is recorded for every candidate (`AutoKSSC.selection_`); `criterion` says
which one chooses. How each ranks the settings on real data, and which one is the default,
is measured by experiments/panel.py (docs/presets.md).

What the candidates share (`AutoKSSC`): candidates that would run the same exact neighbour
search (same metric, one view, no principal direction removed) share one search with the
largest k among them, each sliced to its own (`KSSC.fit(X, neighbors=...)`: the same
candidates, the same labels); the default presets search differently (absolute cosine,
cosine once 5 directions are removed, L2 once 1 and 3 are), so each runs its own. Above
`2 * screen_size` points a criterion scored per candidate (`SCREENED_CRITERIA`) first ranks
the candidates on a random subsample, and only the subsample's best is fitted on all points.
"""

from numbers import Integral
from time import perf_counter

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.metrics import adjusted_rand_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ._base import unit_rows
from .coding.admm import ADMM
from .estimator import KSSC
from .neighbors.candidates import candidate_sets
from .presets import PRESETS, preset_params
from .spectral._clustering import _normalized_adjacency, top_eigenvectors
from .utils._progress import ProgressMixin
from .utils._suitability import (
    UnsuitableSettingWarning,
    centroid_check,
    rescaling,
    warn_centroid_model,
)
from .utils._validation import normalize_rows, warn_inexact_integers
from .utils._warnings import warn_caller

CRITERIA = {"residual": "min", "eigengap": "max", "silhouette": "max",
            "relative_residual": "min", "common_ncut": "min", "consensus": "max"}
"""Every criterion of `candidate_criteria` and whether its lowest or its largest value wins."""
SUBSPACE_CRITERIA = ("residual", "relative_residual", "silhouette")
"""The criteria that depend on `subspace_dim` (the others do not use it)."""
SCREENED_CRITERIA = ("residual", "relative_residual", "silhouette", "eigengap")
"""The criteria scored from one candidate's fit alone, so that a subsample can rank the
candidates before the full fits (common N-Cut and consensus need every candidate's)."""
BEST_POSSIBLE = {"silhouette": 1.0, "residual": 0.0, "relative_residual": 0.0}
"""The bound of each criterion that has one and is scored from one candidate's fit alone: the
silhouette is at most 1, the residuals at least 0."""
AT_BEST = 1e-9
"""A candidate whose criterion is within this of its bound cannot be passed: a later one can
only tie, and a tie keeps the earlier candidate."""


def _smaller_gram(Pc):
    """(G, left): the smaller of Pc Pc^T (left=True) and Pc^T Pc. Its eigenvalues are the
    squared singular values of Pc, its eigenvectors Pc's left or right singular vectors, at
    the cost of an (m x m) or (D x D) eigen-problem instead of an SVD of Pc (0.6 against
    8.9 ms for one of Yale B's 64 x 2,016 faces)."""
    left = Pc.shape[0] <= Pc.shape[1]
    return (Pc @ Pc.T if left else Pc.T @ Pc), left


def _tail_energy(Pc, subspace_dim):
    """sum_{j > d} s_j^2 of the rows Pc (their energy outside the best d-dim subspace)."""
    values = np.linalg.eigvalsh(_smaller_gram(Pc)[0])[::-1]
    return float(np.sum(np.clip(values[subspace_dim:], 0.0, None)))


def _bases(P, labels, subspace_dim):
    """(basis, leverage, own): the top `subspace_dim` right singular vectors of every cluster,
    stacked as (n_clusters, subspace_dim, n_features) (zero rows beyond a cluster's
    numerical rank, so also where it has fewer points), every point's leverage in its own
    cluster's fit (sum_j U_ij^2 over those directions' left singular vectors), and every
    point's cluster position."""
    clusters = np.unique(labels)
    basis = np.zeros((len(clusters), subspace_dim, P.shape[1]))
    leverage = np.empty(len(P))
    for c, label in enumerate(clusters):  # a loop over clusters: one eigen-problem each
        members = labels == label
        Pc = P[members]
        gram, left = _smaller_gram(Pc)
        values, vectors = np.linalg.eigh(gram)
        values, vectors = np.clip(values[::-1], 0.0, None), vectors[:, ::-1]
        # Directions below the Gram matrix's rounding (s_j^2 <= eps max(m, D) s_1^2) are
        # not the cluster's: left out.
        rank = int(np.sum(values[:subspace_dim] > np.finfo(float).eps * max(Pc.shape)
                          * values[0]))
        top, scale = vectors[:, :rank], np.sqrt(values[:rank])
        if left:  # U: v_j = Pc^T u_j / s_j
            basis[c, :rank] = (top.T @ Pc) / scale[:, None]
            leverage[members] = np.sum(top**2, axis=1)
        else:  # V: u_ij = (Pc v_j)_i / s_j
            basis[c, :rank] = top.T
            leverage[members] = np.sum((Pc @ top / scale) ** 2, axis=1)
    return basis, leverage, np.searchsorted(clusters, labels)


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
    labels = np.asarray(labels)
    return sum(_tail_energy(P[labels == label], subspace_dim)
               for label in np.unique(labels)) / len(P)


def relative_residual(X, labels, subspace_dim, random_state=None, n_draws=3):
    """`subspace_residual` over its mean for the same cluster sizes with the points shuffled
    (`n_draws` draws): how much better than chance the clusters are explained by subspaces,
    so that a candidate is not preferred for making clusters of other sizes."""
    rng = check_random_state(random_state)
    labels = np.asarray(labels)
    shuffled = np.mean([subspace_residual(X, rng.permutation(labels), subspace_dim)
                        for _ in range(n_draws)])
    return subspace_residual(X, labels, subspace_dim) / max(shuffled, np.finfo(float).tiny)


def subspace_silhouette(X, labels, subspace_dim):
    """Mean silhouette of the points with subspaces for centres: (b - a) / max(a, b).

    a is a unit-norm point's squared residual to its own cluster's `subspace_dim`-dim
    subspace, left out of that fit to first order (a / (1 - h)^2 with h its leverage, as the
    leave-one-out residual of least squares; at most 1), so that clusters of at most
    `subspace_dim` points do not fit their own points exactly; b is its smallest residual to
    another cluster's subspace. In [-1, 1]; -1 with a single cluster.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0], [0.8, 0.6], [0, 1], [-0.6, 0.8]])
    >>> round(float(subspace_silhouette(X, np.array([0, 0, 1, 1]), 1)), 3)  # 5 / 9
    0.556
    """
    P = normalize_rows(np.asarray(X, dtype=float))[0]
    labels = np.asarray(labels)
    basis, leverage, own = _bases(P, labels, subspace_dim)
    if len(basis) < 2:
        return -1.0
    # Squared residual of every point to every cluster's subspace: 1 - |V_c x|^2.
    projections = (P @ basis.reshape(-1, P.shape[1]).T).reshape(len(P), *basis.shape[:2])
    residuals = np.clip(1.0 - np.sum(projections**2, axis=2), 0, 1)
    rows = np.arange(len(P))
    a = residuals[rows, own]
    a = np.minimum(1.0, a / np.maximum(1.0 - leverage, 1e-12) ** 2)
    residuals[rows, own] = np.inf
    b = residuals.min(axis=1)
    return float(np.mean((b - a) / np.maximum(np.maximum(a, b), 1e-12)))


def eigengap(W, n_clusters, random_state=None):
    """lambda_k - lambda_{k+1} of the normalised adjacency D^-1/2 W D^-1/2 (k = `n_clusters`)."""
    n = W.shape[0]
    if n_clusters >= n:
        return 0.0
    values, _ = top_eigenvectors(_normalized_adjacency(W), n_clusters + 1, random_state)
    return float(values[n_clusters - 1] - values[n_clusters])


def normalized_cut(W, labels):
    """Mean over clusters of cut(C, rest) / vol(C) in |W| (the N-Cut value over k; in [0, 1]).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0, 1, 0.5, 0], [1, 0, 0, 0], [0.5, 0, 0, 1], [0, 0, 1, 0]])
    >>> float(normalized_cut(W, np.array([0, 0, 1, 1])))
    0.2
    """
    W = abs(sp.csr_matrix(W, dtype=np.float64))
    _, own = np.unique(labels, return_inverse=True)
    member = sp.csr_matrix((np.ones(len(own)), (np.arange(len(own)), own)))
    association = (member.T @ W @ member).toarray()  # weight between every pair of clusters
    volume = association.sum(axis=1)
    return float(np.mean((volume - np.diag(association)) / np.maximum(volume, 1e-300)))


def criterion_dim(subspace_dim, n_features, n_clusters):
    """The dimension the subspace criteria use: `subspace_dim`, at most n_features //
    n_clusters (k independent d-dimensional subspaces need k d <= n_features; beyond it every
    cluster's subspace overlaps the others' and the criteria no longer tell clusterings
    apart) and at most n_features - 1, at least 1.

    Examples
    --------
    >>> criterion_dim(5, 2016, 38), criterion_dim(5, 4, 3), criterion_dim(5, 30, 1)
    (5, 1, 5)
    """
    return max(1, min(subspace_dim, n_features // max(n_clusters, 1), n_features - 1))


def candidate_criteria(X, fits, subspace_dim, random_state=None):
    """Every criterion of every candidate, from the points and the candidates' fits.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points.
    fits : dict
        Candidate key -> (labels, affinity matrix) of its fit.
    subspace_dim : int or sequence of int
        Dimension of the subspace fitted to every cluster, capped by `criterion_dim` for
        the largest number of clusters among the candidates (one dimension for all).
        A sequence scores every dimension in it, the criteria that do not depend on it
        (eigengap, common N-Cut, consensus) computed once.
    random_state : int or None
        Seed of the eigen-solver and of the shuffles of `relative_residual`.

    Returns
    -------
    criteria : dict
        Candidate key -> {criterion: value} for every criterion of `CRITERIA`:
        "common_ncut" is `normalized_cut` of its labels on the mean of the candidates'
        normalised affinities D^-1/2 |W| D^-1/2 (one graph that scores every candidate);
        "consensus" the mean adjusted Rand index of its labels with the other candidates'
        (0 with a single candidate). With a sequence `subspace_dim`: dimension -> that
        dict, each equal to the one of that dimension alone.
    """
    if not fits:
        raise ValueError("fits is empty: no candidate to score.")
    dims = [subspace_dim] if isinstance(subspace_dim, Integral) else list(subspace_dim)
    common = sum(_normalized_adjacency(W) for _, W in fits.values()) / len(fits)
    shared = {}
    for key, (labels, W) in fits.items():
        others = [adjusted_rand_score(labels, other) for k, (other, _) in fits.items()
                  if k != key]
        shared[key] = {"eigengap": eigengap(W, len(np.unique(labels)), random_state),
                       "common_ncut": normalized_cut(common, labels),
                       "consensus": float(np.mean(others)) if others else 0.0}
    # One dimension for every candidate, so that their residuals compare.
    n_clusters = max(len(np.unique(labels)) for labels, _ in fits.values())
    out = {}
    for subspace in dims:
        dim = criterion_dim(subspace, X.shape[1], n_clusters)
        out[subspace] = {key: {
            "residual": subspace_residual(X, labels, dim),
            "eigengap": shared[key]["eigengap"],
            "silhouette": subspace_silhouette(X, labels, dim),
            "relative_residual": relative_residual(X, labels, dim, random_state),
            "common_ncut": shared[key]["common_ncut"],
            "consensus": shared[key]["consensus"]} for key, (labels, _) in fits.items()}
    return out[subspace_dim] if isinstance(subspace_dim, Integral) else out


def at_best(X, labels, criterion, subspace_dim, n_clusters):
    """The value of `criterion` (a key of `BEST_POSSIBLE`) for `labels` when it is within
    `AT_BEST` of its bound, else None. The labels must have `n_clusters` distinct values, the
    most any candidate can have, so that the dimension is the one `candidate_criteria` uses
    for every candidate (`criterion_dim`); otherwise None."""
    if criterion not in BEST_POSSIBLE or len(np.unique(labels)) != n_clusters:
        return None
    dim = criterion_dim(subspace_dim, X.shape[1], n_clusters)
    score = (subspace_silhouette(X, labels, dim) if criterion == "silhouette"
             else subspace_residual(X, labels, dim))  # a relative residual is 0 with it
    return score if abs(score - BEST_POSSIBLE[criterion]) <= AT_BEST else None


def best_candidate(criteria, criterion):
    """The key of `criteria` (as `candidate_criteria` returns) that `criterion` prefers."""
    sign = 1.0 if CRITERIA[criterion] == "min" else -1.0
    return min(criteria, key=lambda key: sign * criteria[key][criterion])


def _search_key(model, n_samples):
    """What the neighbour search of `model` (a `KSSC`, validated) on n dense points depends
    on, (metric, normalize), when a search with a larger k can serve it sliced: an exact
    search of one view with no principal direction removed (`KSSC.fit`'s `neighbors`).
    None otherwise (several views, directions removed, an index whose search is seeded)."""
    if np.ndim(model.n_neighbors) or np.ndim(model.neighbor_pcs) or model.neighbor_pcs:
        return None
    try:
        algorithm = model._search_algorithm(n_samples)
    except ValueError:  # the candidate's own fit says why
        return None
    if not (isinstance(algorithm, str) and algorithm == "exact"):
        return None
    return model.metric, bool(model.normalize)


def shared_neighbors(X, models):
    """One exact neighbour search per group of candidates that search alike (`_search_key`),
    with the largest k of the group: {key: (indices (n, k_key), search report, seconds)}
    for the candidates of groups of at least two. Each slice is the search the candidate's
    own fit runs (the points as it codes them: unit rows or X; k nearest, most similar first),
    so ``fit(X, neighbors=indices)`` gives its own fit's result.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points, dense.
    models : dict
        Candidate key -> `KSSC` (not fitted; its parameters validated).
    """
    groups = {}
    for key, model in models.items():
        search = _search_key(model, X.shape[0])
        if search is not None:
            groups.setdefault(search, []).append(key)
    shared = {}
    for (metric, normalize), keys in groups.items():
        largest = max(int(models[key].n_neighbors) for key in keys)
        if len(keys) < 2 or largest >= X.shape[0]:  # alone, or too many: the fit's own search
            continue
        start = perf_counter()
        P = unit_rows(X, X.dtype, warn=False) if normalize else X
        indices, search = candidate_sets(P, largest, metric=metric, algorithm="exact",
                                         unit_rows=normalize)
        seconds = (perf_counter() - start) / len(keys)
        for key in keys:
            shared[key] = (indices[:, :int(models[key].n_neighbors)], search, seconds)
    return shared


def _own_k(model):
    """A fitted candidate's number of clusters and its confidence, for `selection_`."""
    if model is None:
        return {"n_clusters": np.nan, "n_clusters_confidence": np.nan}
    confidence = model.n_clusters_confidence_
    return {"n_clusters": model.n_clusters_,
            "n_clusters_confidence": np.nan if confidence is None else confidence}


def _one_blas_thread():
    """One BLAS thread for the criteria and the centroid check (as for every other step of a
    fit): their products of a cluster's rows are too small to share, and on the loaded
    2-core machine the threads waited on each other, 10-20x the time of one (the criteria of
    one candidate on 5,000 points in R^321: 15.6 s against 0.9 s)."""
    return threadpool_limits(limits=1, user_api="blas")


def kernel_families(models):
    """The numba kernel families the fits of `models` (`KSSC`s) run: {name: dispatchers},
    for `kssc.coding._kernels.notice_uncached`."""
    from .coding import _point_kernels as kernels
    from .neighbors import _topk

    solvers = [model._solver() for model in models]
    families = {"the neighbour search kernels": (_topk._update_rows, _topk._update_columns),
                "the coefficient kernels": (kernels.residual_blocks,)}
    if any(not (isinstance(s, ADMM) and s.stopping == "all") for s in solvers):
        families["the coefficient kernels"] += (kernels.solve_blocks,)
    if any(isinstance(s, ADMM) and s.stopping == "all" for s in solvers):
        families["the ADMM kernels"] = (kernels.admm_setup_blocks, kernels.admm_segment_blocks)
    return families


class AutoKSSC(ProgressMixin, ClusterMixin, BaseEstimator):
    """Clustering by k-SSC with its setting chosen without labels among a few candidates.

    Every candidate is fitted (same `random_state`); the kept one is the best by `criterion`,
    one of `CRITERIA` (module docstring). `selection_` shows every candidate's criteria.
    Candidates that search neighbours alike share one search (module docstring). With more
    than ``2 * screen_size`` points and a criterion of `SCREENED_CRITERIA`, every candidate
    is first fitted on a random subsample of `screen_size` points (same seed) and only the
    one the criterion prefers there is fitted on X; the others are recorded as skipped. A
    candidate whose fit fails is left out of the choice, with its reason in `selection_` and
    an UnsuitableSettingWarning; the fit fails only when every candidate does. X far from
    scale 1 (outside `kssc.utils._suitability.SCALE_RANGE`) is first multiplied by a power of two
    (`scale_`), so that the candidates that code points as given fit as at scale 1. Then a
    k-means fit of as many clusters is compared with the choice without labels
    (`centroid_check_`): an UnsuitableSettingWarning gives the numbers when a centroid model
    fits the data better.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters, passed to every candidate. None: each candidate chooses its own
        by the relative eigen-gap of its affinity (`KSSC`), and `criterion` chooses among
        the candidates, so among their k too (on the real-data panel this finds the true k
        more often than keeping the candidate whose choice has the largest relative
        eigen-gap, AutoSC's rule, Fan et al., NeurIPS 2022: docs/user_guide.rst, "The number
        of clusters"). Given, the candidates after one that reaches the criterion's bound
        (`BEST_POSSIBLE`: a silhouette of 1, a residual of 0) are not fitted: they could only
        tie, and a tie keeps the earlier one.
    candidates : tuple of str or dict, default=("generic", "faces", "motion")
        Preset names (`kssc.presets.PRESETS`) or dicts of `KSSC` parameters.
    criterion : {"residual", "relative_residual", "silhouette", "eigengap", "common_ncut", \
"consensus"}, default="silhouette"
        What chooses the candidate (module docstring). The default did best on the
        real-data panel (docs/presets.md).
    subspace_dim : int, default=5
        Dimension of the subspace fitted to every cluster by the residual, the relative
        residual and the silhouette (`SUBSPACE_CRITERIA`; capped by `criterion_dim` at
        n_features // n_clusters).
        12 kept the faces setting on every Yale B task of the panel, but chosen by
        leave-one-family-out it did no better than 5 over the families (docs/presets.md).
    screen_size : int or None, default=2000
        Points of the subsample the candidates are first ranked on when X has more than
        ``2 * screen_size`` (None: every candidate is fitted on X). The panel's tasks have
        at most 2,414 points: with the default its choices are those of full fits. No
        smaller size was adopted (`benchmarks/bench_screen.py`, results/bench_screen.csv):
        250 and 500 changed the choice on some tasks and seeds, and 1000 saved no time.
    random_state : int, RandomState instance or None, default=None
        Passed to every candidate.
    verbose : int, default=0
        If > 0, report each candidate's fit and the criteria on stderr (and pass `verbose`
        to every candidate, which then reports its stages).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The chosen candidate's labels.
    best_candidate_ : str or int
        The chosen candidate: its preset name, or its position in `candidates`.
    best_estimator_ : KSSC
        The chosen candidate, fitted.
    selection_ : dict
        Per candidate: every criterion of `CRITERIA` (NaN for a failed or skipped candidate),
        "n_clusters" and "n_clusters_confidence", its number of clusters and, with
        n_clusters=None, the relative eigen-gap of its choice (NaN where not fitted or not
        chosen), "time_s", its fit's seconds (a skipped candidate's: on the subsample; NaN
        when fitted nowhere), "failure": None, or "<exception type>: <message>" of a
        candidate whose fit failed, "screen": its criterion on the subsample (NaN without
        screening), and "skipped": None, or why it was not fitted on X (it trailed on the
        subsample, or an earlier candidate reached the criterion's bound).
    n_clusters_ : int
        Number of distinct labels of the chosen candidate.
    n_clusters_confidence_ : float or None
        With n_clusters=None, the chosen candidate's relative eigen-gap
        (`KSSC.n_clusters_confidence_`); None when n_clusters was given.
    scale_ : float
        The power of two X was multiplied by before the candidates' fits (1.0 for X within
        `kssc.utils._suitability.SCALE_RANGE`); `predict` multiplies new points by it too.
    centroid_check_ : dict
        `kssc.utils._suitability.centroid_check`: the chosen clustering's subspace silhouette, the
        silhouette of a k-means fit with centroids for centres, and their agreement.
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
        "screen_size": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_clusters=None, *, candidates=("generic", "faces", "motion"),
                 criterion="silhouette", subspace_dim=5, screen_size=2000, random_state=None,
                 verbose=0):
        self.n_clusters = n_clusters
        self.candidates = candidates
        self.criterion = criterion
        self.subspace_dim = subspace_dim
        self.screen_size = screen_size
        self.random_state = random_state
        self.verbose = verbose

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

    def _models(self, candidates, seed):
        """{key: KSSC} of every candidate, not fitted; invalid parameters are raised at once
        (a wrong setting is no property of the data)."""
        models = {}
        for key, params in candidates.items():
            model = KSSC(self.n_clusters, random_state=seed, **{"verbose": self.verbose, **params})
            model._validate_params()
            models[key] = model
        return models

    def _fit_each(self, X, models, stage=""):
        """({key: fitted KSSC}, {key: "<exception type>: <message>"}, {key: seconds},
        {key: why not fitted}).

        A candidate whose fit raises is recorded, not raised: the others still compete.
        Candidates that search alike share one search (`shared_neighbors`). With
        `n_clusters` given and a criterion with a bound (`BEST_POSSIBLE`), the candidates
        after one that reaches it (`at_best`) are not fitted: they could only tie."""
        fitted, failures, seconds, unfitted = {}, {}, {}, {}
        shared = shared_neighbors(X, models)
        reached = None
        for i, (key, model) in enumerate(models.items(), start=1):
            if reached is not None:
                unfitted[key] = reached
                continue
            start = perf_counter()
            with self._stage(f"candidate {key!r} ({i} of {len(models)}){stage}"):
                try:
                    if key in shared:
                        indices, search, searched = shared[key]
                        fitted[key] = model.fit(X, neighbors=indices)
                        model.neighbor_search_, model.neighbor_recall_ = search, search["recall"]
                    else:
                        searched, fitted[key] = 0.0, model.fit(X)
                except Exception as exc:  # a failure of the data is recorded, not raised
                    failures[key] = f"{type(exc).__name__}: {exc}"
            seconds[key] = (model.timings_["total"] + searched if key in fitted
                            else perf_counter() - start)
            # After the last candidate there is none left to skip: no bound to test.
            if key in fitted and self.n_clusters is not None and i < len(models):
                with _one_blas_thread():
                    score = at_best(X, model.labels_, self.criterion, self.subspace_dim,
                                    self.n_clusters)
                if score is not None:
                    reached = (f"not fitted{stage}: {key!r} reached the {self.criterion}'s "
                               f"bound ({score:.12g}), which a later candidate can only tie")
        return fitted, failures, seconds, unfitted

    def _fit_candidates(self, X, models):
        """`_fit_each` on X, with an UnsuitableSettingWarning naming the failed candidates;
        a ValueError when every one failed."""
        fitted, failures, seconds, unfitted = self._fit_each(X, models)
        if not fitted:
            raise ValueError("every candidate failed: " + "; ".join(
                f"{key!r}: {why}" for key, why in failures.items()))
        if failures:
            warn_caller(
                f"{len(failures)} of {len(models)} candidates failed and were left out of "
                "the choice (selection_ records why): " + "; ".join(
                    f"{key!r}: {why}" for key, why in failures.items()),
                UnsuitableSettingWarning)
        return fitted, failures, seconds, unfitted

    def _screen(self, X, candidates, seed):
        """({key: why skipped}, {key: criterion on the subsample}, {key: its seconds there}):
        every candidate fitted on `screen_size` random points of X, all but the one
        `criterion` prefers there skipped. Nothing skipped with at most 2 * screen_size
        points, one candidate, a criterion that needs every candidate's fit, or when every
        candidate fails on the subsample (the fits on X then say why)."""
        n, size = X.shape[0], self.screen_size
        if (size is None or len(candidates) < 2 or n <= 2 * size
                or self.criterion not in SCREENED_CRITERIA):
            return {}, {}, {}
        sample = X[np.sort(check_random_state(seed).choice(n, size, replace=False))]
        with self._stage(f"screening: every candidate on {size} of {n} points"):
            fitted, failures, seconds, unfitted = self._fit_each(
                sample, self._models(candidates, seed), stage=" on the subsample")
            if not fitted:
                return {}, {}, {}
            with _one_blas_thread():
                criteria = candidate_criteria(sample, {key: (model.labels_, model.affinity_matrix_)
                                                       for key, model in fitted.items()},
                                              self.subspace_dim, seed)
        best = best_candidate(criteria, self.criterion)
        scores = {key: criteria[key][self.criterion] for key in criteria}
        skipped = {key: (f"screened out: {self.criterion} {scores[key]:.4g} on a "
                         f"{size}-point subsample against {scores[best]:.4g} for {best!r}")
                   for key in scores if key != best}
        skipped.update({key: f"screened out: {why}" for key, why in unfitted.items()})
        skipped.update({key: f"screened out: its fit failed on a {size}-point subsample "
                             f"({why})" for key, why in failures.items()})
        return skipped, scores, seconds

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
        warn_inexact_integers(X)
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
        # One seed for every candidate, so that a candidate here equals its KSSC fit.
        seed = (self.random_state if isinstance(self.random_state, Integral)
                else check_random_state(self.random_state).randint(2**31 - 1))
        candidates = self._candidate_params()
        self.scale_ = rescaling(X)
        if self.scale_ != 1.0:
            X = X * self.scale_
        from .coding._kernels import notice_uncached

        notice_uncached(kernel_families(self._models(candidates, seed).values()))
        # One OpenMP thread for scikit-learn's k-means (NJW's 20 restarts, the centroid
        # check): on a loaded 2-core machine its threads waited on each other for 3 s of
        # the faces and motion presets' 3.3 s spectral step on digits (0.3 s on one thread,
        # the same labels). numba's kernels name their thread count themselves.
        with threadpool_limits(limits=1, user_api="openmp"):
            skipped, screen, screened = self._screen(X, candidates, seed)
            models = self._models({key: params for key, params in candidates.items()
                                   if key not in skipped}, seed)
            fitted, failures, seconds, unfitted = self._fit_candidates(X, models)
            skipped = {**skipped, **unfitted}
            with self._stage("criteria"), _one_blas_thread():
                criteria = candidate_criteria(
                    X, {key: (model.labels_, model.affinity_matrix_)
                        for key, model in fitted.items()}, self.subspace_dim, seed)
            best = best_candidate(criteria, self.criterion)
            self.selection_ = {key: {**criteria.get(key, dict.fromkeys(CRITERIA, np.nan)),
                                     **_own_k(fitted.get(key)),
                                     "time_s": seconds.get(key, screened.get(key, np.nan)),
                                     "failure": failures.get(key),
                                     "screen": screen.get(key, np.nan),
                                     "skipped": skipped.get(key)}
                               for key in candidates}
            self.best_candidate_ = best
            self.best_estimator_ = fitted[best]
            self.labels_ = fitted[best].labels_
            self.n_clusters_ = fitted[best].n_clusters_
            self.n_clusters_confidence_ = fitted[best].n_clusters_confidence_
            with self._stage("centroid check"), _one_blas_thread():
                self.centroid_check_ = centroid_check(X, self.labels_,
                                                      criteria[best]["silhouette"], seed)
        warn_centroid_model(self.centroid_check_)
        return self

    def predict(self, X):
        """``best_estimator_.predict(X)``: every new row's cluster by the chosen candidate
        (`KSSC.predict`, an extension of k-SSC; X is (n_new, n_features), checked against
        the features this estimator was fitted on, and scaled by ``scale_`` as they were)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return self.best_estimator_.predict(X * self.scale_ if self.scale_ != 1.0 else X)
