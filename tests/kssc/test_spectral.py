import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kssc import DegenerateFitWarning
from kssc.metrics import clustering_error
from kssc.spectral import _clustering as spectral
from kssc.spectral import estimate_n_clusters, spectral_clustering


def _block_graph(sizes, seed=0, noise=0.01):
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    y = np.repeat(np.arange(len(sizes)), sizes)
    W = rng.random((n, n)) * noise
    same = y[:, None] == y[None, :]
    W[same] += rng.random(same.sum())
    W = np.triu(W, 1)
    W = W + W.T
    return sp.csr_matrix(W), y


@pytest.mark.parametrize("assign_labels", ["discretize", "kmeans", "njw"])
def test_recovers_blocks(assign_labels):
    W, y = _block_graph([30, 40, 50])
    labels = spectral_clustering(W, 3, assign_labels=assign_labels, random_state=0)
    assert clustering_error(y, labels) == 0.0


@pytest.mark.parametrize("assign_labels", ["discretize", "kmeans", "njw"])
def test_isolated_points_are_left_out_and_join_the_largest_cluster(assign_labels):
    W, y = _block_graph([30, 40, 50])
    W = W.toarray()
    isolated = [3, 77]
    W[isolated, :] = W[:, isolated] = 0.0
    W[3, 3] = 1.0  # a self-loop links a point to no other
    with pytest.warns(DegenerateFitWarning, match="left out of the spectral step"):
        labels = spectral_clustering(sp.csr_matrix(W), 3, assign_labels=assign_labels,
                                     random_state=0)
    linked = np.setdiff1d(np.arange(120), isolated)
    assert clustering_error(y[linked], labels[linked]) == 0.0
    assert (labels[isolated] == labels[y == 2][0]).all()  # the 50-point cluster


def test_eigengap_estimates_number_of_blocks():
    W, _ = _block_graph([25, 25, 30, 20])
    assert estimate_n_clusters(W) == 4
    labels = spectral_clustering(W, None, random_state=0)
    assert np.unique(labels).size == 4


def test_sparse_eigensolver_path_agrees_with_dense(monkeypatch):
    W, y = _block_graph([40, 50, 60], seed=3)
    P, _ = spectral._normalized_affinity(W)
    dense_values, _ = spectral.top_eigenvectors(P, 4)
    monkeypatch.setattr(spectral, "_DENSE_LIMIT", 10)
    sparse_values, _ = spectral.top_eigenvectors(P, 4, random_state=0)
    np.testing.assert_allclose(sparse_values, dense_values, atol=1e-8)
    assert clustering_error(y, spectral_clustering(W, 3, random_state=0)) == 0.0


def test_deterministic_given_seed():
    W, _ = _block_graph([30, 30, 30], noise=0.5, seed=5)
    a = spectral_clustering(W, 3, random_state=7)
    b = spectral_clustering(W, 3, random_state=7)
    np.testing.assert_array_equal(a, b)


