"""Graphs the tests build in more than one place: importable by a test module (the tests
folder is on pytest's pythonpath) and by a test's subprocess script."""

import numpy as np
import scipy.sparse as sp

from kssc.spectral._clustering import _normalized_affinity


def block_graph(n_blocks, size, seed=0, per_row=3):
    """n_blocks dense-ish random blocks of `size` points and a few edges between blocks,
    and the block labels."""
    rng = np.random.default_rng(seed)
    n = n_blocks * size
    base = np.repeat(np.arange(n_blocks) * size, per_row * size)
    rows = rng.integers(0, size, per_row * n) + base
    cols = rng.integers(0, size, per_row * n) + base
    noise = rng.integers(0, n, (2, n // 10))
    rows, cols = np.concatenate([rows, noise[0]]), np.concatenate([cols, noise[1]])
    W = sp.csr_matrix((rng.uniform(0.1, 1.0, rows.size), (rows, cols)), shape=(n, n))
    W = W + W.T
    W.setdiag(0)
    W.eliminate_zeros()
    return W, np.repeat(np.arange(n_blocks), size)


def loose_clusters_ncut():
    """The N-Cut matrix of 3 loosely joined clusters of 1,000 points (3,000 x 3,000 CSR): a
    clear gap after the third eigenvalue, the vectors beyond it in a crowded spectrum."""
    rng = np.random.RandomState(0)
    labels = np.repeat(np.arange(3), 1000)
    rows, cols = rng.randint(0, 3000, (2, 60000))
    keep = (labels[rows] == labels[cols]) | (rng.uniform(size=rows.size) < 0.02)
    W = sp.coo_matrix((np.ones(keep.sum()), (rows[keep], cols[keep])), shape=(3000, 3000))
    return _normalized_affinity(W.tocsr() + W.T.tocsr())[0]
