"""Distributed coefficient step: each block gathers its neighbours' rows, then codes its points.

The neighbour rows a block needs are requested from the blocks that hold them (the second
shuffle: at most n_b * k rows for a block of n_b points); the block then calls the
single-machine kernel `kssc.coding.representation.kssc_coefficients` on its own rows followed by
the gathered ones, with the neighbour indices re-indexed into that local array. With
lam_mode="global" the penalty's scale, the smallest positive lambda_max over all points, is
reduced over the blocks first (each block's from its local array), so every block codes
with the single machine's weight.
"""

import numpy as np
from joblib import cpu_count

from .._predict import global_weight
from ..coding.representation import kssc_coefficients, numba_threads
from ._blocks import RowBlocks, part, placements, take_rows


def local_problem(own, start, indices, *gathered):
    """The block's own unit rows followed by the gathered ones, and its neighbour indices
    re-indexed into them. `gathered` are (ids, rows) pairs from the owner blocks in block
    order, each's ids ascending (`_request`), so all their ids are ascending."""
    ids = np.concatenate([np.empty(0, dtype=np.int64)] + [g[0] for g in gathered])
    rows = np.concatenate([own] + [g[1] for g in gathered])
    inside = (indices >= start) & (indices < start + own.shape[0])
    return rows, np.where(inside, indices - start,
                          own.shape[0] + np.searchsorted(ids, indices))


def block_scale(problem, positive):
    """The smallest positive lambda_max of the block's points (1 when none is positive, as
    `kssc.coding.representation.penalty`; the rows are unit, so every lambda_max is <= 1)."""
    rows, local = problem
    return global_weight(rows, local, 1.0, positive)


def solve_block(problem, options, weight=None):
    """Code the block's points over their neighbours: (coef, n_iter, points not converged).
    The block's own rows come first in the local array, so kssc_coefficients codes them
    alone; `weight`, the global penalty's weight, fixes every point's. numba's threads: the
    worker's share of the cores (`kssc.distributed._worker_tuning`)."""
    rows, local = problem
    lam_rows = None if weight is None else np.full(local.shape[0], weight)
    with numba_threads(cpu_count()):
        coef, n_iter, converged = kssc_coefficients(rows, local, **options, lam_rows=lam_rows)
    return coef, n_iter, int((~converged).sum())


def _request(indices, bounds, start, stop):
    """Neighbour ids a block needs from every block, ascending (its own rows excluded): a
    mask over all rows, not a sort of the n_b * k ids."""
    needed = np.zeros(bounds[-1], dtype=bool)
    needed[indices.ravel()] = True
    needed[start:stop] = False
    return [np.flatnonzero(needed[a:b]) + a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _with_ids(block, ids, start):
    return ids, take_rows(block, ids, start)


def _bytes(pair):
    return pair[0].nbytes + pair[1].nbytes


def coefficients(client, U, indices, options):
    """Coefficients of every point: (coef RowBlocks, n_iter RowBlocks, points not converged,
    bytes of neighbour rows moved between blocks)."""
    problems, moved = [], []
    spans = U.spans()
    homes = placements(client, len(spans))  # block b's problem and solve
    for b, (start, stop) in enumerate(spans):
        wanted = client.submit(_request, indices.futures[b], U.bounds, start, stop)
        gathered = []
        for c, (c_start, _) in enumerate(spans):
            if c != b:
                gathered.append(client.submit(_with_ids, U.futures[c], part(client, wanted, c),
                                              c_start))
        moved += [client.submit(_bytes, g) for g in gathered]
        problems.append(client.submit(local_problem, U.futures[b], start, indices.futures[b],
                                      *gathered, **homes[b]))
    weight = None
    if options["lam_mode"] == "global":
        scales = client.gather([client.submit(block_scale, p, options["positive"])
                                for p in problems])
        weight = options["lam"] * min(scales)
    coef, n_iter, missed = [], [], []
    for problem, home in zip(problems, homes, strict=True):
        solved = client.submit(solve_block, problem, options, weight, **home)
        coef.append(part(client, solved, 0))
        n_iter.append(part(client, solved, 1))
        missed.append(part(client, solved, 2))
    return (RowBlocks(coef, U.bounds), RowBlocks(n_iter, U.bounds), sum(client.gather(missed)),
            sum(client.gather(moved)))