def test_rejects_asymmetric_and_bad_options():
    W = sp.csr_matrix(np.array([[0.0, 1.0], [0.5, 0.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        spectral_clustering(W, 2)
    with pytest.raises(ValueError, match="assign_labels"):
        spectral_clustering(W.T + W, 2, assign_labels="hdbscan")


def test_eigen_gap_at_max_clusters_warns():
    # Three blocks: with max_clusters=3 the estimate is the cap (it cannot tell whether more
    # were there); with room above it, no warning.
    block = np.ones((4, 4)) - np.eye(4)
    W = sp.block_diag([block] * 3).tocsr()
    with pytest.warns(DegenerateFitWarning, match="picked max_clusters=3, the most it may"):
        labels = spectral_clustering(W, None, max_clusters=3, random_state=0)
    assert np.unique(labels).size == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        assert np.unique(spectral_clustering(W, None, max_clusters=5, random_state=0)).size == 3


@pytest.mark.parametrize("sorted_indices", [True, False])
def test_normalized_affinity_equals_its_formula_bit_for_bit(monkeypatch, sorted_indices):
    # P = D^-1/2 (W + diag) D^-1/2 is scaled in place in row chunks; the values are those of
    # the sparse products scale @ W @ scale, entry by entry, and a signed W is covered.
    import scipy.sparse as sp

    rng = np.random.default_rng(4)
    A = sp.random(120, 120, density=0.1, random_state=4, format="csr")
    A.data -= 0.3
    W = (A + A.T).tolil()
    for i, j in [(0, 3), (5, 9), (7, 7)]:
        W[i, j] = W[j, i] = 1e-9  # below the threshold: dropped
    W = W.tocsr()
    if not sorted_indices:
        perm = rng.permutation(W.indptr[1])
        W.indices[:perm.size], W.data[:perm.size] = W.indices[perm], W.data[perm]
        W.has_sorted_indices = False
    monkeypatch.setattr(spectral, "_SCALE_ROWS", 7)
    P, degrees = spectral._normalized_affinity(W)
    V = W.copy()
    V.data[np.abs(V.data) <= 1e-6] = 0
    V.eliminate_zeros()
    abs_sum = np.asarray(abs(V).sum(axis=1)).ravel()
    signed = np.asarray(V.sum(axis=1)).ravel()
    np.testing.assert_array_equal(degrees, abs_sum + 1.0)
    scale = sp.diags(1.0 / np.sqrt(degrees))
    expected = (scale @ (V + sp.diags(0.5 * (abs_sum - signed) + 0.5)) @ scale).tocsr()
    assert abs(P - expected).max() == 0.0
    bad = W.tolil()
    bad[0, 1] = bad[0, 1] + 0.5
    with pytest.raises(ValueError, match="symmetric"):
        spectral._normalized_affinity(bad.tocsr())


def test_relative_eigengap_by_hand():
    values = np.array([0.0, 0.0, 0.1, 0.5])
    assert spectral.relative_eigengap(values, 2) == pytest.approx(1.0)  # two components
    assert spectral.relative_eigengap(values, 3) == pytest.approx(0.4 / 0.5)
    assert spectral.relative_eigengap(values, 4) == 0.0  # no fifth eigenvalue


def test_clear_blocks_choose_k_without_a_warning():
    W, _ = _block_graph([25, 25, 30, 20])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        n_clusters, values = spectral.choose_n_clusters(W, random_state=0)
    assert n_clusters == 4 and spectral.relative_eigengap(values, 4) > spectral.CLEAR_GAP


def test_a_choice_without_a_clear_gap_warns_with_its_confidence():
    """Wine (3 cultivars) as given: the largest eigen-gap silently chose 8 clusters; the
    relative one chooses 3 and says it is unsure."""
    from sklearn.datasets import load_wine

    from kssc import KSSC

    with pytest.warns(DegenerateFitWarning, match=r"the eigen-gap picked 3 clusters without a "
                      r"clear gap: relative eigen-gap 0\.60 .* below 0\.73"):
        model = KSSC(None, random_state=0).fit(load_wine().data)
    assert model.n_clusters_ == 3
    values = model.laplacian_eigenvalues_
    scale = max(values[3], spectral.SPECTRUM_FLOOR * values[-1])
    assert model.n_clusters_confidence_ == pytest.approx((values[3] - values[2]) / scale)
    assert KSSC(3, random_state=0).fit(load_wine().data).n_clusters_confidence_ is None


def test_relative_gap_chooses_the_step_the_absolute_gap_misses():
    # Three eigenvalues near 0, then a 6-fold step; the largest absolute step (0.35) comes
    # later, between two eigenvalues of the same order.
    values = np.array([0.0, 0.02, 0.05, 0.3, 0.65, 0.7])
    assert int(np.argmax(np.diff(values)) + 1) == 4
    n_clusters, confidence = spectral.n_clusters_by_relative_gap(values, 5, floor=0.0)
    assert (n_clusters, confidence) == (3, pytest.approx(0.25 / 0.3))
    assert spectral.n_clusters_by_relative_gap(values, 2, floor=0.0) == (2, pytest.approx(0.6))
    assert spectral.n_clusters_by_relative_gap(values[:2], 5)[0] == 1


def test_the_floor_keeps_a_weak_link_from_counting_as_a_step():
    # Two exact zeros, then a weak link (0.0015): over l_3 alone that step is a full 1.0.
    values = np.array([0.0, 0.0, 0.0015, 0.27, 0.28, 0.9])
    assert spectral.n_clusters_by_relative_gap(values, 5, floor=0.0) == (2, 1.0)
    n_clusters, confidence = spectral.n_clusters_by_relative_gap(values, 5)
    assert n_clusters == 3 and confidence == pytest.approx((0.27 - 0.0015) / 0.27)


@pytest.mark.parametrize("n_blocks", range(2, 9))
def test_disconnected_blocks_are_counted_despite_rounding(n_blocks):
    # c components give c zero eigenvalues, returned as rounding errors of ~1e-16 whose
    # ratios (without the floor) chose 2 clusters for 3 and 8 blocks of these sizes.
    sizes = [5 + 3 * i for i in range(n_blocks)]
    W = sp.block_diag([np.ones((n, n)) - np.eye(n) for n in sizes]).tocsr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        n_clusters, values = spectral.choose_n_clusters(W, 10, random_state=0)
    assert n_clusters == n_blocks
    assert spectral.relative_eigengap(values, n_blocks) == pytest.approx(1.0)


def test_weakly_linked_blocks_of_unequal_sizes():
    W, y = _block_graph([15, 60, 25, 40, 20], seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        assert estimate_n_clusters(W) == 5
        labels = spectral_clustering(W, None, random_state=0)
    assert clustering_error(y, labels) == 0.0




def test_the_user_guide_quotes_the_rule_and_its_threshold():
    from experiments._checkout import REPO_ROOT

    guide = " ".join((REPO_ROOT / "docs" / "user_guide.rst").read_text().split())
    assert f"max(l_{{c+1}}, {spectral.SPECTRUM_FLOOR} l_max)" in guide
    assert f"``CLEAR_GAP`` ({spectral.CLEAR_GAP})" in guide
