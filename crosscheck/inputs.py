"""The small, fixed inputs both implementations receive, and their .mat form."""

import numpy as np
import scipy.io
import scipy.sparse as sp

from kssc.neighbours import nearest_neighbors


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
