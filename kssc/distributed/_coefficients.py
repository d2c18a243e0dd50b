"""Distributed coefficient step: each group of points gathers its neighbours' rows, then codes
its points.

With the self-join split by list, a group is a partition's points: the rows of its lists,
which it holds from the join, and whose neighbours are nearly all among them (lists that rows
probe together share a partition); their codes go back to their blocks. Otherwise
consecutive blocks form one group per worker thread (points in random order: a group's
neighbours are nearly all rows). The neighbour rows a group needs are
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
from ._neighbors import queries_between


def local_problem(own, own_ids, indices, *gathered):
    """A group's own unit rows followed by the gathered ones, and its neighbour indices
    re-indexed into them. `own_ids`: the own rows' ids, a slice (consecutive blocks) or an
    array (a partition's points); `gathered` are (ids, rows) pairs from the owner blocks in
    block order, each's ids ascending and drawn from `indices` (`_request`). The re-indexing
    reads a table with a place for every row up to the largest index (8 bytes a row: at 10^6
    rows 0.2 s, where a search of the ids took 1.3 s)."""
    ids = np.concatenate([np.empty(0, dtype=np.int64)] + [g[0] for g in gathered])
    rows = np.concatenate([own] + [g[1] for g in gathered])
    n_own = own.shape[0]
    end = own_ids.stop if isinstance(own_ids, slice) else int(own_ids.max(initial=-1)) + 1
    place = np.empty(max(int(indices.max(initial=0)) + 1, end), dtype=np.int64)
    place[own_ids] = np.arange(n_own)
    place[ids] = n_own + np.arange(ids.size)
    return rows, place[indices]


def partition_problem(database, indices, *gathered):
    """`local_problem` of a partition of the split self-join: its points are its database's
    rows (those of its lists, `kssc.distributed._neighbors.database_part`)."""
    return local_problem(database[1], database[0], indices, *gathered)


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
    if not local.shape[0]:  # a partition whose lists hold no point (duplicated points)
        return np.zeros(local.shape), np.zeros(0, dtype=np.int64), 0
    lam_rows = None if weight is None else np.full(local.shape[0], weight)
    order = np.argsort(np.concatenate(lists), kind="stable") if lists else None
    with numba_threads(cpu_count()):
        coef, n_iter, converged = kssc_coefficients(rows, local, **options, lam_rows=lam_rows,
                                                    order=order)
    return coef, n_iter, int((~converged).sum())


def _request(indices, bounds, own_ids):
    """Neighbour ids a group (its rows `own_ids`: a slice or ids) needs from every block,
    ascending, its own rows excluded: by a mask over all rows, not a sort of the n_g * k
    ids."""
    needed = np.zeros(bounds[-1], dtype=bool)
    needed[indices.ravel()] = True
    needed[own_ids] = False
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


def _block_problems(client, U, indices, k, lists):
    """The problems of `coefficient_groups`, each on its worker thread (`placements`): where
    points are in random order each block's problem holds nearly every row, and a group of
    blocks gathers the rows outside it once, not once per block (at 2 blocks per worker, half
    the bytes moved and copied). Returns (groups, homes, problems, their lists, bytes
    futures)."""
    spans = U.spans()
    groups = coefficient_groups(U.bounds, k, sum(client.nthreads().values()))
    homes = placements(client, len(groups))
    problems, orders, moved = [], [], []
    for group, home in zip(groups, homes, strict=True):
        a, b = int(group[0]), int(group[-1]) + 1
        start, stop = int(U.bounds[a]), int(U.bounds[b])
        own, near = U.futures[a], indices.futures[a]
        if b - a > 1:
            own = client.submit(concatenate, *U.futures[a:b], **home)
            near = client.submit(concatenate, *indices.futures[a:b], **home)
        wanted = client.submit(_request, near, U.bounds, slice(start, stop), **home)
        gathered = [client.submit(_with_ids, U.futures[c], part(client, wanted, c), c_start)
                    for c, (c_start, _) in enumerate(spans) if not a <= c < b]
        moved += [client.submit(_bytes, g) for g in gathered]
        problems.append(client.submit(local_problem, own, slice(start, stop), near, *gathered,
                                      **home))
        orders.append([] if lists is None else lists.futures[a:b])
    return groups, homes, problems, orders, moved


def points_between(database, start, stop):
    """A partition's points (its database's ids, ascending) among the rows start..stop-1."""
    ids = database[0]
    return ids[np.searchsorted(ids, start):np.searchsorted(ids, stop)]


def placed_rows(start, n_rows, *pieces):
    """Rows start..start+n_rows-1 from (ids, values) pieces that hold each of them once."""
    out = np.empty((n_rows, *pieces[0][1].shape[1:]), dtype=pieces[0][1].dtype)
    for ids, values in pieces:
        out[ids - start] = values
    return out


def _partition_problems(client, U, indices, partitions):
    """One problem per partition of the split self-join, on its home worker: its points are
    its lists' rows, which it holds already (its database), and their neighbours are nearly
    all among them (`kssc.distributed._list_owners`), so it gathers few rows; the neighbour
    indices of its points come from their blocks. Returns (homes, problems, their lists,
    bytes futures)."""
    spans = U.spans()
    databases, homes = partitions
    problems, orders, moved = [], [], []
    for database, home in zip(databases, homes, strict=True):
        mine = [client.submit(points_between, database, a, b, **home) for a, b in spans]
        near = [client.submit(take_rows, indices.futures[c], mine[c], a)
                for c, (a, _) in enumerate(spans)]
        near = client.submit(concatenate, *near, **home)
        own_ids = part(client, database, 0)
        wanted = client.submit(_request, near, U.bounds, own_ids, **home)
        gathered = [client.submit(_with_ids, U.futures[c], part(client, wanted, c), a)
                    for c, (a, _) in enumerate(spans)]
        moved += [client.submit(_bytes, g) for g in gathered]
        problems.append(client.submit(partition_problem, database, near, *gathered, **home))
        orders.append([part(client, database, 2)])
    return homes, problems, orders, moved


def coefficients(client, U, indices, k, options, lists=None, partitions=None):
    """Coefficients of every point: (coef RowBlocks, n_iter RowBlocks, points not converged,
    bytes of neighbour rows moved between blocks). `lists`: RowBlocks of every row's own
    inverted list (the IVF search's), the order in which each group codes its points.
    `partitions`: the split self-join's (databases, homes), whose partitions then code their
    own lists' points (`_partition_problems`); else consecutive blocks are coded together
    (`_block_problems`)."""
    if partitions is None:
        groups, homes, problems, orders, moved = _block_problems(client, U, indices, k, lists)
    else:
        homes, problems, orders, moved = _partition_problems(client, U, indices, partitions)
    weight = None
    if options["lam_mode"] == "global":
        scales = client.gather([client.submit(block_scale, p, options["positive"])
                                for p in problems])
        weight = options["lam"] * min(scales)
    solved = [client.submit(solve_block, problem, options, weight, *order, **home)
              for problem, order, home in zip(problems, orders, homes, strict=True)]
    missed = [part(client, f, 2) for f in solved]
    if partitions is None:
        coef, n_iter = [], []
        for f, group in zip(solved, groups, strict=True):
            origin = U.bounds[group[0]]
            for c in group:
                lo, hi = int(U.bounds[c] - origin), int(U.bounds[c + 1] - origin)
                coef.append(client.submit(rows_between, part(client, f, 0), lo, hi))
                n_iter.append(client.submit(rows_between, part(client, f, 1), lo, hi))
    else:
        coef, n_iter = [], []
        for a, b in U.spans():
            for out, j in ((coef, 0), (n_iter, 1)):
                pieces = [client.submit(queries_between, (part(client, d, 0), part(client, f, j)),
                                        a, b) for d, f in zip(partitions[0], solved, strict=True)]
                out.append(client.submit(placed_rows, a, b - a, *pieces))
    return (RowBlocks(coef, U.bounds), RowBlocks(n_iter, U.bounds), sum(client.gather(missed)),
            sum(client.gather(moved)))
