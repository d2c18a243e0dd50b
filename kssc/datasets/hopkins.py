"""Hopkins 155 motion segmentation (Tron & Vidal, CVPR 2007).

156 sequences lie in `hopkins155/<SEQ>/<SEQ>_truth.mat`: the standard 155 problems (120
with two motions, 35 with three) plus `dancing` (five motions). The paper's code used 41
of them (`subset="paper41"`): the full checkerboard and traffic sequences it ships,
33 with three motions and 8 with two.

The table `metadata/hopkins155.csv` (name, motions, points, frames, category) lets the
sequences be listed and filtered without reading the data.
"""

import csv
from functools import cache
from importlib import resources

import numpy as np
import scipy.io

from ._paths import require_files
from ._registry import Dataset

PAPER41 = [
    "1R2RC", "1R2RCR", "1R2RCT_A", "1R2RCT_B", "1R2TCR", "1R2TCRT", "1RT2RCR", "1RT2RCRT",
    "1RT2RTCRT_A", "1RT2RTCRT_B", "1RT2TC", "1RT2TCRT_A", "1RT2TCRT_B", "2R3RTC", "2R3RTCRT",
    "2RT3RC", "2RT3RCR", "2RT3RCT_A", "2RT3RCT_B", "2RT3RTCRT", "2T3RCR", "2T3RCRT", "2T3RCRTP",
    "2T3RCTP", "2T3RTCR", "three-cars", "cars1", "cars2", "cars2B", "cars2_06", "cars2_07", "cars3",
    "cars4", "cars5", "cars6", "cars7", "cars8", "cars9", "cars10", "truck1", "truck2",
]
"""The 41 sequences shipped with the paper's code (`sjtrny/kssc` data/Hopkins155)."""

SUBSETS = ("paper41", "hopkins155", "all")

DATASET = Dataset(
    name="hopkins155",
    title="Hopkins 155 motion segmentation",
    sources=(
        "https://github.com/ChristosXeno/Evaluation-of-Geometric-Motion-Segmentation-Methods"
        "/archive/83c60f4c3edf81ded709228ac2a6ed38a414b71d.zip",
        "http://www.vision.jhu.edu/data/hopkins155/Hopkins155.zip",
    ),
    layout="archive",
    n_bytes=26_867_158,
    loaders=("load_hopkins_sequence", "load_hopkins"),
)
"""The data set's declaration: https first (a git copy at a fixed commit), then the public
home, which serves plain http only; the recorded sums verify whatever arrives."""


@cache
def hopkins_metadata():
    """{name: {"n_motions", "n_points", "n_frames", "category"}} for all 156 sequences."""
    text = resources.files("kssc.datasets").joinpath("metadata", "hopkins155.csv").read_text()
    table = {}
    for row in csv.DictReader(text.splitlines()):
        table[row["name"]] = {
            "n_motions": int(row["n_motions"]),
            "n_points": int(row["n_points"]),
            "n_frames": int(row["n_frames"]),
            "category": row["category"],
        }
    return table


def list_hopkins_sequences(subset="paper41", n_motions=None, data_dir=None):
    """Names of the sequences of `subset`, in ASCII order (MATLAB `dir` order).

    subset: "paper41" (the 41 of the paper's code), "hopkins155" (the standard 155, i.e.
    all but `dancing`) or "all" (156). n_motions: keep only sequences with that many
    motions (e.g. 2 or 3). The list comes from the package's table and needs no data.

    Parameters
    ----------
    subset : {"paper41", "hopkins155", "all"}, default="paper41"
        Which sequences.
    n_motions : int or None, default=None
        Keep only sequences with that many motions.
    data_dir : str, path or None, default=None
        Accepted for symmetry with the loaders; unused.

    Returns
    -------
    names : list of str
        Sequence names in ASCII order.

    See Also
    --------
    load_hopkins_sequence : Load one of them.

    Examples
    --------
    >>> from kssc.datasets import list_hopkins_sequences
    >>> len(list_hopkins_sequences()), len(list_hopkins_sequences("hopkins155"))
    (41, 155)
    >>> list_hopkins_sequences(n_motions=2)[:3]
    ['cars1', 'cars2', 'cars4']
    """
    if subset not in SUBSETS:
        raise ValueError(f"subset must be one of {SUBSETS}; got {subset!r}.")
    table = hopkins_metadata()
    if subset == "paper41":
        names = PAPER41
    elif subset == "hopkins155":
        names = [name for name in table if name != "dancing"]
    else:
        names = list(table)
    if n_motions is not None:
        names = [name for name in names if table[name]["n_motions"] == n_motions]
    return sorted(names)


