"""Which partition of the distributed self-join owns each inverted list.

A row is a query of every partition owning one of the lists it probes, so the join's work and
its query shuffle grow with the number of partitions a row's probes reach. Lists that rows
probe together are therefore kept in one partition: the lists are ordered along the Fiedler
vector of their co-probe graph (per connected component), cut into ranges of about equal
numbers of rows, and lists whose rows probe another partition more than their own move there
while the partitions stay balanced. On the scale data (10 subspaces in R^64, 2 x 10^5 points,
894 lists, 16 probes, two partitions) 21 % of the rows then probe both partitions, against all
of them with contiguous ranges of list numbers (docs/scaling.md). Where the lists go decides
only where the join's work runs: every partition's candidates are merged, so the neighbours
are the same whatever the owners.
"""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import eigsh

# Within this share above an equal split of the rows, a partition may take a list moved to it.
_BALANCE = 0.02
# Passes of moves at most (each pass moves every list that gains, then the gains are recounted).
_PASSES = 30
# Components of at most this many lists take their Fiedler vector from a dense eigensolver.
_DENSE_LISTS = 500


def list_statistics(probes, n_lists):
    """Of one block's rows: the rows per list (their own list, the first probe) and the
    co-probe counts, an (n_lists, n_lists) CSR matrix counting rows per pair (own list, another
    list they probe)."""
    counts = np.bincount(probes[:, 0], minlength=n_lists)
    own = np.repeat(probes[:, 0], probes.shape[1] - 1)
    graph = sp.csr_matrix((np.ones(own.size), (own, probes[:, 1:].ravel())),
                          shape=(n_lists, n_lists))
    return counts, graph


def equal_ranges(counts, n_parts):
    """The partition of every list when consecutive lists form `n_parts` ranges holding about
    equal numbers of rows."""
    cumulative = np.cumsum(counts)
    return np.minimum(n_parts - 1,
                      n_parts * (cumulative - counts) // max(1, int(cumulative[-1])))


def _fiedler(graph):
    """The Fiedler vector of a connected graph (its normalised adjacency's second
    eigenvector, scaled by D^-1/2), from a fixed start: the same graph, the same order."""
    degrees = np.asarray(graph.sum(axis=1)).ravel()
    scale = sp.diags(1.0 / np.sqrt(degrees))
    adjacency = scale @ graph @ scale
    if graph.shape[0] <= _DENSE_LISTS:
        second = np.linalg.eigh(adjacency.toarray())[1][:, -2]
    else:
        start = np.random.RandomState(0).uniform(-1.0, 1.0, graph.shape[0])
        values, vectors = eigsh(adjacency, k=2, which="LA", v0=start)
        second = vectors[:, np.argmin(values)]
    return second / np.sqrt(degrees)


def spectral_order(graph):
    """The lists ordered so that lists probed together are close: connected components of the
    co-probe graph one after another, largest first, each along its Fiedler vector."""
    _, component = connected_components(graph, directed=False)
    sizes = np.bincount(component)
    order = np.lexsort((np.arange(component.size), component, -sizes[component]))
    bounds = np.r_[0, np.flatnonzero(np.diff(component[order])) + 1, order.size]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b - a > 2:
            members = order[a:b]
            order[a:b] = members[np.argsort(_fiedler(graph[members][:, members]),
                                            kind="stable")]
    return order


def _cut_weight(graph, owner):
    coo = graph.tocoo()
    return float(coo.data[owner[coo.row] != owner[coo.col]].sum())


def rebalanced_moves(owner, graph, counts, n_parts):
    """`owner` improved by passes of moves: a list goes to the partition its co-probes reach
    most when that beats its own and the partition stays within `_BALANCE` of an equal
    split (or of the largest partition's rows already); the owners of the lightest cut seen."""
    owner = owner.copy()
    n_lists = owner.size
    cap = max((1.0 + _BALANCE) * counts.sum() / n_parts,
              np.bincount(owner, weights=counts, minlength=n_parts).max())
    best, best_cut = owner.copy(), _cut_weight(graph, owner)
    lists = np.arange(n_lists)
    for _ in range(_PASSES):
        reach = (graph @ sp.csr_matrix((np.ones(n_lists), (lists, owner)),
                                       shape=(n_lists, n_parts))).toarray()
        own = reach[lists, owner]
        reach[lists, owner] = -np.inf
        target = reach.argmax(axis=1)
        gain = reach[lists, target] - own
        load = np.bincount(owner, weights=counts, minlength=n_parts)
        moved = False
        for i in np.argsort(-gain, kind="stable")[:int((gain > 0).sum())]:
            if load[target[i]] + counts[i] <= cap:
                load[owner[i]] -= counts[i]
                load[target[i]] += counts[i]
                owner[i], moved = target[i], True
        if not moved:
            break
        cut = _cut_weight(graph, owner)
        if cut < best_cut:
            best, best_cut = owner.copy(), cut
    return best


def list_owners(counts, graph, n_parts):
    """The partition (0 to n_parts - 1) of every list: `spectral_order` cut into ranges of
    about equal rows (`equal_ranges`), then `rebalanced_moves`. `graph`: the co-probe counts
    of all rows (`list_statistics`, summed), made symmetric here."""
    if n_parts == 1:
        return np.zeros(counts.size, dtype=np.int64)
    graph = sp.csr_matrix(graph + graph.T)
    graph.setdiag(0)
    graph.eliminate_zeros()
    order = spectral_order(graph)
    owner = np.empty(counts.size, dtype=np.int64)
    owner[order] = equal_ranges(counts[order], n_parts)
    return rebalanced_moves(owner, graph, counts, n_parts)
