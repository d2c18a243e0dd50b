"""Greedy feature selection (GFS): orthogonal matching pursuit over the other points.

Method: E. L. Dyer, A. C. Sankaranarayanan and R. G. Baraniuk, "Greedy Feature Selection
for Subspace Clustering", Journal of Machine Learning Research 14, 2487-2517, 2013.
As run by the k-SSC authors (`gfs_sc(X, kmax)`, protocol 2.1 and discrepancy 19).

Differences from Dyer et al.:
- the pick is the largest *signed* inner product with the residual (the authors' code),
  not its absolute value; already picked points stay candidates;
- the affinity is |least-squares coefficients| over the picks by default; the authors'
  code used a binary affinity over the picked points (`affinity="binary"`, what the
  paper's experiments ran, conf/method/gfs.yaml). With noise every point picks all k_max
  points, the ones past its subspace's dimension from other subspaces; with a binary
  affinity these weigh as much as the rest, and N-Cut fails even on an easy union
  (tests/test_baselines.py);
- spectral step: N-Cut of |Z| + |Z|^T (Cour, Yu and Shi), points normalised to unit norm.
Differences from the authors' MATLAB code:
- a point stops as soon as ||residual|| <= tol, also before k_max picks (the released code
  fails with a size error in that case; protocol 2.1 recommends the early stop);
- the projection is kept as an orthonormal basis updated per pick instead of a
  pseudo-inverse, and all points advance together.
"""

from numbers import Integral, Real
from time import perf_counter

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from kssc._base import SelfExpressiveClustering, unit_rows

from ._omp import omp_all_points
from ._sparse import rows_to_csr


class GFS(SelfExpressiveClustering):
    """Subspace clustering by greedy feature selection (OMP) over all other points.

    Parameters
    ----------
    n_clusters : int or None
        Number of clusters; None estimates it from the eigen-gap.
    k_max : int, default=10
        Largest number of points each point selects; must be < n_samples.
    tol : float, default=1e-3
        A point stops selecting once the norm of its residual is <= tol.
    affinity : {"coefficients", "binary"}, default="coefficients"
        Z[i, j] = |least-squares coefficient| of every selected j, or 1 (the authors' code).
    assign_labels : {"discretize", "kmeans", "njw"}
    random_state : int, RandomState or None

    Attributes
    ----------
    labels_, representation_matrix_ (CSR, row i holds point i's selection), affinity_matrix_,
    selected_ ((n, k_max) picks per step, -1 after an early stop), n_clusters_, timings_.
    """

    _parameter_constraints = {
        **SelfExpressiveClustering._parameter_constraints,
        "k_max": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "affinity": [StrOptions({"binary", "coefficients"})],
    }

    def __init__(self, n_clusters=None, *, k_max=10, tol=1e-3, affinity="coefficients",
                 assign_labels="discretize", random_state=None):
        self.n_clusters = n_clusters
        self.k_max = k_max
        self.tol = tol
        self.affinity = affinity
        self.assign_labels = assign_labels
        self.random_state = random_state

    def _representation(self, X, random_state):
        n = X.shape[0]
        if self.k_max >= n:
            raise ValueError(f"k_max={self.k_max} must be < n_samples={n}: each point selects "
                             "among the other points.")
        X_unit = unit_rows(X)
        start = perf_counter()
        picked, support, coef, _ = omp_all_points(X_unit, self.k_max, self.tol, signed=True)
        self.selected_ = picked
        if self.affinity == "binary":
            Z = rows_to_csr(picked, 1.0, n)
            Z.data[:] = 1.0
        else:
            Z = rows_to_csr(support, np.abs(coef), n)
        return Z, {"timings": {"selection": perf_counter() - start}}
