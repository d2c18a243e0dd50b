"""The inputs both implementations receive (synthetic and real), and their .mat form."""

import numpy as np
import scipy.io
import scipy.sparse as sp

from kssc.datasets import load_hopkins_sequence, make_intersection_data, make_tir
from kssc.datasets.cached import tir_spectra
from kssc.neighbors import nearest_neighbors


def union_of_subspaces(n_subspaces=3, subspace_dim=4, n_per_subspace=40, ambient_dim=30,
                       noise=0.01, seed=0):
    """Unit-norm points (n, ambient_dim) near random subspaces, and their labels 0..n_subspaces-1.

    Gaussian coefficients on a random orthonormal basis per subspace plus Gaussian noise of
    standard deviation `noise` per coordinate (the noise keeps greedy pursuits from
    stopping early, which the authors' GFS code does not handle).
    """
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(n_subspaces):
        basis, _ = np.linalg.qr(rng.standard_normal((ambient_dim, subspace_dim)))
        blocks.append(rng.standard_normal((n_per_subspace, subspace_dim)) @ basis.T)
    X = np.vstack(blocks) + noise * rng.standard_normal((n_subspaces * n_per_subspace, ambient_dim))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.repeat(np.arange(n_subspaces), n_per_subspace)


def kdtree_stand_in(X_unit, n_neighbors):
    """The neighbour table VLFeat's `vl_kdtreequery(..., 'NUMNEIGHBORS', k + 1)` returns.

    Exact neighbours (our `nearest_neighbors`), as a (k + 1, n) array of 1-based column
    indices with the point itself in the first row, as a kd-tree query of the points
    against themselves gives it.
    """
    indices, _ = nearest_neighbors(X_unit, n_neighbors, normalize=False)
    table = np.hstack([np.arange(len(X_unit))[:, None], indices]) + 1
    return table.T.astype(np.float64)


def random_labelings(y, n_labelings, seed=0):
    """Label vectors (n, n_labelings) for the metric check: y with a growing share reassigned."""
    rng = np.random.default_rng(seed)
    n_groups = int(y.max()) + 1
    columns = []
    for share in np.linspace(0.0, 1.0, n_labelings):
        labels = rng.permutation(n_groups)[y]
        flip = rng.random(y.size) < share
        labels[flip] = rng.integers(0, n_groups, flip.sum())
        columns.append(labels)
    return np.stack(columns, axis=1)


def write_inputs(path, X_unit, y, **fields):
    """Save the points (as columns, the authors' D x N convention), 1-based labels and `fields`.

    Integer-valued arrays are stored as doubles (MATLAB indexes with doubles); sparse
    matrices stay sparse.
    """
    contents = {"X": np.ascontiguousarray(X_unit.T), "truth": (np.asarray(y) + 1.0)[:, None]}
    for name, value in fields.items():
        contents[name] = value if sp.issparse(value) else np.asarray(value, dtype=np.float64)
    scipy.io.savemat(path, contents, do_compression=False, oned_as="column")
    return path


# The solver settings of the check (the paper code's where they exist, neighbour counts small
# enough for the smallest input).
SETTINGS = {"lambda": 0.1, "kssc_k": 8, "gfs_k": 6, "gsc_k": 8, "gsc_dim": 5, "tsc_q": 8,
            "sssc_m": 25, "n_labelings": 12, "seed": 0}

# The inputs of `python -m crosscheck`: one easy control and four where the methods err.
# Sizes keep one Octave session per input to a few minutes on a loaded 2-core machine.
INPUTS = {
    "clean": {"kind": "subspaces", "n_subspaces": 3, "subspace_dim": 4, "n_per_subspace": 40,
              "ambient_dim": 30, "noise": 0.01},
    "noisy": {"kind": "subspaces", "n_subspaces": 3, "subspace_dim": 4, "n_per_subspace": 40,
              "ambient_dim": 30, "noise": 0.3},
    "intersecting": {"kind": "intersection", "t": 4, "subspace_dim": 5, "n_per_subspace": 60,
                     "ambient_dim": 30},
    "tir": {"kind": "tir", "n_subspaces": 5, "n_spectra": 5, "n_per_subspace": 20,
            "noise": 0.05},
    "hopkins": {"kind": "hopkins", "sequence": "cars2_06"},
}


def make_input(spec, seed=0, data_dir=None):
    """Unit-norm points (n, D) and 0-based labels of one entry of INPUTS.

    "subspaces": `union_of_subspaces`; "intersection": two subspaces sharing `t`
    dimensions (`kssc.datasets.make_intersection_data`); "tir": the semi-synthetic TIR data
    of the paper (`make_tir` on the real library, noise added before normalising);
    "hopkins": one real Hopkins 155 sequence. The real data are read from `data_dir`
    (default $KSSC_DATA_DIR); a missing file raises the loaders' DataNotFoundError.
    """
    params = {key: value for key, value in spec.items() if key != "kind"}
    kind = spec.get("kind")
    if kind == "subspaces":
        return union_of_subspaces(seed=seed, **params)
    if kind == "intersection":
        X, y = make_intersection_data(random_state=seed, **params)
    elif kind == "tir":
        X, y, _ = make_tir(tir_spectra(data_dir), random_state=seed, **params)
    elif kind == "hopkins":
        X, y = load_hopkins_sequence(params["sequence"], data_dir=data_dir)
        y = np.unique(y, return_inverse=True)[1]
    else:
        raise ValueError(f"unknown input kind {kind!r}; expected one of 'subspaces', "
                         "'intersection', 'tir', 'hopkins'.")
    X = np.asarray(X, dtype=np.float64)
    return X / np.linalg.norm(X, axis=1, keepdims=True), np.asarray(y, dtype=np.int64)
