"""LOBPCG's start on row blocks from a coarse graph: `kssc.spectral._multilevel` block by block.

Each row block aggregates the graph of its own rows (one `_multilevel.aggregate` step on the
block's diagonal part), so the prolongation Q = D^1/2 A diag(mass)^-1/2 is block diagonal and
every point's column of Q is one number q_i at its aggregate's index. The coarse matrix
Q^T P Q is summed over the blocks from their rows of P and the (aggregate, q) of their halo
rows, the exchange a product with P moves; the client solves it (an aggregate per row, not
a point) to a residual far below LOBPCG's tolerance (`kssc.spectral._clustering.coarse_top`,
as on one machine) and sends each block its aggregates' rows of the coarse eigenvectors.
"""

import numpy as np

from ..spectral import _multilevel
from ..spectral._clustering import coarse_top
from . import _eigen
from ._blocks import part

_THRESHOLD = 1e-6


def local_aggregation(W, start, stop, degrees):
    """This block's aggregate of each row (local numbers), q_i and the number of aggregates."""
    graph = W[:, start:stop].tocsr()
    graph.data[np.abs(graph.data) <= _THRESHOLD] = 0.0
    graph.setdiag(0.0)
    graph.eliminate_zeros()
    members, n_aggregates = _multilevel.aggregate(graph)
    mass = np.bincount(members, weights=degrees, minlength=n_aggregates)
    return members, np.sqrt(degrees / mass[members]), n_aggregates


def labelled(members, q, offset):
    """(global aggregate, q) of each row as an n_b x 2 array, for the halo exchange."""
    return np.column_stack([members + offset, q])


def coarse_rows(P_block, own, n_coarse, *halo):
    """This block's part of Q^T P Q (n_coarse x n_coarse, sparse)."""
    pieces = np.concatenate(halo)
    return _multilevel.restrict(P_block, own[:, 0].astype(np.int64), n_coarse, own[:, 1],
                                columns=(pieces[:, 0].astype(np.int64), pieces[:, 1]))


def prolong(own, vectors, offset, dtype):
    """This block's rows of Q V in `dtype`, from V's rows of the block's aggregates (from
    `offset` on)."""
    return (own[:, 1:2] * vectors[own[:, 0].astype(int) - offset]).astype(dtype, copy=False)


def coarse_start(client, operator, W, degrees, width, random_state, dtype=np.float64,
                 tol=0.0):
    """Row blocks (futures) of an orthonormal n x width start in `dtype` (module docstring),
    the coarse eigenvectors to ARPACK's relative tolerance `tol` (0: machine precision)."""
    found = [client.submit(local_aggregation, w, a, b, d)
             for w, (a, b), d in zip(W.futures, W.spans(), degrees.futures, strict=True)]
    sizes = client.gather([part(client, f, 2) for f in found])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n_coarse = int(offsets[-1])
    own = [client.submit(labelled, part(client, f, 0), part(client, f, 1), int(offset))
           for f, offset in zip(found, offsets[:-1], strict=True)]
    rows = [client.submit(coarse_rows, block, own[b], n_coarse,
                          *[client.submit(_eigen.take, own[c], local) for c, local in pieces])
            for b, (block, pieces) in enumerate(zip(operator.blocks, operator.halo,
                                                    strict=True))]
    coarse = sum(client.gather(rows))
    coarse = ((coarse + coarse.T) / 2.0).tocsr()
    vectors = coarse_top(coarse, min(width, n_coarse - 1), random_state, tol)[1]
    # Each task carries its block's rows of V: unlike scattered data, which the scheduler
    # forgets once the client drops it, a task's inputs let it recompute a lost block.
    return [client.submit(prolong, o, vectors[a:b], a, dtype)
            for o, a, b in zip(own, offsets[:-1], offsets[1:], strict=True)]
