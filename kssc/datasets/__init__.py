"""Data sets of the k-SSC experiments: the data folder, fetching with checksums, loaders and
synthetic generators.

Real data (downloaded by `make data`, i.e. `python -m kssc.datasets.fetch`) lives in the
data folder given by `get_data_dir`: the `data_dir` argument, else $KSSC_DATA_DIR, else
`data/` at the repository root in a checkout, else the user cache folder of an installed
package. Loaders verify each file against its recorded SHA-256 sum and raise
`DataCorruptError` on a mismatch. All loaders and generators return points as rows.

Fetching is not imported here, so that `python -m kssc.datasets.fetch` runs cleanly; use
`from kssc.datasets.fetch import fetch_datasets, verify_datasets`.
"""

from ._integrity import DataCorruptError
from ._paths import DATASETS, DataNotFoundError, get_data_dir
from .cached import select_hopkins_sequences, tir_spectra, yaleb_subject_images
from .hopkins import PAPER41, list_hopkins_sequences, load_hopkins, load_hopkins_sequence
from .synthetic import (
    dependent_coefficients,
    make_dvsn_data,
    make_intersection_data,
    make_mv_data,
    make_runtime_data,
    make_subspaces,
    random_orthonormal,
)
from .tir import load_tir_library, make_tir, make_tir_large
from .union import make_union_of_subspaces
from .yaleb import SUBJECTS as YALEB_SUBJECTS
from .yaleb import list_yaleb_images, load_yaleb

__all__ = [
    "DATASETS",
    "PAPER41",
    "YALEB_SUBJECTS",
    "DataCorruptError",
    "DataNotFoundError",
    "dependent_coefficients",
    "get_data_dir",
    "list_hopkins_sequences",
    "list_yaleb_images",
    "load_hopkins",
    "load_hopkins_sequence",
    "load_tir_library",
    "load_yaleb",
    "make_dvsn_data",
    "make_intersection_data",
    "make_mv_data",
    "make_runtime_data",
    "make_subspaces",
    "make_tir",
    "make_tir_large",
    "random_orthonormal",
    "make_union_of_subspaces",
    "select_hopkins_sequences",
    "tir_spectra",
    "yaleb_subject_images",
]
