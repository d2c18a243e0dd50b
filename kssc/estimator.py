"""The k-SSC estimator."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import SelfExpressiveClustering, lam_max_reason, unit_rows
from ._predict import predict_labels
from ._sparse import sparse_candidate_sets, sparse_coefficients
from .coding.admm import ADMM
from .coding.representation import LAM_MODES, SOLVERS, code_residuals, kssc_coefficients
from .neighbors._ann import IVF
from .neighbors._memory import check_fit_memory, kssc_fit_memory, search_memory
from .neighbors._search import METRICS
from .neighbors.candidates import candidate_sets, precomputed_candidates
from .presets import PAPER_SETTING  # noqa: F401 (kssc.estimator.PAPER_SETTING, as before)
from .spectral.affinity import (
    AFFINITIES,
    coefficients_to_sparse,
    max_normalize_rows,
    threshold_rows,
)
from .utils._suitability import warn_unsuitable
from .utils._validation import refuse_sparse
from .utils._warnings import warn_admm_not_converged, warn_not_converged

# Above this many points `neighbor_algorithm="auto"` switches to the approximate index.
APPROXIMATE_FROM = 50_000


class KSSC(SelfExpressiveClustering):
    """Sparse subspace clustering by nearest neighbour filtering (k-SSC).

    Every point x_i is coded over its k nearest other points only. The defaults are the
    general-purpose setting (chosen on synthetic unions of subspaces, docs/protocol.md 7.3):
    Elhamifar and Vidal's lasso model on the 20 nearest neighbours by absolute cosine, with
    a global penalty and signed codes, solved to convergence by FISTA, max-normalised rows
    and N-Cut (the preset "generic"; ``KSSC(n_clusters, **kssc.presets.preset_params(name))``
    runs the presets for faces, motion and the paper, docs/presets.md). The paper's setting is
    ``KSSC(lam=0.1, lam_mode="absolute", solver="relaxed", positive=True, threshold=None,
    affinity="symmetric", metric="euclidean", assign_labels="discretize", max_iter=200)``:
    min_z lam * ||z||_1 + 1/2 * ||x_i - X_{Omega_i} z||^2 (relaxed, FISTA, z >= 0) or
    min_z lam * ||z||_1 + 1/2 * ||e||^2 s.t. x_i = X_{Omega_i} z + e (exact, LADMPSAP), and
    ``|Z| + |Z|^T`` cut by N-Cut. Points are normalised to unit norm first.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; None estimates it from the eigen-gap of the affinity.
    n_neighbors : int or list of int, default=20
        The number k of neighbours each point is coded over; must be < n_samples. A list
        gives several neighbour views (see `neighbor_pcs`): view j adds the
        ``n_neighbors[j]`` nearest points that earlier views did not add.
    neighbor_pcs : int or list of int, default=0
        Top principal directions (uncentred) removed before each view's neighbour search;
        the coefficients still code the points themselves.
    n_random : int, default=0
        Extra distinct random other points in every candidate set (at most as many as are
        left), drawn with `random_state`; they keep each subspace's graph connected.
    lam : float, default=0.00125
        The l1 weight (the paper's lambda, 0.1 there); with ``lam_mode="relative"`` a
        fraction of each point's lambda_max (the smallest lambda giving all-zero coefficients), with
        ``lam_mode="global"`` a fraction of the smallest lambda_max over all points
        (Elhamifar and Vidal's 1 / alpha; the default is their alpha = 800). An `ADMM`
        solver runs with penalty 1 / lam.
    lam_mode : {"absolute", "relative", "global"}, default="global"
        Whether `lam` is the weight itself, a fraction of each point's lambda_max, or a
        fraction of the smallest lambda_max over all points.
    l1_ratio : float in (0, 1], default=1.0
        Elastic net (as EnSC): the penalty is lam * (l1_ratio ||z||_1 + (1 - l1_ratio) / 2
        ||z||^2); 1 is the lasso. Not with ``solver="exact"``.
    solver : {"relaxed", "exact", "admm"} or ADMM, default="relaxed"
        "relaxed": FISTA on the lasso (the paper's relaxed problem); "exact": LADMPSAP on
        the exact problem with a noise term; "admm" is ``kssc.ADMM()``: Elhamifar and
        Vidal's ADMM (an `ADMM` instance sets their affine constraint, outlier term, tol and
        max_iter).
    positive : bool, default=False
        Non-negative coefficients (what the paper's experiments ran); False: signed.
    normalize : bool, default=True
        Code unit-norm points (the paper); False codes the points as given.
    threshold : float in (0, 1] or None, default=None
        Elhamifar and Vidal's thrC: keep each point's largest coefficients holding this
        share of its l1 mass. None keeps all.
    affinity : {"symmetric", "max_normalized"}, default="max_normalized"
        ``|Z| + |Z|^T``, or with every row of Z first divided by its largest absolute
        entry (their BuildAdjacency).
    metric : {"euclidean", "abs_cosine", "l2"}, default="abs_cosine"
        Neighbours by Euclidean distance of unit vectors (the paper's code), absolute
        cosine, or Euclidean distance of the points as given (exact search only).
    neighbor_algorithm : {"auto", "exact", "approximate"} or IVF, default="auto"
        Exact blocked search, or an approximate index (`kssc.IVF`: its nlist, nprobe and
        recall check; "approximate" is ``IVF()``). "auto" searches exactly below 50,000
        points and with ``IVF()`` from there on.
    assign_labels : {"discretize", "kmeans", "njw"}, default="discretize"
        N-Cut's Yu-Shi discretisation (the paper's code), k-means on the embedding, or
        Ng-Jordan-Weiss as Elhamifar and Vidal's SSC code runs it (`kssc.spectral`).
    tol : float, default=1e-6
        Stopping tolerance of the relaxed and exact solvers (FISTA: change of each point's
        objective); an `ADMM` solver carries its own.
    max_iter : int, default=1000
        Iteration cap of the relaxed and exact solvers (the paper's code: 200); points that
        reach it raise one ``ConvergenceWarning``. An `ADMM` solver carries its own.
    chunk_size : int or None, default=None
        Points per chunk of the coefficient step (None: about 64 MiB of neighbours each).
    n_jobs : int or None, default=None
        Parallel chunks with joblib (any backend, e.g. dask via ``joblib.parallel_config``).
    max_clusters : int, default=20
        With n_clusters=None, the largest number of clusters the relative eigen-gap may
        pick (`kssc.spectral._clustering.n_clusters_by_relative_gap`: measured on the
        real-data panel in docs/user_guide.rst, "The number of clusters"); picking it raises
        a ``DegenerateFitWarning`` (the data may hold more), and so does a choice whose
        relative eigen-gap (``n_clusters_confidence_``) is below ``CLEAR_GAP``.
    random_state : int, RandomState instance or None, default=None
        Seeds the approximate neighbour index and the spectral step.
    verbose : int, default=0
        If > 0, report each stage of the fit on stderr (neighbours, coefficients chunk by
        chunk, spectral step), with a tqdm bar when tqdm is installed.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every point, 0 to ``n_clusters_ - 1``.
    representation_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Z; row i holds the coefficients that rebuild point i from its neighbours.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The affinity ``|Z| + |Z|^T`` that the spectral step cuts.
    neighbors_ : ndarray of shape (n_samples, n_candidates)
        Indices of each point's candidates (neighbours, most similar first, then the
        random candidates).
    n_iter_ : ndarray of shape (n_samples,)
        Solver iterations per point.
    n_clusters_ : int
        Number of distinct labels found.
    laplacian_eigenvalues_ : ndarray of shape (max_clusters + 1,) or None
        With n_clusters=None, the smallest eigenvalues of the affinity's normalised
        Laplacian, ascending: the fit chose the c >= 2 maximising the relative eigen-gap
        (l_{c+1} - l_c) / max(l_{c+1}, 0.05 l_max) (`kssc.plot.eigengap` draws them).
        None when n_clusters was given.
    n_clusters_confidence_ : float or None
        With n_clusters=None, the relative eigen-gap of the chosen c, in [0, 1]; below
        `kssc.spectral._clustering.CLEAR_GAP` the fit warns. None when n_clusters was
        given.
    residuals_ : ndarray of shape (n_samples,)
        How well each point's code rebuilds it: ``||p_i - sum_j z_ij p_j||`` over its
        candidates, p the coded points (unit rows with ``normalize=True``), z the solver's
        coefficients before `threshold`. With the `ADMM` outlier term it includes the
        sparse error.
    neighbor_recall_ : float
        Share of the exact neighbours the search found: 1.0 for the exact search, measured
        on a sample of points for an approximate index (NaN when not measured).
    neighbor_search_ : dict
        What the neighbour search ran: "algorithm" ("exact" or "ivf"), "recall", and for
        an index "nlist", "nprobe" and "recall_sample" (of the last view searched).
    timings_ : dict
        Seconds per stage: "neighbours", "coefficients", "representation" (both, what
        the paper times), "spectral" and "total".
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    AutoKSSC : The setting chosen among named presets (`kssc.presets`) without labels.
    baselines.SSC : Sparse subspace clustering over all points (memory O(n^2)).
    nearest_neighbors : The neighbour filter k-SSC codes each point over.
    spectral_clustering : The spectral step applied to the affinity.

    Examples
    --------
    >>> from kssc import KSSC, clustering_error
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    >>> model = KSSC(n_clusters=3, n_neighbors=10, random_state=0).fit(X)
    >>> model.representation_matrix_.shape
    (90, 90)
    >>> float(clustering_error(y, model.labels_))
    0.0
    """

    _parameter_constraints = {
        **SelfExpressiveClustering._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "neighbor_pcs": [Interval(Integral, 0, None, closed="left"), "array-like"],
        "n_random": [Interval(Integral, 0, None, closed="left")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "lam_mode": [StrOptions(set(LAM_MODES))],
        "l1_ratio": [Interval(Real, 0, 1, closed="right")],
        "solver": [StrOptions({*SOLVERS, "admm"}), ADMM],
        "positive": ["boolean"],
        "normalize": ["boolean"],
        "threshold": [Interval(Real, 0, 1, closed="right"), None],
        "affinity": [StrOptions(set(AFFINITIES))],
        "metric": [StrOptions({*METRICS, "l2"})],
        "neighbor_algorithm": [StrOptions({"auto", "exact", "approximate"}), IVF],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
    }

    def __init__(self, n_clusters=None, *, n_neighbors=20, neighbor_pcs=0, n_random=0,
                 lam=0.00125, lam_mode="global", l1_ratio=1.0, solver="relaxed", positive=False,
                 normalize=True, threshold=None, affinity="max_normalized",
                 metric="abs_cosine", neighbor_algorithm="auto", assign_labels="discretize",
                 tol=1e-6, max_iter=1000,
                 chunk_size=None, n_jobs=None, max_clusters=20, random_state=None, verbose=0):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.neighbor_pcs = neighbor_pcs
        self.n_random = n_random
        self.lam = lam
        self.lam_mode = lam_mode
        self.l1_ratio = l1_ratio
        self.solver = solver
        self.positive = positive
        self.normalize = normalize
        self.threshold = threshold
        self.affinity = affinity
        self.metric = metric
        self.neighbor_algorithm = neighbor_algorithm
        self.assign_labels = assign_labels
        self.tol = tol
        self.max_iter = max_iter
        self.chunk_size = chunk_size
        self.n_jobs = n_jobs
        self.max_clusters = max_clusters
        self.random_state = random_state
        self.verbose = verbose

    _sparse_input = True

    def fit(self, X, y=None, neighbors=None):
        """Cluster the rows of X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Points as rows, at least two. A scipy.sparse matrix (e.g. TF-IDF rows) is
            never made dense as a whole: the neighbour search multiplies sparse rows and
            the coefficient step codes a chunk of points at a time from a dense copy of
            its rows and candidates. It takes the cosine metrics ("abs_cosine",
            "euclidean"), the exact search, ``neighbor_pcs=0`` and an `ADMM` with
            ``stopping="each"``; other settings raise a ValueError that names them.
        y : None
            Ignored; present for scikit-learn API consistency.
        neighbors : array-like, (indices, distances) pair or sparse matrix, default=None
            Precomputed neighbours, used instead of the search (then `metric`,
            `neighbor_algorithm` and `neighbor_pcs` play no part): an integer array
            (n_samples, k) of every point's k >= n_neighbors nearest *other* points, most
            similar first (as `nearest_neighbors`, `neighbors_` or scikit-learn's
            ``NearestNeighbors().kneighbors()`` without X give); a pair (indices,
            distances) of such arrays, each row then ranked by distance; or a sparse
            (n_samples, n_samples) kNN graph of distances, as scikit-learn's
            ``kneighbors_graph(X, k, mode="distance")`` and ``KNeighborsTransformer``
            give (its diagonal entries, the point itself, are dropped). The first
            n_neighbors of each row are coded over, then `n_random` random points are
            added as usual. A fit parameter, not a constructor one: the neighbours are
            data of these samples, like ``sample_weight``, so `clone`, `get_params` and a
            grid search over the settings leave them out, and one search serves many fits
            (``fit(X, neighbors=model.neighbors_[:, :k])``; `kssc_path` does it for a
            grid). Checked: shape, enough neighbours, index range, no point its own
            neighbour, no repeat.

        Returns
        -------
        self : object
            The fitted estimator, with ``labels_`` and the other learned attributes set.
        """
        self._given_neighbors = neighbors
        try:
            return super().fit(X, y)
        finally:
            del self._given_neighbors

    def _solver(self):
        """The solver instance, validated (an `ADMM`, or "relaxed" / "exact")."""
        solver = ADMM() if isinstance(self.solver, str) and self.solver == "admm" else self.solver
        if isinstance(solver, ADMM):
            solver.validate()
        if solver == "exact" and self.l1_ratio < 1:
            raise ValueError(f"l1_ratio={self.l1_ratio} needs solver='relaxed' or an ADMM; the "
                             "exact solver codes the lasso only.")
        return solver

    def _representation(self, X, random_state):
        P, solver = self._coded_points(X)
        with self._timed("neighbours") as progress:
            indices, order = self._candidates(P, random_state, progress)
        return self._code(X, P, indices, solver, order)

    def _coded_points(self, X):
        """(P, solver): the points as coded (unit rows when normalising dense X; sparse X as
        is) and the validated solver; checks that the setting takes X."""
        solver = self._solver()
        # Float32 data (e.g. a memory-mapped .npy) is coded from one float32 copy of its unit
        # rows, made a chunk at a time; the coefficient step casts each gathered chunk to
        # float64. Float64 data keeps float64 unit rows: a memory map gives the labels of the
        # same array in memory. Sparse rows are scaled where they are gathered.
        sparse = sp.issparse(X)
        if sparse and self._sparse_problem():
            raise ValueError(f"sparse X cannot be fitted with {self._sparse_problem()}; or "
                             "convert X with X.toarray().")
        if not sparse:  # before the first copy
            self._check_memory(X, self._search_algorithm(X.shape[0]), isinstance(solver, ADMM))
        P = unit_rows(X, X.dtype, warn=False) if self.normalize and not sparse else X
        if not sparse:
            # A sparse matrix cannot be StandardScaler's centred output: nothing to check.
            warn_unsuitable(X, self.normalize)
        return P, solver

    def _sparse_problem(self):
        """The setting that cannot take sparse X, said as the error says it ("" if none)."""
        algorithm = self.neighbor_algorithm
        solver = ADMM() if isinstance(self.solver, str) and self.solver == "admm" else self.solver
        if self.metric == "l2":
            return f"metric={self.metric!r} (use 'abs_cosine' or 'euclidean', the cosine metrics)"
        if np.any(np.asarray(self.neighbor_pcs) != 0):
            return (f"neighbor_pcs={self.neighbor_pcs!r} (removing principal directions makes "
                    "every row dense)")
        if not (isinstance(algorithm, str) and algorithm in ("auto", "exact")):
            return (f"neighbor_algorithm={algorithm!r} (the sparse search is exact: use "
                    "'exact' or 'auto')")
        if isinstance(solver, ADMM) and solver.stopping == "all":
            return ("an ADMM with stopping='all' (it stops every point together: use "
                    "ADMM(stopping='each'))")
        return ""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = not self._sparse_problem()
        return tags

    def _search_algorithm(self, n):
        """The neighbour search a dense fit of n points runs ("exact", "approximate" or an
        `IVF`), validated."""
        algorithm = self.neighbor_algorithm
        if isinstance(algorithm, IVF):
            algorithm.validate()
        if algorithm == "auto":
            algorithm = "approximate" if n >= APPROXIMATE_FROM else "exact"
        if self.metric == "l2" and algorithm != "exact" and self.neighbor_algorithm != "auto":
            raise ValueError(f"metric='l2' has an exact search only; got neighbor_algorithm="
                             f"{self.neighbor_algorithm!r}: use 'exact' or 'auto'.")
        return algorithm

    def _candidates(self, P, random_state, progress=None):
        """Every point's candidates (n, k), given or searched, and the order to code them in
        (the IVF's rows sorted by list, else None); sets ``neighbor_search_``."""
        n = P.shape[0]
        if self._given_neighbors is not None:
            if np.ndim(self.n_neighbors) or np.ndim(self.neighbor_pcs) or self.neighbor_pcs:
                raise ValueError(f"precomputed neighbours take one n_neighbors and "
                                 f"neighbor_pcs=0; got n_neighbors={self.n_neighbors!r}, "
                                 f"neighbor_pcs={self.neighbor_pcs!r}.")
            indices, search = precomputed_candidates(
                self._given_neighbors, n, self.n_neighbors, n_random=self.n_random,
                random_state=random_state)
        elif sp.issparse(P):
            indices, search = sparse_candidate_sets(
                P, self.n_neighbors, neighbor_pcs=self.neighbor_pcs, n_random=self.n_random,
                metric=self.metric, random_state=random_state, progress=progress)
        else:
            algorithm = self._search_algorithm(n)
            indices, search = candidate_sets(P, self.n_neighbors, neighbor_pcs=self.neighbor_pcs,
                                             n_random=self.n_random, metric=self.metric,
                                             algorithm=algorithm, unit_rows=self.normalize,
                                             random_state=random_state, progress=progress)
        order = search.pop("order", None)  # not kept in neighbor_search_, a report
        self.neighbor_search_ = search
        self.neighbor_recall_ = search["recall"]
        return indices, order

    def _code(self, X, P, indices, solver, order=None):
        """Z from every point's code over its candidates, coded in `order` (None: as they
        come); sets the coding's attributes."""
        n = X.shape[0]
        admm = isinstance(solver, ADMM)
        residuals = None
        with self._timed("coefficients") as progress:
            options = {"solver": solver, "positive": self.positive, "lam_mode": self.lam_mode,
                       "l1_ratio": self.l1_ratio, "tol": self.tol, "max_iter": self.max_iter,
                       "chunk_size": self.chunk_size, "n_jobs": self.n_jobs,
                       "progress": progress}
            if sp.issparse(X):
                coef, n_iter, converged, residuals = sparse_coefficients(
                    X, indices, self.lam, normalize=self.normalize, **options)
            else:
                coef, n_iter, converged = kssc_coefficients(
                    P, indices, self.lam, order=order, **options)
        if admm:
            warn_admm_not_converged(converged, solver)
        else:
            warn_not_converged(converged, solver, self.max_iter)
        self.residuals_ = code_residuals(P, P, indices, coef) if residuals is None else residuals
        if self.threshold is not None:
            coef = threshold_rows(coef, self.threshold)
        self.neighbors_ = indices
        # The data as fitted, for `predict` to code new points by (a reference, not a copy:
        # the unit rows, a copy the size of X, are made again there, not held through the
        # spectral step).
        self._fit_X = X
        Z = coefficients_to_sparse(indices, coef, n)
        if self.affinity == "max_normalized":
            Z = max_normalize_rows(Z)
        return Z, {"n_iter": n_iter}

    def _check_memory(self, X, algorithm, admm):
        """`FitMemoryError` before the fit allocates, when its largest stage would need more
        memory than the process may take (`kssc.neighbors._memory`)."""
        n, d = X.shape
        counts = np.atleast_1d(self.n_neighbors)
        k = int(min(counts.sum() + self.n_random, n - 1))
        metric = self.metric
        search_algorithm = "exact" if algorithm == "exact" or metric == "l2" else (
            algorithm if isinstance(algorithm, IVF) else IVF())
        # Without normalize, the cosine metrics search a unit-row copy made in the stage.
        views = bool(np.any(np.atleast_1d(self.neighbor_pcs))) or (
            not self.normalize and metric != "l2")
        stages = kssc_fit_memory(
            n, d, X.dtype.itemsize, k,
            search_memory(n, d, k, metric, search_algorithm, X.dtype), copy=self.normalize,
            n_vectors=self.n_clusters or self.max_clusters + 1,
            lam_scale=self.lam_mode != "absolute" or admm, removed_components=views)
        advice = ["pass float32 data (a memory-mapped .npy is read in place)"
                  if X.dtype != np.float32 else "",
                  "use the approximate search (neighbor_algorithm='approximate')"
                  if search_algorithm == "exact" and metric != "l2" else "",
                  "lower n_neighbors",
                  "or fit on a larger machine (kssc.distributed.fit splits the rows over a "
                  "dask cluster)"]
        check_fit_memory(stages, f"KSSC.fit of {n} x {d} {X.dtype.name} points with "
                         f"{k} candidates each", "To fit, " + "; ".join(a for a in advice if a)
                         + ".")

    def predict(self, X):
        """Cluster of every row of X, from the fitted clusters (an extension of k-SSC).

        k-SSC is transductive: it clusters the points it is fitted on, and the paper defines
        no rule for other points. This extension codes each new point as the fit codes a
        training point: over its nearest training points in every neighbour view (the same
        metric, top principal directions, normalisation and search: exact, or an IVF index
        with the fit's number of lists and probes), with the same solver model, l1 weight
        (``lam_mode="global"``: the training points' scale) and outlier term; the relaxed
        model's lasso is solved exactly, by homotopy (`kssc.coding.homotopy`), where the
        fit's FISTA stops within its tolerance of the same optimum. The random
        candidates are left out (they only keep the fit's graph connected) and an `ADMM`
        solver stops each point on its own change, so a point's label does not depend on
        the others passed with it. The point joins the cluster whose training points' part
        of its code rebuilds it best (smallest ``||x - X_c z_c||``); a point with an
        all-zero code takes its nearest neighbour's cluster. The training points are kept
        for this (``n_samples x n_features`` in memory, or the memory map that was fitted);
        the first call builds the search structure from them (their coded rows and a float32
        copy, 1.5 times their float64 bytes, and as much again per neighbour view that
        removes principal directions) and keeps it while the model lives (not in a pickle);
        then every call searches, codes and labels the new points in batches on all cores.
        Measured against refitting with the new points: the user guide
        (docs/user_guide.rst), "New points"; its rate: ``benchmarks/bench_predict.py``.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            New points as rows, with the training data's features.

        Returns
        -------
        labels : ndarray of shape (n_new,)
            Cluster of every new point, among ``labels_``'s clusters.
        """
        check_is_fitted(self)
        refuse_sparse(X, "KSSC.predict")
        if sp.issparse(self._fit_X):
            raise TypeError("KSSC.predict needs a fit on dense X: this model was fitted on "
                            "sparse rows; fit it on X.toarray() to predict.")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return predict_labels(self, X)

    @property
    def n_clusters_confidence_(self):
        """With n_clusters=None, the relative eigen-gap of the chosen number of clusters
        (`kssc.spectral._clustering.n_clusters_by_relative_gap` of
        ``laplacian_eigenvalues_``; in [0, 1], below `kssc.spectral._clustering.CLEAR_GAP`
        the fit warns); None when n_clusters was given."""
        from .spectral._clustering import n_clusters_by_relative_gap

        values = self.laplacian_eigenvalues_
        if values is None:
            return None
        return n_clusters_by_relative_gap(values, self.max_clusters)[1]

    def _isolation_reason(self, X, isolated):
        if self.lam_mode == "relative":
            return (f"lam={self.lam:g} >= 1 with lam_mode='relative' is at least every "
                    "point's lambda_max: every code is zero." if self.lam >= 1 else "")
        if self.lam_mode == "global":
            return (f"lam={self.lam:g} >= 1 with lam_mode='global' is at least the smallest "
                    "lambda_max: that point's code is zero." if self.lam >= 1 else "")
        neighbours = self.neighbors_
        if sp.issparse(X):
            # Only the isolated points and their candidates, dense, renumbered.
            needed = np.unique(np.concatenate([isolated, neighbours[isolated].ravel()]))
            local = np.zeros((needed.size, neighbours.shape[1]), dtype=np.int64)
            local[np.searchsorted(needed, isolated)] = np.searchsorted(needed,
                                                                       neighbours[isolated])
            X, isolated, neighbours = (X[needed].toarray(), np.searchsorted(needed, isolated),
                                       local)
        P = unit_rows(X, X.dtype, warn=False) if self.normalize else X  # float32 stays so
        return lam_max_reason(self.lam, P, isolated, positive=self.positive,
                              neighbours=neighbours, hint=", or use lam_mode='relative'")
