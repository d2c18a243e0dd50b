"""Thresholding-based subspace clustering (TSC).

Method: R. Heckel and H. Boelcskei, "Robust Subspace Clustering via Thresholding", IEEE
Transactions on Information Theory 61(11), 6320-6342, 2015 (first version: "Subspace
Clustering via Thresholding and Spectral Clustering", ICASSP 2013, 3263-3267).
As run by the k-SSC authors (`tsc_sc(X, q)`, docs/protocol.md 2.3 and D21).

Every point keeps its q most similar other points with weight exp(-2 arccos(c)), c their
inner product (points normalised to unit norm), then N-Cut of |Z| + |Z|^T.
Differences from Heckel and Boelcskei:
- `signed=True` (default, the authors' code): neighbours by Euclidean distance between unit
  points, i.e. the largest *signed* inner product, and c without absolute value (clipped to
  [-1, 1]); `signed=False` is the original: the largest |c| and weight exp(-2 arccos |c|);
- exact neighbours (brute force) where the authors used VLFeat's approximate kd-tree
  (identical whenever N <= 10 q + 1, see docs/protocol.md 1.2);
- N-Cut (Cour, Yu and Shi) instead of normalised spectral clustering with k-means.
"""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from .._base import SelfExpressiveClustering, unit_rows
from ..neighbors._search import nearest_neighbors
from ..spectral.affinity import coefficients_to_sparse
from ..utils._validation import check_n_neighbors


def tsc_weights(similarities):
    """exp(-2 arccos(c)) of inner products c of unit vectors, c clipped to [-1, 1]."""
    return np.exp(-2.0 * np.arccos(np.clip(similarities, -1.0, 1.0)))


class TSC(SelfExpressiveClustering):
    """Thresholding-based subspace clustering.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; None estimates it from the eigen-gap.
    n_neighbors : int, default=20
        The number q of neighbours kept per point; must be < n_samples.
    signed : bool, default=True
        Rank and weight by the signed inner product (the authors' code) or by its absolute
        value (Heckel and Boelcskei).
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
        Row i holds the weights exp(-2 arccos c) of point i's neighbours.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The affinity ``|Z| + |Z|^T``.
    neighbors_ : ndarray of shape (n_samples, n_neighbors)
        Each point's q neighbours, most similar first.
    n_iter_ : None
        TSC has no iterative solver.
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
    kssc.KSSC : Codes each point over the same neighbours instead of weighting them.
    kssc.nearest_neighbors : The neighbour search TSC uses.

    Examples
    --------
    >>> from kssc import clustering_error
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    >>> from kssc.baselines import TSC
    >>> model = TSC(n_clusters=3, n_neighbors=5, random_state=0).fit(X)
    >>> model.neighbors_.shape
    (90, 5)
    """

    _parameter_constraints = {
        **SelfExpressiveClustering._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "signed": ["boolean"],
    }

    def __init__(self, n_clusters=None, *, n_neighbors=20, signed=True,
                 assign_labels="discretize", max_clusters=20, random_state=None, verbose=0):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.signed = signed
        self.assign_labels = assign_labels
        self.max_clusters = max_clusters
        self.random_state = random_state
        self.verbose = verbose

    def _representation(self, X, random_state):
        n = X.shape[0]
        q = check_n_neighbors(self.n_neighbors, n)
        X_unit = unit_rows(X, warn=False)
        with self._timed("neighbours"):
            indices, similarities = nearest_neighbors(
                X_unit, q, metric="euclidean" if self.signed else "abs_cosine", normalize=False)
        self.neighbors_ = indices
        Z = coefficients_to_sparse(indices, tsc_weights(similarities), n)
        return Z, {}
