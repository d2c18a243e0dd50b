"""kssc.spectral.affinity: Z from coefficients, W from Z, and the one definition of an isolated
point."""

import importlib.util
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kssc import DegenerateFitWarning
from kssc._base import SelfExpressiveClustering
from kssc.spectral.affinity import coefficients_to_sparse, symmetric_affinity
from kssc.spectral.isolation import ISOLATION_THRESHOLD, isolated_points


def _two_blocks(size=10, seed=0):
    """W of two dense blocks of `size` points, entries in [0.5, 1)."""
    rng = np.random.default_rng(seed)
    W = np.zeros((2 * size, 2 * size))
    for start in (0, size):
        block = 0.5 + 0.5 * rng.random((size, size))
        W[start:start + size, start:start + size] = np.triu(block, 1) + np.triu(block, 1).T
    return W


def test_coefficients_to_sparse_places_sums_and_skips_absent_entries():
    indices = np.array([[2, 0], [1, -1], [0, 0]])
    coef = np.array([[3.0, 1.0], [2.0, 5.0], [1.0, 1.5]])
    expected = np.array([[1.0, 0.0, 3.0], [0.0, 2.0, 0.0], [2.5, 0.0, 0.0]])
    np.testing.assert_array_equal(coefficients_to_sparse(indices, coef, 3).toarray(), expected)
    ones = coefficients_to_sparse(np.array([[1], [0], [-1]]), 1.0, 3).toarray()
    np.testing.assert_array_equal(ones, [[0, 1, 0], [1, 0, 0], [0, 0, 0]])


def test_isolated_means_no_affinity_above_the_threshold_to_another_point():
    W = _two_blocks()
    W[0, :] = W[:, 0] = 0.0
    W[0, 5] = W[5, 0] = 1e-9  # below the threshold: no link
    W[1, :] = W[:, 1] = 0.0
    W[1, 1] = 1.0  # a self-loop links a point to no other
    W[2, :] = W[:, 2] = 0.0
    W[2, 7] = W[7, 2] = 10 * ISOLATION_THRESHOLD  # above it: linked
    assert isolated_points(sp.csr_matrix(W)).tolist() == [0, 1]
    # A row block whose first row is point 1: its diagonal is column 1 + i.
    assert isolated_points(sp.csr_matrix(W[1:4]), start=1).tolist() == [0]


class _GivenZ(SelfExpressiveClustering):
    """A fit whose representation is the matrix it was given."""

    def __init__(self, Z, n_clusters=None, *, assign_labels="discretize", max_clusters=20,
                 random_state=None, verbose=0):
        self.Z = Z
        self.n_clusters = n_clusters
        self.assign_labels = assign_labels
        self.max_clusters = max_clusters
        self.random_state = random_state
        self.verbose = verbose

    def _representation(self, X, random_state):
        return self.Z, {}


def test_a_point_whose_only_affinity_is_tiny_is_reported_and_left_out():
    W = _two_blocks(size=10)
    W[0, :] = W[:, 0] = 0.0
    W[0, 4] = 1e-9
    Z = sp.csr_matrix(np.triu(W))
    X = np.random.default_rng(0).standard_normal((20, 3))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        labels = _GivenZ(Z, 2, random_state=0).fit(X).labels_
    messages = [str(w.message) for w in record if issubclass(w.category, DegenerateFitWarning)]
    # One warning for the one cause, saying what happens to the point.
    isolated = [m for m in messages if "are isolated" in m]
    assert len(isolated) == 1
    assert "1 of 20 point(s) are isolated" in isolated[0] and "rows [0]" in isolated[0]
    assert "left out of the spectral step" in isolated[0]
    # Left out, it takes the largest cluster's label: the 10-point block, not its own 9.
    assert labels[0] == labels[10] and len(set(labels[1:10]) & set(labels[10:])) == 0


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="needs the optional extra: pip install '.[distributed]'")
def test_distributed_affinity_blocks_isolate_the_same_points():
    from kssc.distributed import _spectral as kd_spectral

    W = _two_blocks(size=6)
    W[0, :] = W[:, 0] = 0.0
    W[0, 3] = 1e-9
    W[8, :] = W[:, 8] = 0.0
    Z = sp.csr_matrix(np.triu(W))
    bounds = np.array([0, 5, 12])
    spans = [(0, 5), (5, 12)]
    pieces = [kd_spectral.transpose_pieces(Z[a:b], a, bounds) for a, b in spans]
    found = []
    for c, (a, b) in enumerate(spans):
        _, _, isolated = kd_spectral.affinity_block(Z[a:b], a, b, *[p[c] for p in pieces])
        found += (isolated + a).tolist()
    assert found == isolated_points(symmetric_affinity(Z)).tolist() == [0, 8]
