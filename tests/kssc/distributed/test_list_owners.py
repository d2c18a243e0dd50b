"""Which partition of the split self-join owns each list (kssc.distributed._list_owners)."""

import numpy as np
import scipy.sparse as sp

from kssc.datasets import make_union_of_subspaces
from kssc.distributed._list_owners import (
    _BALANCE,
    equal_ranges,
    list_owners,
    list_statistics,
    spectral_order,
)
from kssc.neighbors._ann import train_centroids
from kssc.neighbors._centroids import nearest_lists
from kssc.utils._validation import normalize_rows


def test_statistics_count_own_lists_and_pairs_of_own_and_probed_lists():
    probes = np.array([[0, 2, 1], [0, 2, 3], [3, 0, 1]])
    counts, graph = list_statistics(probes, 4)
    np.testing.assert_array_equal(counts, [2, 0, 0, 1])
    expected = np.zeros((4, 4))
    expected[0, 2], expected[0, 1], expected[0, 3] = 2, 1, 1
    expected[3, 0], expected[3, 1] = 1, 1
    np.testing.assert_array_equal(graph.toarray(), expected)


def test_equal_ranges_cut_consecutive_lists_at_equal_rows():
    np.testing.assert_array_equal(equal_ranges(np.array([3, 1, 2, 2, 4]), 2), [0, 0, 0, 1, 1])


def _two_cliques_shuffled(rng, size=6):
    """Two cliques of `size` lists, each list's number drawn at random (so that consecutive
    numbers mix the cliques), joined by one weak edge."""
    block = np.ones((size, size)) - np.eye(size)
    graph = sp.block_diag([block, block]).tolil()
    graph[0, size] = graph[size, 0] = 0.1
    perm = rng.permutation(2 * size)
    graph = sp.csr_matrix(graph)[perm][:, perm]
    clique = (perm >= size).astype(int)
    return graph, clique


def test_lists_probed_together_share_a_partition_and_partitions_are_balanced():
    rng = np.random.RandomState(0)
    graph, clique = _two_cliques_shuffled(rng)
    counts = np.full(clique.size, 10)
    owner = list_owners(counts, sp.triu(graph).tocsr(), 2)  # made symmetric inside
    # Each clique whole in one partition, the two in different ones.
    assert len(set(owner[clique == 0])) == len(set(owner[clique == 1])) == 1
    assert owner[clique == 0][0] != owner[clique == 1][0]
    # Consecutive list numbers would have split both cliques.
    contiguous = equal_ranges(counts, 2)
    assert len(set(contiguous[clique == 0])) == 2
    np.testing.assert_array_equal(list_owners(counts, sp.triu(graph).tocsr(), 2), owner)


def test_a_graph_without_edges_and_one_partition():
    counts = np.array([5, 5, 5, 5])
    empty = sp.csr_matrix((4, 4))
    np.testing.assert_array_equal(np.sort(spectral_order(empty)), np.arange(4))
    owner = list_owners(counts, empty, 2)
    np.testing.assert_array_equal(np.bincount(owner, weights=counts), [10, 10])
    np.testing.assert_array_equal(list_owners(counts, empty, 1), 0)


def test_on_a_union_of_subspaces_fewer_rows_probe_several_partitions():
    # Four circles in R^30, 40 lists, 3 probes: with consecutive list numbers most rows
    # probe both partitions; with lists probed together kept in one, almost none do.
    X, _ = make_union_of_subspaces(6000, ambient_dim=30, n_subspaces=4, subspace_dims=[2],
                                   noise=0.01, random_state=0)
    X32 = normalize_rows(X)[0].astype(np.float32)
    centroids = train_centroids(X32, 40, "euclidean", np.random.RandomState(0))
    probes = nearest_lists(X32, centroids, "euclidean", 3)
    stats = [list_statistics(probes[rows], centroids.shape[0])
             for rows in np.array_split(np.arange(X.shape[0]), 3)]
    counts, graph = sum(c for c, _ in stats), sum(g for _, g in stats)
    owner = list_owners(counts, graph, 2)

    def spread(owner):
        parts = owner[probes]
        return (parts != parts[:, :1]).any(axis=1).mean()

    assert spread(equal_ranges(counts, 2)) > 0.5
    assert spread(owner) < 0.05
    load = np.bincount(owner, weights=counts)
    assert load.max() <= max((1 + _BALANCE) * counts.sum() / 2,
                             np.bincount(equal_ranges(counts, 2), weights=counts).max())
