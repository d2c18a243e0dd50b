"""k-SSC: sparse subspace clustering by nearest neighbour filtering."""

from .auto import AutoKSSC
from .coding import ADMM
from .estimator import KSSC
from .metrics import clustering_error, psnr
from .neighbors import (  # noqa: F401 (nearest_neighbours: deprecated alias)
    IVF,
    NeighborMemoryError,
    NeighborRecallWarning,
    nearest_neighbors,
    nearest_neighbours,
)
from .path import kssc_path
from .spectral import estimate_n_clusters, ncut, spectral_clustering
from .utils._suitability import UnsuitableSettingWarning
from .utils._validation import DegenerateFitWarning

__version__ = "0.1.0"

__all__ = [
    "ADMM",
    "AutoKSSC",
    "IVF",
    "KSSC",
    "DegenerateFitWarning",
    "NeighborMemoryError",
    "NeighborRecallWarning",
    "UnsuitableSettingWarning",
    "clustering_error",
    "estimate_n_clusters",
    "kssc_path",
    "ncut",
    "nearest_neighbors",
    "psnr",
    "spectral_clustering",
]
