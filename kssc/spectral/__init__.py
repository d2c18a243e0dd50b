"""Stages 3 and 4 of the paper's Algorithm 1: the affinity and N-Cut.

`affinity` turns the coefficients into the graph W = |Z| + |Z|^T; `isolation` holds the one
isolated-point policy (which points have no affinity, what the spectral step does with them,
how a fit warns); `_clustering` embeds the graph (its top eigenvectors:
dense, ARPACK, LOBPCG or the multilevel route of `_multilevel`) and assigns the labels.
"""

from ._clustering import (
    ASSIGN_LABELS,
    EIGEN_SOLVERS,
    choose_n_clusters,
    discretize,
    estimate_n_clusters,
    laplacian_eigenvalues,
    ncut,
    ncut_embedding,
    njw_embedding,
    spectral_clustering,
    top_eigenvectors,
)

__all__ = [
    "ASSIGN_LABELS",
    "EIGEN_SOLVERS",
    "choose_n_clusters",
    "discretize",
    "estimate_n_clusters",
    "laplacian_eigenvalues",
    "ncut",
    "ncut_embedding",
    "njw_embedding",
    "spectral_clustering",
    "top_eigenvectors",
]
