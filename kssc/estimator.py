"""The k-SSC estimator."""

from numbers import Integral, Real
from time import perf_counter

from sklearn.utils._param_validation import Interval, StrOptions

from ._base import SelfExpressiveClustering, lam_max_reason, unit_rows
from ._validation import check_n_neighbors, normalize_rows
from ._warnings import warn_caller
from .neighbours import METRICS, nearest_neighbours
from .representation import SOLVERS, coefficients_to_sparse, kssc_coefficients

# Above this many points `neighbor_algorithm="auto"` switches to the approximate index.
APPROXIMATE_FROM = 50_000


class KSSC(SelfExpressiveClustering):
    """Sparse subspace clustering by nearest neighbour filtering (k-SSC).

    Every point x_i is coded over its k nearest other points only,
    min_z lam * ||z||_1 + 1/2 * ||x_i - X_{Omega_i} z||^2 (relaxed, FISTA) or
    min_z lam * ||z||_1 + 1/2 * ||e||^2 s.t. x_i = X_{Omega_i} z + e (exact, LADMPSAP);
    the affinity ``|Z| + |Z|^T`` is cut by N-Cut. Points are normalised to unit norm first.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; None estimates it from the eigen-gap of the affinity.
    n_neighbors : int, default=20
        The number k of neighbours each point is coded over; must be < n_samples.
    lam : float, default=0.1
        The paper's lambda (l1 weight); with ``lam_mode="relative"`` a fraction of each
        point's lambda_max (the smallest lambda giving all-zero coefficients).
    lam_mode : {"absolute", "relative"}, default="absolute"
        Whether `lam` is the weight itself or a fraction of each point's lambda_max.
    solver : {"relaxed", "exact"}, default="relaxed"
        FISTA on the lasso (the paper's relaxed problem) or LADMPSAP on the exact problem
        with a noise term.
    positive : bool, default=True
        Non-negative coefficients, what the authors' experiments ran; False solves the
        paper's signed objective.
    metric : {"euclidean", "abs_cosine"}, default="euclidean"
        Neighbours by Euclidean distance of unit vectors (the paper's code) or absolute cosine.
    neighbor_algorithm : {"auto", "exact", "approximate"}, default="auto"
        "auto" uses exact blocked search below 50,000 points and an approximate index above.
    assign_labels : {"discretize", "kmeans", "njw"}, default="discretize"
        N-Cut's Yu-Shi discretisation (the paper's code), k-means on the embedding, or
        Ng-Jordan-Weiss as Elhamifar and Vidal's SSC code runs it (`kssc.spectral`).
    tol : float, default=1e-6
        Stopping tolerance of the coefficient solver (FISTA: change of each point's
        objective).
    max_iter : int, default=200
        Iteration cap of the coefficient solver; points that reach it raise one
        ``ConvergenceWarning``.
    chunk_size : int or None, default=None
        Points per chunk of the coefficient step (None: about 64 MiB of neighbours each).
    n_jobs : int or None, default=None
        Parallel chunks with joblib (any backend, e.g. dask via ``joblib.parallel_config``).
    max_clusters : int, default=20
        With n_clusters=None, the largest number of clusters the eigen-gap may pick.
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
    neighbors_ : ndarray of shape (n_samples, n_neighbors)
        Indices of each point's neighbours, most similar first.
    n_iter_ : ndarray of shape (n_samples,)
        Solver iterations per point.
    n_clusters_ : int
        Number of distinct labels found.
    timings_ : dict
        Seconds per stage: "neighbours", "coefficients", "representation" (both, what
        the paper times), "spectral" and "total".
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    baselines.SSC : Sparse subspace clustering over all points (memory O(n^2)).
    nearest_neighbours : The neighbour filter k-SSC codes each point over.
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
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "lam_mode": [StrOptions({"absolute", "relative"})],
        "solver": [StrOptions(set(SOLVERS))],
        "positive": ["boolean"],
        "metric": [StrOptions(set(METRICS))],
        "neighbor_algorithm": [StrOptions({"auto", "exact", "approximate"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
    }

    def __init__(self, n_clusters=None, *, n_neighbors=20, lam=0.1, lam_mode="absolute",
                 solver="relaxed", positive=True, metric="euclidean", neighbor_algorithm="auto",
                 assign_labels="discretize", tol=1e-6, max_iter=200, chunk_size=None,
                 n_jobs=None, max_clusters=20, random_state=None, verbose=0):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.lam = lam
        self.lam_mode = lam_mode
        self.solver = solver
        self.positive = positive
        self.metric = metric
        self.neighbor_algorithm = neighbor_algorithm
        self.assign_labels = assign_labels
        self.max_clusters = max_clusters
        self.tol = tol
        self.max_iter = max_iter
        self.chunk_size = chunk_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _representation(self, X, random_state):
        n = X.shape[0]
        k = check_n_neighbors(self.n_neighbors, n)
        X_unit = unit_rows(X)
        algorithm = self.neighbor_algorithm
        if algorithm == "auto":
            algorithm = "approximate" if n >= APPROXIMATE_FROM else "exact"
        start = perf_counter()
        with self._stage("neighbours"):
            indices, _ = nearest_neighbours(X_unit, k, metric=self.metric, algorithm=algorithm,
                                            normalize=False, random_state=random_state)
        found = perf_counter()
        with self._stage("coefficients") as progress:
            coef, n_iter, converged = kssc_coefficients(
                X_unit, indices, self.lam, solver=self.solver, positive=self.positive,
                lam_mode=self.lam_mode, tol=self.tol, max_iter=self.max_iter,
                chunk_size=self.chunk_size, n_jobs=self.n_jobs, progress=progress)
        solved = perf_counter()
        warn_not_converged(converged, self.solver, self.max_iter)
        self.neighbors_ = indices
        Z = coefficients_to_sparse(indices, coef, n)
        return Z, {"n_iter": n_iter,
                   "timings": {"neighbours": found - start, "coefficients": solved - found}}

    def _isolation_reason(self, X, isolated):
        if self.lam_mode == "relative":
            return (f"lam={self.lam:g} >= 1 with lam_mode='relative' is at least every "
                    "point's lambda_max: every code is zero." if self.lam >= 1 else "")
        X_unit, _ = normalize_rows(X.astype(float, copy=False))
        return lam_max_reason(self.lam, X_unit, isolated, positive=self.positive,
                              neighbours=self.neighbors_, hint=", or use lam_mode='relative'")


def warn_not_converged(converged, solver, max_iter):
    """ConvergenceWarning naming how many sub-problems hit max_iter."""
    from sklearn.exceptions import ConvergenceWarning

    missed = int((~converged).sum())
    if missed:
        warn_caller(
            f"{missed} of {converged.size} point(s) reached max_iter={max_iter} in the {solver} "
            "solver before meeting the tolerance; raise max_iter or tol.",
            ConvergenceWarning,
        )
