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

from .._predict import global_weight
from ..coding.representation import kssc_coefficients
from ._blocks import RowBlocks, part, split_by_owner, take_rows


def local_problem(own, start, indices, *gathered):
    """The block's own unit rows followed by the gathered ones, and its neighbour indices
    re-indexed into them. `gathered` are (ids, rows) pairs from the owner blocks."""
    ids = np.concatenate([np.arange(start, start + own.shape[0])] + [g[0] for g in gathered])
    rows = np.concatenate([own] + [g[1] for g in gathered])
    order = np.argsort(ids, kind="stable")
    return rows, order[np.searchsorted(ids, indices, sorter=order)]


def block_scale(problem, positive):
    """The smallest positive lambda_max of the block's points (1 when none is positive, as
    `kssc.coding.representation.penalty`; the rows are unit, so every lambda_max is <= 1)."""
    rows, local = problem
    return global_weight(rows, local, 1.0, positive)


def solve_block(problem, options, weight=None):
    """Code the block's points over their neighbours: (coef, n_iter, points not converged).
    The block's own rows come first in the local array, so kssc_coefficients codes them
    alone; `weight`, the global penalty's weight, fixes every point's."""
    rows, local = problem
    lam_rows = None if weight is None else np.full(local.shape[0], weight)
    coef, n_iter, converged = kssc_coefficients(rows, local, **options, lam_rows=lam_rows)
    return coef, n_iter, int((~converged).sum())


def _request(indices, bounds, start, stop):
    """Neighbour ids a block needs from every block (its own rows excluded)."""
    ids = indices.ravel()
    return split_by_owner(ids[(ids < start) | (ids >= stop)], bounds)


def _with_ids(block, ids, start):
    return ids, take_rows(block, ids, start)


def _bytes(pair):
    return pair[0].nbytes + pair[1].nbytes


def coefficients(client, U, indices, options):
    """Coefficients of every point: (coef RowBlocks, n_iter RowBlocks, points not converged,
    bytes of neighbour rows moved between blocks)."""
    problems, moved = [], []
    spans = U.spans()
    for b, (start, stop) in enumerate(spans):
        wanted = client.submit(_request, indices.futures[b], U.bounds, start, stop)
        gathered = []
        for c, (c_start, _) in enumerate(spans):
            if c != b:
                gathered.append(client.submit(_with_ids, U.futures[c], part(client, wanted, c),
                                              c_start))
        moved += [client.submit(_bytes, g) for g in gathered]
        problems.append(client.submit(local_problem, U.futures[b], start, indices.futures[b],
                                      *gathered))
    weight = None
    if options["lam_mode"] == "global":
        scales = client.gather([client.submit(block_scale, p, options["positive"])
                                for p in problems])
        weight = options["lam"] * min(scales)
    coef, n_iter, missed = [], [], []
    for problem in problems:
        solved = client.submit(solve_block, problem, options, weight)
        coef.append(part(client, solved, 0))
        n_iter.append(part(client, solved, 1))
        missed.append(part(client, solved, 2))
    return (RowBlocks(coef, U.bounds), RowBlocks(n_iter, U.bounds), sum(client.gather(missed)),
            sum(client.gather(moved)))
