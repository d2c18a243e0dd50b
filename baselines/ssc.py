"""Sparse subspace clustering (SSC), as the k-SSC paper's code ran it.

Method: E. Elhamifar and R. Vidal, "Sparse Subspace Clustering: Algorithm, Theory, and
Applications", IEEE Transactions on Pattern Analysis and Machine Intelligence 35(11),
2765-2781, 2013 (first version: "Sparse Subspace Clustering", CVPR 2009, 2790-2797).
Solvers: those of the k-SSC authors' code (S. Tierney, Y. Guo and J. Gao, "Efficient Sparse
Subspace Clustering by Nearest Neighbour Filtering", sjtrny/kssc): `ssc_relaxed`,
`ssc_exact`, `ssc_relaxed_par`, `ssc_exact_par` (docs/protocol.md 1.5 and 1.6).

Differences from Elhamifar and Vidal, kept because the k-SSC paper's numbers come from them:
- the lasso (relaxed) or noise-as-error (exact) model with an absolute lambda = 0.1 on unit
  points, no affine constraint, no outlier term, no alpha relative to lambda_max;
- non-negative coefficients by default (the authors' prox); `positive=False` is signed;
- solved by FISTA or linearised ADMM over the whole N x N matrix instead of ADMM;
- affinity |Z| + |Z|^T without column normalisation, then N-Cut (Cour, Yu and Shi).
Differences from the authors' MATLAB code:
- for the exact solver `tol` sets both tests, eps_primal = 1000 tol and eps_change = 100 tol,
  so the default tol = 1e-6 gives the code's 1e-3 and 1e-4;
- the gradient goes through X^T (X Z) or the Gram matrix, whichever costs less (same maths).
"""

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from kssc._base import SelfExpressiveClustering, lam_max_reason, unit_rows
from kssc._validation import normalize_rows
from kssc.estimator import warn_not_converged

from ._sparse import dense_to_csr
from ._ssc_solvers import ssc_fista, ssc_ladmpsap


class SSC(SelfExpressiveClustering):
    """Sparse subspace clustering with every other point as the dictionary.

    min_Z lam * ||Z||_1 + 1/2 * ||X - Z X||_F^2 (relaxed) or
    min_Z lam * ||Z||_1 + 1/2 * ||E||_F^2 s.t. X = Z X + E (exact), with diag(Z) = 0,
    then N-Cut of ``|Z| + |Z|^T``. Points are normalised to unit norm first. Memory is O(N^2).

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; None estimates it from the eigen-gap.
    lam : float, default=0.1
        The l1 weight (absolute, on unit-norm points).
    solver : {"relaxed", "exact"}, default="relaxed"
        FISTA with backtracking (`ssc_relaxed`) or linearised ADMM (`ssc_exact`).
    positive : bool, default=True
        Non-negative coefficients, as the authors' code; False for signed ones.
    column_wise : bool, default=False
        Per-point step constants and stopping rule (`ssc_relaxed_par`, `ssc_exact_par`)
        instead of one solver over the whole matrix with a rule on the total objective.
    tol : float, default=1e-6
        Relaxed: largest change of the objective (total, or per point with `column_wise`).
        Exact: eps_primal = 1000 * tol and eps_change = 100 * tol.
    max_iter : int, default=200
        Iteration cap of the solver; reaching it raises a ``ConvergenceWarning``.
    assign_labels : {"discretize", "kmeans", "njw"}, default="discretize"
        Label assignment of the spectral step (`kssc.spectral_clustering`).
    max_clusters : int, default=20
        With n_clusters=None, the largest number of clusters the eigen-gap may pick.
    random_state : int, RandomState instance or None, default=None
        Seeds the spectral step.
    verbose : int, default=0
        If > 0, report each stage of the fit on stderr.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every point, 0 to ``n_clusters_ - 1``.
    representation_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Z; row i holds the coefficients that rebuild point i, zero diagonal.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The affinity ``|Z| + |Z|^T``.
    n_iter_ : int or ndarray of shape (n_samples,)
        Solver iterations; per point with `column_wise`.
    n_clusters_ : int
        Number of distinct labels found.
    n_features_in_ : int
        Number of features seen during fit.
    timings_ : dict
        Seconds per stage: "representation" (building Z), "spectral" and "total".

    See Also
    --------
    kssc.KSSC : The same model with every point coded over its k nearest neighbours only.

    Examples
    --------
    >>> from kssc import clustering_error
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    >>> from baselines import SSC
    >>> model = SSC(n_clusters=3, tol=1e-4, random_state=0).fit(X)
    >>> float(clustering_error(y, model.labels_))
    0.0
    """

    _parameter_constraints = {
        **SelfExpressiveClustering._parameter_constraints,
        "lam": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"relaxed", "exact"})],
        "positive": ["boolean"],
        "column_wise": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_clusters=None, *, lam=0.1, solver="relaxed", positive=True,
                 column_wise=False, tol=1e-6, max_iter=200, assign_labels="discretize",
                 max_clusters=20, random_state=None, verbose=0):
        self.n_clusters = n_clusters
        self.lam = lam
        self.solver = solver
        self.positive = positive
        self.column_wise = column_wise
        self.tol = tol
        self.max_iter = max_iter
        self.assign_labels = assign_labels
        self.max_clusters = max_clusters
        self.random_state = random_state
        self.verbose = verbose

    def _representation(self, X, random_state):
        X_unit = unit_rows(X)
        if self.solver == "relaxed":
            C, n_iter, converged = ssc_fista(
                X_unit, self.lam, positive=self.positive, column_wise=self.column_wise,
                tol=self.tol, max_iter=self.max_iter)
        else:
            C, n_iter, converged = ssc_ladmpsap(
                X_unit, self.lam, positive=self.positive, column_wise=self.column_wise,
                tol_primal=1e3 * self.tol, tol_change=1e2 * self.tol, max_iter=self.max_iter)
        warn_not_converged(converged, f"SSC {self.solver}", self.max_iter)
        return dense_to_csr(C), {"n_iter": n_iter if self.column_wise else int(n_iter.max())}

    def _isolation_reason(self, X, isolated):
        X_unit, _ = normalize_rows(X.astype(float, copy=False))
        return lam_max_reason(self.lam, X_unit, isolated, positive=self.positive)
