"""Distributed neighbour search: exact by block pairs, or the IVF self-join on replicas or
split by lists.

Exact: every (query block, database block) pair gives each query its k best rows of that
block (float32 products, as `kssc.neighbors._exact.exact_search`, re-scored in float64); one
task per query block keeps the k best by the float32 score and sorts them by the float64 one.

Approximate: the single machine's IVF self-join (`kssc.neighbors._ann`), partitioned by list
(or on replicas, see below). Its centroids are trained on the client by the same spherical
k-means on the same sample (gathered from the workers) and shipped to the workers as a
task's result, which the scheduler recomputes if the worker holding it dies. Every row block
finds each row's probed lists; each partition owns lists holding about equal numbers of
rows, lists that rows probe together in one partition (`kssc.distributed._list_owners`), and
receives the rows whose own list it owns (the database shuffle) and, per query block, the
rows probing one of its lists (the query shuffle). One task per
(partition, query block) runs the self-join's kernel on them; the per-point results are
merged as a single join would have kept them. nprobe adapts as on one machine: the smallest
from 8 whose probed lists hold the target share of a sample of rows' exact neighbours.

Where every worker can hold all rows (float64 and float32, with the lists' order: at most
`_REPLICA_SHARE` of each worker's memory_limit) the rows are replicated instead, as a
broadcast join: each worker builds the single machine's index on its copy and joins its own
blocks' rows with the single machine's kernels (`kssc.neighbors._ann.joined`, the recall
sample's exact search too), so a row's neighbours are found once, in one place, as one
machine's thread finds them. Split by list, a row whose probes reach several partitions
(on the scale data with two partitions and 16 probes, 1 % of the rows at 10^6, a fifth at
2 x 10^5) is joined in each of them:
each keeps its own k + 1 candidates of the row from an empty top-k (a low threshold lets more
points in) and re-scores them in float64, and the candidates are merged: docs/scaling.md
measures both joins.
"""

import numpy as np

from ..neighbors._ann import (
    IVF,
    JOIN_LISTS_PER_SQRT_N,
    MIN_TRAIN_PER_LIST,
    adapted_nprobe,
    first_nprobe,
    joined,
    kept_probes,
    most_adapted,
    neighbor_recall,
    train_centroids,
)
from ..neighbors._centroids import nearest_lists
from ..neighbors._exact import exact_search, rescore
from ..neighbors._ivf_join import InvertedLists, join
from ..neighbors._topk import empty_top_k, update_rows
from ._blocks import RowBlocks, gather_rows, part, placements, shared
from ._list_owners import list_owners, list_statistics

# The rows (float64) of one partition's database, and of one join task's queries
# (consecutive blocks), at most: a join task's inputs stay bounded whatever n, and each list's
# products are cut by as few tasks as that allows.
_TASK_BYTES = 256 * 2**20
# The float32 products of one exact (query, block) pair computed at a time.
_PAIR_BYTES = 64 * 2**20
# Every worker holds all rows (a replica) when `replica_bytes` is at most this share of the
# smallest worker memory_limit.
_REPLICA_SHARE = 0.25