def load_hopkins_sequence(name, data_dir=None):
    """Load one sequence as a trajectory matrix.

    Parameters
    ----------
    name : str
        Sequence name (see `list_hopkins_sequences`).
    data_dir : str, path or None, default=None
        The data folder; None: $KSSC_DATA_DIR, else `data/` at the repository root.

    Returns
    -------
    X : ndarray of shape (n_points, 2 * n_frames)
        Row p is the trajectory of point p: X[p, 2f:2f+2] = x[0:2, p, f], the normalised
        image coordinates (about [-1, 1]) in frame f. This is the transpose of the paper
        code's 2F x P matrix.
    y : ndarray of shape (n_points,)
        The ground-truth motion of each point, 1-based as stored in the file (variable
        `s`). Points are in file order; the paper code sorts them by label (stable), which
        ``np.argsort(y, kind="stable")`` reproduces.

    Raises
    ------
    DataNotFoundError
        If the sequence's file is missing from the data folder.

    See Also
    --------
    load_hopkins : Iterate over many sequences.

    Examples
    --------
    >>> from kssc.datasets import load_hopkins_sequence
    >>> X, y = load_hopkins_sequence("cars1")  # doctest: +SKIP
    >>> X.shape[0] == y.shape[0]  # doctest: +SKIP
    True
    """
    if name not in hopkins_metadata():
        raise ValueError(f"unknown Hopkins 155 sequence {name!r}.")
    path, = require_files("hopkins155", [f"{name}/{name}_truth.mat"], data_dir)
    mat = scipy.io.loadmat(path, variable_names=["x", "s"], mat_dtype=True)
    tracks = mat["x"]
    _, n_points, n_frames = tracks.shape
    X = np.ascontiguousarray(tracks[:2].transpose(1, 2, 0).reshape(n_points, 2 * n_frames),
                             dtype=np.float64)
    y = np.rint(mat["s"].ravel()).astype(np.int64)
    return X, y


def load_hopkins(subset="paper41", n_motions=None, data_dir=None):
    """Iterate over (name, X, y) for the sequences of `subset` (see `list_hopkins_sequences`).

    All files are checked to be present before the first one is loaded.

    Parameters
    ----------
    subset : {"paper41", "hopkins155", "all"}, default="paper41"
        Which sequences.
    n_motions : int or None, default=None
        Keep only sequences with that many motions.
    data_dir : str, path or None, default=None
        The data folder; None: $KSSC_DATA_DIR, else `data/` at the repository root.

    Returns
    -------
    sequences : generator of (str, ndarray, ndarray)
        The name, X and y of every sequence, as `load_hopkins_sequence` returns them.

    See Also
    --------
    list_hopkins_sequences : The names, without loading.

    Examples
    --------
    >>> from kssc.datasets import load_hopkins
    >>> for name, X, y in load_hopkins(n_motions=2):  # doctest: +SKIP
    ...     print(name, X.shape)
    """
    names = list_hopkins_sequences(subset, n_motions)
    require_files("hopkins155", [f"{name}/{name}_truth.mat" for name in names], data_dir)
    return ((name, *load_hopkins_sequence(name, data_dir)) for name in names)
