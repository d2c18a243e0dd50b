"""k-SSC: sparse subspace clustering by nearest neighbour filtering."""

from ._ann import IVF, NeighborRecallWarning
from ._memory import NeighborMemoryError
from ._suitability import UnsuitableSettingWarning
from ._validation import DegenerateFitWarning
from .admm import ADMM
from .auto import AutoKSSC
from .estimator import KSSC
from .metrics import clustering_error, psnr
from .neighbours import nearest_neighbors, nearest_neighbours  # noqa: F401 (deprecated alias)
from .path import kssc_path
from .spectral import estimate_n_clusters, ncut, spectral_clustering

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
