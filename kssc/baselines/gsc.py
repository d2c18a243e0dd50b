"""Greedy subspace clustering (GSC): its nearest subspace neighbour (NSN) stage, then N-Cut.

Method: D. Park, C. Caramanis and S. Sanghavi, "Greedy Subspace Clustering", Advances in
Neural Information Processing Systems 27 (NIPS 2014), 2753-2761.
As run by the k-SSC authors (`gsc_sc(X, K, max_sub_dim)`, docs/protocol.md 2.2 and D20).

Differences from Park et al.:
- only the NSN neighbour selection is used; the greedy subspace recovery stage is replaced
  by N-Cut (Cour, Yu and Shi) of W = Z + Z^T;
- `variant="paper"` (default, the authors' code) scores a candidate x_j by ||U^T x_j|| with
  U the *raw* selected points (x_i first), capped at max_subspace_dim - 1 columns, not the
  norm of the projection onto their span; `variant="orthonormal"` is Park et al.'s NSN:
  U an orthonormal basis of the span, grown while its dimension is < max_subspace_dim;
- the affinity is binary and includes the diagonal (Z[i, i] = 1, so W has 2 there), in
  both variants, unlike the zero diagonal of the other methods' Z.
Points are normalised to unit norm first. All points of a block advance together.
"""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import SelfExpressiveClustering, unit_rows
from ..spectral.affinity import coefficients_to_sparse
from ..utils._validation import check_n_neighbors

_BLOCK_BYTES = 64 * 2**20


def _nsn_block(X, rows, n_neighbors, max_dim, orthonormal):
    b, (n, d) = len(rows), X.shape
    score = np.zeros((b, n))
    taken = np.zeros((b, n), dtype=bool)
    taken[np.arange(b), rows] = True
    basis = np.zeros((b, max_dim, d))
    dim = np.zeros(b, dtype=np.int64)
    chosen = np.empty((b, n_neighbors), dtype=np.int64)

    def extend(v, where):
        """Add the directions v (one per row in `where`) to U and their scores."""
        if orthonormal:
            for _ in range(2):
                v = v - np.einsum("bm,bmd->bd", np.einsum("bmd,bd->bm", basis[where], v),
                                  basis[where])
            norm = np.linalg.norm(v, axis=1)
            grows = norm > 1e-10
            where, v = where[grows], v[grows] / norm[grows, None]
            basis[where, dim[where]] = v
        score[where] += (v @ X.T) ** 2
        dim[where] += 1

    extend(X[rows].copy(), np.arange(b))
    cap = max_dim if orthonormal else max_dim - 1
    for k in range(n_neighbors):
        j = np.argmax(np.where(taken, -np.inf, score), axis=1)
        chosen[:, k] = j
        taken[np.arange(b), j] = True
        grow = np.flatnonzero(dim < cap)
        if grow.size:
            extend(X[j[grow]], grow)
    return chosen


def nearest_subspace_neighbours(X, n_neighbors, max_subspace_dim, *, variant="paper",
                                block_bytes=_BLOCK_BYTES):
    """The NSN neighbours (n, n_neighbors) of every row of X, in the order picked."""
    n, d = X.shape
    orthonormal = variant == "orthonormal"
    block = int(max(1, min(n, block_bytes // (8 * (3 * n + max_subspace_dim * d)))))
    return np.concatenate([
        _nsn_block(X, np.arange(s, min(s + block, n)), n_neighbors, max_subspace_dim,
                   orthonormal)
        for s in range(0, n, block)])


class GSC(SelfExpressiveClustering):
    """Subspace clustering by nearest subspace neighbours (the NSN stage of GSC) and N-Cut.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; None estimates it from the eigen-gap.
    n_neighbors : int, default=10
        K, the neighbours each point selects; must be < n_samples.
    max_subspace_dim : int, default=5
        The subspace-dimension cap (the authors' `max_sub_dim`).
    variant : {"paper", "orthonormal"}, default="paper"
        The authors' raw-point scores (U capped at max_subspace_dim - 1 points) or Park et
        al.'s projection norm onto an orthonormal basis of up to max_subspace_dim dimensions.
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
        Binary Z with Z[i, i] = 1 and Z[i, j] = 1 for every neighbour j of point i.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The affinity Z + Z^T (2 on the diagonal).
    neighbors_ : ndarray of shape (n_samples, n_neighbors)
        Each point's neighbours in the order picked.
    n_iter_ : None
        GSC has no iterative solver.
    n_clusters_ : int
        Number of distinct labels found.
    laplacian_eigenvalues_ : ndarray of shape (max_clusters + 1,) or None
        With n_clusters=None, the smallest Laplacian eigenvalues behind the eigen-gap
        (`kssc.plot.eigengap`); None when n_clusters was given.
    n_features_in_ : int
        Number of features seen during fit.
    timings_ : dict
        Seconds per stage: "neighbours", "representation", "spectral" and "total".

    See Also
    --------
    GFS : Greedy selection by orthogonal matching pursuit.
    TSC : Neighbours by inner product, without a subspace model.

    Examples
    --------
    >>> from kssc import clustering_error
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    >>> from kssc.baselines import GSC
    >>> model = GSC(n_clusters=3, random_state=0).fit(X)
    >>> float(clustering_error(y, model.labels_))
    0.0
    """

    _parameter_constraints = {
        **SelfExpressiveClustering._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "max_subspace_dim": [Interval(Integral, 1, None, closed="left")],
        "variant": [StrOptions({"paper", "orthonormal"})],
    }

    def __init__(self, n_clusters=None, *, n_neighbors=10, max_subspace_dim=5, variant="paper",
                 assign_labels="discretize", max_clusters=20, random_state=None, verbose=0):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.max_subspace_dim = max_subspace_dim
        self.variant = variant
        self.assign_labels = assign_labels
        self.max_clusters = max_clusters
        self.random_state = random_state
        self.verbose = verbose

    def _representation(self, X, random_state):
        n = X.shape[0]
        k = check_n_neighbors(self.n_neighbors, n)
        X_unit = unit_rows(X, warn=False)
        with self._timed("neighbours"):
            neighbours = nearest_subspace_neighbours(X_unit, k, self.max_subspace_dim,
                                                     variant=self.variant)
        self.neighbors_ = neighbours
        columns = np.concatenate([np.arange(n)[:, None], neighbours], axis=1)
        Z = coefficients_to_sparse(columns, 1.0, n)
        return Z, {}
