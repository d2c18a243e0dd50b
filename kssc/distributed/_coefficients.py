"""Distributed coefficient step: each group of blocks gathers its neighbours' rows, then codes
its points.

Consecutive blocks form one group per worker thread. The neighbour rows a group needs are
requested from the blocks outside it that hold them (the second shuffle: at most n_g * k rows
for a group of n_g points); the group then calls the single-machine kernel
`kssc.coding.representation.kssc_coefficients` on its own rows followed by the gathered
ones, with the neighbour indices re-indexed into that local array. With lam_mode="global"
the penalty's scale, the smallest positive lambda_max over all points, is reduced over the
groups first (each group's from its local array), so every point is coded with the single
machine's weight.
"""

import numpy as np
from joblib import cpu_count

from .._predict import global_weight
from ..coding.representation import kssc_coefficients, numba_threads
from ._blocks import RowBlocks, concatenate, part, placements, rows_between, take_rows


def local_problem(own, start, indices, *gathered):
    """A group's own unit rows followed by the gathered ones, and its neighbour indices
    re-indexed into them. `gathered` are (ids, rows) pairs from the owner blocks in block
    order, each's ids ascending and drawn from `indices` (`_request`). The re-indexing reads
    a table with a place for every row up to the largest index (8 bytes a row: at 10^6 rows
    0.2 s, where a search of the ids took 1.3 s)."""
    ids = np.concatenate([np.empty(0, dtype=np.int64)] + [g[0] for g in gathered])
    rows = np.concatenate([own] + [g[1] for g in gathered])
    n_own = own.shape[0]
    place = np.empty(max(int(indices.max(initial=0)) + 1, start + n_own), dtype=np.int64)
    place[start:start + n_own] = np.arange(n_own)
    place[ids] = n_own + np.arange(ids.size)
    return rows, place[indices]


def block_scale(problem, positive):
    """The smallest positive lambda_max of the group's points (1 when none is positive, as
    `kssc.coding.representation.penalty`; the rows are unit, so every lambda_max is <= 1)."""
    rows, local = problem
    return global_weight(rows, local, 1.0, positive)


def solve_block(problem, options, weight=None, *lists):
    """Code a group's points over their neighbours: (coef, n_iter, points not converged).
    The group's own rows come first in the local array, so kssc_coefficients codes them
    alone; `weight`, the global penalty's weight, fixes every point's. `lists`: the own
    inverted list of every row of the group's blocks (the IVF's), in which order the points
    are coded, as `KSSC` codes them (points of one list share neighbours, whose rows then
    stay in cache); none: as they come. numba's threads: the worker's share of the cores
    (`kssc.distributed._worker_tuning`)."""
    rows, local = problem
    lam_rows = None if weight is None else np.full(local.shape[0], weight)
    order = np.argsort(np.concatenate(lists), kind="stable") if lists else None
    with numba_threads(cpu_count()):
        coef, n_iter, converged = kssc_coefficients(rows, local, **options, lam_rows=lam_rows,
                                                    order=order)
    return coef, n_iter, int((~converged).sum())


def _request(indices, bounds, start, stop):
    """Neighbour ids a group (rows start..stop-1) needs from every block, ascending, its own
    rows excluded: by a mask over all rows, not a sort of the n_g * k ids."""
    needed = np.zeros(bounds[-1], dtype=bool)
    needed[indices.ravel()] = True
    needed[start:stop] = False
    return [np.flatnonzero(needed[a:b]) + a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _with_ids(block, ids, start):
    return ids, take_rows(block, ids, start)


def _bytes(pair):
    return pair[0].nbytes + pair[1].nbytes


def coefficient_groups(bounds, k, n_threads):
    """The blocks of `bounds` in consecutive groups, one per worker thread, when no group's
    problem can then be larger than a block's alone (its rows and their k neighbours', at
    most all n rows); else one group per block."""
    sizes, n = np.diff(bounds), int(bounds[-1])
    groups = np.array_split(np.arange(sizes.size), min(sizes.size, max(1, n_threads)))
    largest = min(n, int(sizes.max()) * (k + 1))
    if any(min(n, int(sizes[g].sum()) * (k + 1)) > largest for g in groups):
        return [np.array([b]) for b in range(sizes.size)]
    return groups


def coefficients(client, U, indices, k, options, lists=None):
    """Coefficients of every point: (coef RowBlocks, n_iter RowBlocks, points not converged,
    bytes of neighbour rows moved between blocks). `lists`: RowBlocks of every row's own
    inverted list (the IVF search's), the order in which each group codes its points.

    The blocks are coded in `coefficient_groups`, each on its worker thread (`placements`):
    where points are in random order each block's problem holds nearly every row, and a
    group of blocks gathers the rows outside it once, not once per block (at 2 blocks per
    worker, half the bytes moved and copied)."""
    spans = U.spans()
    groups = coefficient_groups(U.bounds, k, sum(client.nthreads().values()))
    homes = placements(client, len(groups))
    problems, moved = [], []
    for group, home in zip(groups, homes, strict=True):
        a, b = int(group[0]), int(group[-1]) + 1
        start, stop = int(U.bounds[a]), int(U.bounds[b])
        own, near = U.futures[a], indices.futures[a]
        if b - a > 1:
            own = client.submit(concatenate, *U.futures[a:b], **home)
            near = client.submit(concatenate, *indices.futures[a:b], **home)
        wanted = client.submit(_request, near, U.bounds, start, stop, **home)
        gathered = [client.submit(_with_ids, U.futures[c], part(client, wanted, c), c_start)
                    for c, (c_start, _) in enumerate(spans) if not a <= c < b]
        moved += [client.submit(_bytes, g) for g in gathered]
        problems.append(client.submit(local_problem, own, start, near, *gathered, **home))
    weight = None
    if options["lam_mode"] == "global":
        scales = client.gather([client.submit(block_scale, p, options["positive"])
                                for p in problems])
        weight = options["lam"] * min(scales)
    coef, n_iter, missed = [], [], []
    for problem, group, home in zip(problems, groups, homes, strict=True):
        own_lists = [] if lists is None else lists.futures[group[0]:group[-1] + 1]
        solved = client.submit(solve_block, problem, options, weight, *own_lists, **home)
        missed.append(part(client, solved, 2))
        origin = U.bounds[group[0]]
        for c in group:
            lo, hi = int(U.bounds[c] - origin), int(U.bounds[c + 1] - origin)
            coef.append(client.submit(rows_between, part(client, solved, 0), lo, hi))
            n_iter.append(client.submit(rows_between, part(client, solved, 1), lo, hi))
    return (RowBlocks(coef, U.bounds), RowBlocks(n_iter, U.bounds), sum(client.gather(missed)),
            sum(client.gather(moved)))