def pair_top_k(queries, query_ids, block, start, k, metric):
    """The k best rows of `block` (rows from `start`) for each query, never the query itself,
    by the single machine's compiled running top-k (ties: the smaller index).

    Returns (global ids, float32 scores, float64 similarities), each (n_queries, k); ids -1
    (scores -inf) where the block holds fewer.
    """
    Q = queries.astype(np.float32)
    skip = np.asarray(query_ids, dtype=np.int64)
    scores, found = empty_top_k(Q.shape[0], k)
    width = max(k, _PAIR_BYTES // (4 * max(1, Q.shape[0])))
    for c in range(0, block.shape[0], width):
        S = Q @ block[c:c + width].astype(np.float32).T
        if metric == "abs_cosine":
            np.abs(S, out=S)
        update_rows(S, np.arange(start + c, start + c + S.shape[1]), scores, found, 0,
                    skip=skip)
    valid = found >= 0
    sims = rescore(queries, block, np.where(valid, found - start, 0))
    if metric == "abs_cosine":
        sims = np.abs(sims)
    scores[~valid] = -np.inf
    sims[~valid] = -np.inf
    return found, scores, sims


def merge_top_k(k, *parts):
    """Each query's k best candidates over `parts` by float32 score (ties: the smaller
    index), sorted by similarity (ties: the smaller index), as the single machine's search
    keeps and orders them."""
    ids = np.hstack([p[0] for p in parts])
    scores = np.hstack([p[1] for p in parts])
    sims = np.hstack([p[2] for p in parts])
    best = np.lexsort((ids, -scores), axis=1)[:, :k]
    ids, sims = np.take_along_axis(ids, best, 1), np.take_along_axis(sims, best, 1)
    order = np.lexsort((ids, -sims), axis=1)
    return np.take_along_axis(ids, order, 1), np.take_along_axis(sims, order, 1)


def exact_neighbor_blocks(client, U, k, metric):
    """Exact neighbours of every row: (indices blocks, similarities blocks) as RowBlocks."""
    indices, sims = [], []
    for q, (q_start, q_stop) in zip(U.futures, U.spans(), strict=True):
        ids = np.arange(q_start, q_stop)
        parts = [client.submit(pair_top_k, q, ids, d, start, k, metric)
                 for d, (start, _) in zip(U.futures, U.spans(), strict=True)]
        merged = client.submit(merge_top_k, k, *parts)
        indices.append(part(client, merged, 0))
        sims.append(part(client, merged, 1))
    return RowBlocks(indices, U.bounds), RowBlocks(sims, U.bounds)


def exact_rows(client, U, rows, k, metric, queries=None):
    """Exact neighbours of the rows `rows` (few; `queries`: those rows, when gathered
    already), on the client: (indices, similarities)."""
    queries = gather_rows(client, U, rows) if queries is None else queries
    parts = [client.submit(pair_top_k, queries, rows, d, start, k, metric)
             for d, (start, _) in zip(U.futures, U.spans(), strict=True)]
    return merge_top_k(k, *client.gather(parts))


class _ClusterRows:
    """The unit rows on the cluster as `kssc.neighbors._ann.train_centroids` reads them: a
    shape, and rows by index (gathered to the client as float32, only the rows asked for)."""

    def __init__(self, client, U, dim):
        self.client, self.U, self.shape = client, U, (U.n_rows, dim)

    def __getitem__(self, rows):
        return np.asarray(gather_rows(self.client, self.U, rows), dtype=np.float32)


def block_probes(block, centroids, metric, n_probe):
    """The `n_probe` lists of every row of a block, its own (most similar) first."""
    return nearest_lists(np.asarray(block, dtype=np.float32), centroids, metric, n_probe)


def database_piece(block, start, probes, owner, p):
    """Partition p's database rows of a block, those whose own list it owns: (ids, rows,
    lists)."""
    mine = np.flatnonzero(owner[probes[:, 0]] == p)
    return mine + start, block[mine], probes[mine, 0]


def first_probes(probes, n_probe):
    """The first `n_probe` of every row's probed lists (the block's lists are found once, for
    an adapted nprobe of up to twice the first, as on one machine)."""
    return np.ascontiguousarray(probes[:, :n_probe])


def query_piece(block, start, probes, owner, p, n_probe, rows=None):
    """The rows of a block (or its local `rows`) that probe one of partition p's lists among
    their first `n_probe`: (ids, rows, their probed lists, p's first: the join scans a row's
    first list before the others, so its threshold is high early, as its own list's makes it
    on one machine)."""
    local = np.arange(block.shape[0]) if rows is None else rows
    probes = first_probes(probes, n_probe)
    owned = owner[probes[local]] == p
    asks = owned.any(axis=1)
    first = np.argsort(~owned[asks], axis=1, kind="stable")
    return local[asks] + start, block[local[asks]], np.take_along_axis(probes[local[asks]],
                                                                       first, 1)


def database_part(*pieces):
    """A partition's database: the (ids, rows, lists) routed to it, concatenated."""
    return tuple(np.concatenate([piece[i] for piece in pieces]) for i in range(3))


def piece_bytes(piece):
    """Bytes of a routed piece (ids, rows, lists), what the shuffle moves."""
    return int(sum(array.nbytes for array in piece))


def join_partition(database, n_lists, k1, metric, *pieces):
    """Each query's k1 best rows among the points of one partition's lists that it probes,
    by the single machine's IVF self-join kernel (`kssc.neighbors._ivf_join.join`, float32,
    exactly among those candidates): (query ids, ids, float32 scores, similarities); ids -1
    (score -inf) where the lists hold fewer. The queries are the `query_piece`s `pieces`
    (of consecutive blocks) together. The query itself may be among them (the merge drops
    it)."""
    db_ids, db, lists = database
    q_ids = np.concatenate([piece[0] for piece in pieces])
    probes = np.concatenate([piece[2] for piece in pieces])
    found = np.full((q_ids.size, k1), -1, dtype=np.int64)
    none = np.full(found.shape, -np.inf)
    if not (db_ids.size and q_ids.size):
        return q_ids, found, none.astype(np.float32), none
    # The float32 database then queries, filled piece by piece (no float64 copy of them).
    X32 = np.empty((db_ids.size + q_ids.size, db.shape[1]), dtype=np.float32)
    X32[:db_ids.size] = db
    ends = db_ids.size + np.cumsum([piece[0].size for piece in pieces])
    for piece, end in zip(pieces, ends, strict=True):
        X32[end - piece[0].size:end] = piece[1]
    local = join(X32, InvertedLists(lists, n_lists), db_ids.size + np.arange(q_ids.size),
                 probes, k1, metric)
    valid = local >= 0
    safe = np.where(valid, local, 0)
    sims = np.concatenate([rescore(piece[1], db, safe[end - piece[0].size:end])
                           for piece, end in zip(pieces, ends - db_ids.size, strict=True)])
    if metric == "abs_cosine":
        sims = np.abs(sims)
    sims[~valid] = -np.inf
    found[valid] = db_ids[local[valid]]
    return q_ids, found, sims.astype(np.float32), sims


def queries_between(result, start, stop):
    """The rows of arrays whose first holds ascending ids (a `join_partition` result, or a
    partition's ids and coefficients) for the ids start..stop-1."""
    a, b = np.searchsorted(result[0], [start, stop])
    return tuple(array[a:b] for array in result)


def merge_partitions(ids, k, *results):
    """Per point of `ids` (ascending: a block's rows, or a sample of them): the k best other
    points by float32 score over every partition's candidates (ties: the smaller index, as
    the single machine's join keeps them), sorted by similarity (ties: the smaller index).

    Returns (indices, similarities, positions in `ids` left with fewer than k candidates).
    """
    n, width = ids.size, sum(r[1].shape[1] for r in results)
    cand = np.full((n, width), -1, dtype=np.int64)
    scores = np.full((n, width), -np.inf, dtype=np.float32)
    sims = np.full((n, width), -np.inf)
    at = 0
    for q_ids, found, found_scores, found_sims in results:
        rows, cols = np.searchsorted(ids, q_ids), slice(at, at + found.shape[1])
        cand[rows, cols], scores[rows, cols], sims[rows, cols] = found, found_scores, found_sims
        at += found.shape[1]
    scores[(cand < 0) | (cand == ids[:, None])] = -np.inf
    best = np.lexsort((cand, -scores), axis=1)[:, :k]
    cand, sims = np.take_along_axis(cand, best, 1), np.take_along_axis(sims, best, 1)
    short = np.flatnonzero(~np.isfinite(np.take_along_axis(scores, best, 1)).all(axis=1))
    order = np.lexsort((cand, -sims), axis=1)
    return np.take_along_axis(cand, order, 1), np.take_along_axis(sims, order, 1), short


class _Join:
    """The self-join's routing on the cluster: every block's probes at `n_probe`, the owner
    partition of every list (one partition per worker thread, or more by `_TASK_BYTES`) and
    each partition's database (the database shuffle)."""

    def __init__(self, client, U, centroids, metric):
        self.client, self.U, self.centroids, self.metric = client, U, centroids, metric
        # One partition per worker thread, more when a partition's rows would exceed
        # _TASK_BYTES (at most one per block).
        self.n_lists = int(centroids.shape[0])
        needed = -(-U.n_rows * centroids.shape[1] * 8 // _TASK_BYTES)
        self.n_parts = int(min(len(U.futures),
                               max(1, sum(client.nthreads().values()), needed)))
        self.centroids_future = shared(client, centroids)
        self.homes = placements(client, self.n_parts)  # partition p's database and joins
        self.n_probe = self.kept = 0
        self.sizes = []  # futures of the routed pieces' bytes

    def probe(self, n_probe, kept=0):
        """Every block's probed lists at `n_probe`: its first lists of those an earlier call
        found (`kept` lists a row, at least n_probe), else found again. The first call also
        builds the partitions' databases, which depend on every row's own list only."""
        client, first = self.client, not self.n_probe
        self.n_probe = n_probe
        if n_probe <= self.kept:
            return
        self.kept = max(n_probe, kept)
        self.probes = [client.submit(block_probes, f, self.centroids_future, self.metric,
                                     self.kept) for f in self.U.futures]
        if not first:
            return
        statistics = client.gather([client.submit(list_statistics, f, self.n_lists)
                                    for f in self.probes])
        owner = list_owners(sum(c for c, _ in statistics), sum(g for _, g in statistics),
                            self.n_parts)
        self.owner = shared(client, owner)
        pieces = [[client.submit(database_piece, f, start, probes, self.owner, p)
                   for p in range(self.n_parts)]
                  for f, (start, _), probes in zip(self.U.futures, self.U.spans(), self.probes,
                                                   strict=True)]
        self.sizes += [client.submit(piece_bytes, piece) for row in pieces for piece in row]
        self.databases = [client.submit(database_part, *[row[p] for row in pieces],
                                        **self.homes[p])
                          for p in range(self.n_parts)]

    def search(self, k, blocks, rows=None):
        """Futures of `merge_partitions`, one per block of the consecutive blocks `blocks`
        (or for the local `rows` of one block): one join task per partition, holding one
        partition's rows and those blocks' queries; one merge per block, so the merges run
        on every worker."""
        client, spans = self.client, self.U.spans()
        results = []
        for p in range(self.n_parts):
            queries = [client.submit(query_piece, self.U.futures[b], spans[b][0],
                                     self.probes[b], self.owner, p, self.n_probe, rows)
                       for b in blocks]
            if rows is None:
                self.sizes += [client.submit(piece_bytes, piece) for piece in queries]
            results.append(client.submit(join_partition, self.databases[p], self.n_lists,
                                         k + 1, self.metric, *queries, **self.homes[p]))
        merged = []
        for b in blocks:
            start, stop = spans[b]
            ids = np.arange(start, stop) if rows is None else start + np.asarray(rows)
            pieces = [client.submit(queries_between, result, start, stop) for result in results]
            merged.append(client.submit(merge_partitions, ids, k, *pieces))
        return merged


def query_groups(bounds, dim, budget):
    """Consecutive blocks (lists of block numbers) whose rows together take at most `budget`
    bytes as float64 (a block alone when it takes more): a join task's queries."""
    groups, rows = [[]], 0
    for b, size in enumerate(np.diff(bounds)):
        if groups[-1] and (rows + size) * dim * 8 > budget:
            groups.append([])
            rows = 0
        groups[-1].append(b)
        rows += size
    return groups


def _sample_recall(client, U, joiner, sample, exact, k):
    """`neighbor_recall` of the rows `sample` (ascending) joined at the current n_probe."""
    owners = U.owners(sample)
    found = []
    for b in np.unique(owners):
        local = sample[owners == b] - U.bounds[b]
        found.append(part(client, joiner.search(k, [b], local)[0], 1))
    return neighbor_recall(np.concatenate(client.gather(found)), exact)


def _adapt(client, U, probes, centroids, metric, settings, rows, exact_ids):
    """The adapted nprobe (`kssc.neighbors._ann.adapted_nprobe`, None: search exactly) from
    the sampled rows' most similar lists and their exact neighbours' own lists (`probes`:
    every block's probed lists, its own first), as one machine computes them; `rows`: the
    sampled rows (float32). Returns (nprobe, the rows' ranked lists)."""
    n_lists = int(centroids.shape[0])
    ranked = nearest_lists(rows, centroids, metric, most_adapted(settings, n_lists))
    own = gather_rows(client, RowBlocks(probes, U.bounds), exact_ids.ravel())[:, 0]
    return adapted_nprobe(ranked, own.reshape(exact_ids.shape), settings, n_lists), ranked


def replica_bytes(n, dim):
    """Bytes of one worker's replica: the rows in float64 and float32, the lists' order."""
    return n * (12 * dim + 24)


def _replicates(client, n, dim):
    """Whether every worker can hold a replica (a worker without a memory_limit can)."""
    limits = [info.get("memory_limit") or 0
              for info in client.scheduler_info(n_workers=-1)["workers"].values()]
    return all(not limit or replica_bytes(n, dim) <= _REPLICA_SHARE * limit
               for limit in limits)


class Replica:
    """All unit rows (float64, float32) and the single machine's inverted lists over them."""

    def __init__(self, n_lists, n_blocks, *blocks_then_lists):
        self.X = np.concatenate(blocks_then_lists[:n_blocks])
        self.X32 = self.X.astype(np.float32)
        self.index = InvertedLists(np.concatenate(blocks_then_lists[n_blocks:]), n_lists)


def own_lists(probes):
    """Each row's own list (its first probe)."""
    return probes[:, 0].copy()


def replica_join(replica, start, probes, n_probe, k, metric):
    """The rows start.. (as many as `probes`) joined at their first `n_probe` lists as
    `approximate_search` joins them: (indices, similarities)."""
    rows = np.arange(start, start + probes.shape[0])
    return joined(replica.X, replica.X32, replica.index, rows, first_probes(probes, n_probe), k,
                  metric)


def replica_exact(replica, rows, k, metric):
    """The exact neighbours of the rows `rows` (indices, similarities), as
    `approximate_search`'s recall sample."""
    return exact_search(replica.X32, k, metric, rows=rows)


def replica_sample(replica, rows, probes, k, metric):
    """The joined similarities of the rows `rows` at their lists `probes`, as
    `approximate_search`'s recall sample."""
    return joined(replica.X, replica.X32, replica.index, rows, probes, k, metric)[1]


def _replicated_neighbor_blocks(client, U, k, metric, sample, settings, centroids, n_probe,
                                kept):
    """`approximate_neighbor_blocks` on replicas (see the module's docstring): (indices,
    similarities) RowBlocks, bytes moved to build the replicas and the search's info."""
    n, n_lists = U.n_rows, int(centroids.shape[0])
    homes = [{"workers": [address], "allow_other_workers": True}
             for address in sorted(client.nthreads())]
    centroids_future = shared(client, centroids)

    def probe(n_probe):
        return [client.submit(block_probes, f, centroids_future, metric, n_probe)
                for f in U.futures]

    probes = probe(kept)
    lists = [client.submit(own_lists, f) for f in probes]
    # pure=False: the same inputs on every worker would otherwise be one task (one key), and
    # every worker but one would fetch that worker's copy.
    replicas = [client.submit(Replica, n_lists, len(U.futures), *U.futures, *lists,
                              pure=False, **home) for home in homes]
    dim = centroids.shape[1]
    moved = (len(replicas) - 1) * n * (8 * dim + 8)
    shares = np.array_split(sample, len(replicas))
    recall = float("nan")
    if sample.size:
        exact = client.gather([client.submit(replica_exact, r, rows, k, metric, **home)
                               for r, rows, home in zip(replicas, shares, homes, strict=True)])
        rows32 = _ClusterRows(client, U, centroids.shape[1])[sample]
        n_probe, ranked = _adapt(client, U, probes, centroids, metric, settings, rows32,
                                 np.concatenate([ids for ids, _ in exact]))
        if n_probe is None:
            indices, sims = exact_neighbor_blocks(client, U, k, metric)
            return indices, sims, moved, {
                "algorithm": "exact", "join": "replicated", "nlist": n_lists,
                "nprobe": None, "recall": 1.0, "recall_sample": int(sample.size)}
        ranked = np.array_split(ranked[:, :n_probe], len(replicas))
        found = [client.submit(replica_sample, r, rows, lists, k, metric, **home)
                 for r, rows, lists, home in zip(replicas, shares, ranked, homes,
                                                 strict=True)]
        recall = neighbor_recall(np.concatenate(client.gather(found)),
                                 np.concatenate([sims for _, sims in exact]))
        if n_probe > kept:
            probes = probe(n_probe)
    blocks = [client.submit(replica_join, replicas[b % len(replicas)], start, probes[b],
                            n_probe, k, metric, **homes[b % len(homes)])
              for b, (start, _) in enumerate(U.spans())]
    indices = RowBlocks([part(client, f, 0) for f in blocks], U.bounds)
    sims = RowBlocks([part(client, f, 1) for f in blocks], U.bounds)
    return indices, sims, moved, {"algorithm": "ivf", "join": "replicated", "nlist": n_lists,
                                  "nprobe": n_probe, "recall": recall,
                                  "recall_sample": int(sample.size),
                                  "lists": RowBlocks(lists, U.bounds)}


def approximate_neighbor_blocks(client, U, k, metric, rng, settings=None):
    """IVF self-join neighbours of every row, as `kssc.neighbors._ann.approximate_search`
    finds them on one machine (the same lists, centroids, sample and adapted nprobe given
    the same `rng`), on replicas where every worker can hold them (`_replicates`), else
    partitioned by list: (indices, similarities) RowBlocks, the bytes moved (the replicas,
    or the row shuffle's database and query pieces) and the search's info ("algorithm":
    "ivf", or "exact" after the single machine's switch to the exact search, "join":
    "replicated" or "partitioned", "nlist", "nprobe", "recall", "recall_sample", with
    the IVF "lists": RowBlocks of every row's own list, the order `KSSC` codes the points
    in, and split by list "partitions": every partition's database (its lists' ids, rows
    and lists) and home, where the coefficient step codes those points)."""
    settings = IVF() if settings is None else settings
    n = U.n_rows
    dim = client.submit(lambda block: block.shape[1], U.futures[0]).result()
    n_lists = settings.nlist or int(JOIN_LISTS_PER_SQRT_N * np.sqrt(n))
    n_lists = int(np.clip(n_lists, 1, max(1, n // MIN_TRAIN_PER_LIST)))
    centroids = train_centroids(_ClusterRows(client, U, dim), n_lists, metric, rng)
    n_lists = centroids.shape[0]
    n_probe = first_nprobe(settings, n_lists)
    sample = np.sort(rng.choice(n, min(settings.recall_sample, n), replace=False))
    kept = kept_probes(settings, n_lists, sample.size)  # as on one machine
    if _replicates(client, n, dim):
        return _replicated_neighbor_blocks(client, U, k, metric, sample, settings, centroids,
                                           n_probe, kept)
    joiner = _Join(client, U, centroids, metric)
    joiner.probe(n_probe, kept)
    recall = float("nan")
    if sample.size:
        rows = gather_rows(client, U, sample)  # once, for the exact search and the lists
        exact_ids, exact = exact_rows(client, U, sample, k, metric, rows)
        n_probe = _adapt(client, U, joiner.probes, centroids, metric, settings,
                         np.asarray(rows, dtype=np.float32), exact_ids)[0]
        if n_probe is None:
            indices, sims = exact_neighbor_blocks(client, U, k, metric)
            return indices, sims, int(sum(client.gather(joiner.sizes))), {
                "algorithm": "exact", "join": "partitioned", "nlist": n_lists,
                "nprobe": None, "recall": 1.0,
                "recall_sample": int(sample.size)}
        joiner.probe(n_probe)
        recall = _sample_recall(client, U, joiner, sample, exact, k)
    indices, sims, short = [], [], []
    for group in query_groups(U.bounds, dim, _TASK_BYTES):
        for merged in joiner.search(k, group):
            indices.append(part(client, merged, 0))
            sims.append(part(client, merged, 1))
            short.append(part(client, merged, 2))
    indices, sims = _fill_short(client, U, indices, sims, short, k, metric)
    info = {"algorithm": "ivf", "join": "partitioned", "nlist": n_lists, "nprobe": n_probe,
            "recall": recall, "recall_sample": int(sample.size),
            "lists": RowBlocks([client.submit(own_lists, f) for f in joiner.probes], U.bounds),
            "partitions": (joiner.databases, joiner.homes)}
    shuffled = int(sum(client.gather(joiner.sizes)))
    return RowBlocks(indices, U.bounds), RowBlocks(sims, U.bounds), shuffled, info


def _replace_rows(block, local, values):
    block = block.copy()
    block[local] = values
    return block


def _fill_short(client, U, indices, sims, short, k, metric):
    """Search exactly the rows whose probed lists held fewer than k other points."""
    short = client.gather(short)
    rows = np.concatenate([s + start for s, (start, _) in zip(short, U.spans(), strict=True)])
    if not rows.size:
        return indices, sims
    exact, exact_sims = exact_rows(client, U, rows, k, metric)
    owners = U.owners(rows)
    for b in np.unique(owners):
        mine = owners == b
        local = rows[mine] - U.bounds[b]
        indices[b] = client.submit(_replace_rows, indices[b], local, exact[mine])
        sims[b] = client.submit(_replace_rows, sims[b], local, exact_sims[mine])
    return indices, sims
