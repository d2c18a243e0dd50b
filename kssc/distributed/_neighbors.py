"""Distributed neighbour search: exact by block pairs, or a faiss IVF index split by lists.

Exact: every (query block, database block) pair gives each query its k best rows of that
block (float32 products, as `kssc.neighbors._exact.exact_search`, re-scored in float64); one
task per query block keeps the k best by the float32 score and sorts them by the float64 one.

Approximate: the IVF coarse quantiser is trained on the client on the same sample
`neighbors._ann` draws, then shipped to the workers (serialised, a few MB) as a task's result, which
the scheduler recomputes if the worker holding it dies. Every row block
routes each point to the partition owning its inverted list (the database shuffle) and to
every partition owning one of the lists it probes (the query shuffle). One task per
(partition, query block) adds the partition's points to a copy of the index and searches
that block's queries in it; the per-point results are merged as a single index would have
returned them.
"""

import numpy as np

from ..neighbors._ann import FIRST_PROBE as _FIRST_PROBE
from ..neighbors._ann import LISTS_PER_SQRT_N as _LISTS_PER_SQRT_N
from ..neighbors._ann import MIN_TRAIN_PER_LIST as _MIN_TRAIN_PER_LIST
from ..neighbors._ann import TRAIN_PER_LIST as _TRAIN_PER_LIST
from ..neighbors._exact import rescore
from ._blocks import RowBlocks, gather_rows, part, shared

RECALL_SAMPLE = 1000


def pair_top_k(queries, query_ids, block, start, k, metric):
    """The k best rows of `block` (rows from `start`) for each query, never the query itself.

    Returns (global ids, float32 scores, float64 similarities), each (n_queries, min(k, rows)).
    """
    S = queries.astype(np.float32) @ block.astype(np.float32).T
    if metric == "abs_cosine":
        np.abs(S, out=S)
    local = query_ids - start
    inside = np.flatnonzero((local >= 0) & (local < block.shape[0]))
    S[inside, local[inside]] = -np.inf
    kk = min(k, block.shape[0])
    found = np.argpartition(S, block.shape[0] - kk, axis=1)[:, block.shape[0] - kk:]
    sims = rescore(queries, block, found)
    if metric == "abs_cosine":
        sims = np.abs(sims)
    return found + start, np.take_along_axis(S, found, 1), sims


def merge_top_k(k, *parts):
    """Each query's k best candidates over `parts` by float32 score, sorted by similarity."""
    ids = np.hstack([p[0] for p in parts])
    scores = np.hstack([p[1] for p in parts])
    sims = np.hstack([p[2] for p in parts])
    best = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    ids, sims = np.take_along_axis(ids, best, 1), np.take_along_axis(sims, best, 1)
    order = np.argsort(-sims, axis=1, kind="stable")
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


def exact_rows(client, U, rows, k, metric):
    """Exact neighbours of the rows `rows` (few), on the client: (indices, similarities)."""
    queries = gather_rows(client, U, rows)
    parts = [client.submit(pair_top_k, queries, rows, d, start, k, metric)
             for d, (start, _) in zip(U.futures, U.spans(), strict=True)]
    return merge_top_k(k, *client.gather(parts))


def recall(client, U, indices, k, metric, rng):
    """Mean share of the exact k neighbours found, over a sample of RECALL_SAMPLE rows."""
    n = U.n_rows
    rows = np.sort(rng.choice(n, min(n, RECALL_SAMPLE), replace=False))
    exact, _ = exact_rows(client, U, rows, k, metric)
    found = gather_rows(client, indices, rows)
    hits = (found[:, :, None] == exact[:, None, :]).any(axis=2).sum()
    return float(hits / exact.size)


def _faiss():
    from ..neighbors._ann import import_faiss

    return import_faiss()


def train_index(sample, n, seed):
    """Serialised empty faiss IndexIVFFlat (inner product) trained on `sample`, as
    `kssc.neighbors._ann`."""
    faiss = _faiss()
    n_lists = n_lists_for(n)
    dim = sample.shape[1]
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFFlat(quantizer, dim, n_lists, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = seed
    index.train(np.ascontiguousarray(sample, dtype=np.float32))
    return faiss.serialize_index(index)


def n_lists_for(n):
    """Number of inverted lists for n points (as `kssc.neighbors._ann`)."""
    return int(np.clip(_LISTS_PER_SQRT_N * np.sqrt(n), 1, max(1, n // _MIN_TRAIN_PER_LIST)))


def _load(index_bytes):
    return _faiss().deserialize_index(index_bytes)


def home_lists(block, index_bytes):
    """Inverted list of each row (its nearest centroid) and the count per list."""
    index = _load(index_bytes)
    _, home = index.quantizer.search(np.ascontiguousarray(block, dtype=np.float32), 1)
    return np.bincount(home[:, 0], minlength=index.nlist)


def route(block, start, index_bytes, owner_of_list, n_parts):
    """Where each row of a block goes: (ids, rows, probed lists, home partition, probed
    partitions (n_b, n_parts) bool). `route_piece` cuts one partition's piece from it, so
    no task holds a block's rows replicated once per partition."""
    index = _load(index_bytes)
    n_probe = min(index.nlist, _FIRST_PROBE)
    _, probes = index.quantizer.search(np.ascontiguousarray(block, dtype=np.float32), n_probe)
    probed = np.zeros((block.shape[0], n_parts), dtype=bool)
    probed[np.arange(block.shape[0])[:, None], owner_of_list[probes]] = True
    ids = np.arange(start, start + block.shape[0])
    return ids, block, probes, owner_of_list[probes[:, 0]], probed


def route_piece(routed, p):
    """Partition p's piece of a routed block: the rows whose home list it owns (ids, rows,
    home lists) and the rows probing one of its lists (ids, rows, probed lists)."""
    ids, block, probes, home, probed = routed
    mine, asks = home == p, probed[:, p]
    return ((ids[mine], block[mine], probes[mine, 0]),
            (ids[asks], block[asks], probes[asks]))


def database_part(*pieces):
    """A partition's database: the (ids, rows, home lists) routed to it, concatenated."""
    return tuple(np.concatenate([piece[i] for piece in pieces]) for i in range(3))


def piece_bytes(routed):
    """Bytes of a routed block's pieces (ids, rows, lists), what the shuffle moves."""
    ids, block, probes, _, probed = routed
    row = ids.itemsize + block.shape[1] * block.itemsize
    return int(block.shape[0] * (row + probes.itemsize)
               + probed.sum() * (row + probes.shape[1] * probes.itemsize))


def search_partition(index_bytes, k1, database, queries):
    """Each query's k1 best rows among one partition's lists: (query ids, ids, scores,
    similarities); ids -1 (score -inf) where the lists hold fewer.

    The rows go to the lists `route` assigned and the queries scan the lists it found,
    so this equals the part of a single index's search that those lists hold.
    """
    from faiss.contrib.ivf_tools import add_preassigned, search_preassigned

    db_ids, db, homes = database
    q_ids, rows, probes = queries
    found = np.full((q_ids.size, k1), -1, dtype=np.int64)
    if not (db_ids.size and q_ids.size):
        none = np.full(found.shape, -np.inf)
        return q_ids, found, none.astype(np.float32), none
    index = _load(index_bytes)
    index.nprobe = probes.shape[1]
    add_preassigned(index, np.ascontiguousarray(db, dtype=np.float32), homes, ids=db_ids)
    scores, found = search_preassigned(index, np.ascontiguousarray(rows, dtype=np.float32), k1,
                                       probes)
    valid = found >= 0
    order = np.argsort(db_ids)
    at = np.searchsorted(db_ids, found, sorter=order).clip(0, db_ids.size - 1)
    sims = rescore(rows, db, np.where(valid, order[at], 0))
    scores[~valid] = -np.inf
    sims[~valid] = -np.inf
    return q_ids, found, scores, sims


def merge_partitions(start, stop, k, *results):
    """Per point: the k1 best by float32 score over all partitions (what one index returns),
    then the k best other points by similarity (self and repeats dropped by index).

    Returns (indices, similarities, local rows left with fewer than k candidates).
    """
    k1 = k + 1
    q_ids = np.concatenate([r[0] for r in results])
    found = np.vstack([r[1] for r in results])
    scores = np.vstack([r[2] for r in results])
    sims = np.vstack([r[3] for r in results])
    q = np.repeat(q_ids - start, found.shape[1])
    found, scores, sims = found.ravel(), scores.ravel(), sims.ravel()
    order = np.lexsort((-scores, q))
    q, found, sims = q[order], found[order], sims[order]
    group_start = np.searchsorted(q, q, side="left")
    rank = np.arange(q.size) - group_start
    keep = rank < k1
    n = stop - start
    cand = np.full((n, k1), -1, dtype=np.int64)
    cand_sims = np.full((n, k1), -np.inf)
    cand[q[keep], rank[keep]] = found[keep]
    cand_sims[q[keep], rank[keep]] = sims[keep]
    by_id = np.argsort(cand, axis=1, kind="stable")
    cand = np.take_along_axis(cand, by_id, 1)
    cand_sims = np.take_along_axis(cand_sims, by_id, 1)
    invalid = (cand < 0) | (cand == np.arange(start, stop)[:, None])
    cand_sims[invalid] = -np.inf
    best = np.argsort(-cand_sims, axis=1, kind="stable")[:, :k]
    indices = np.take_along_axis(cand, best, 1)
    sims = np.take_along_axis(cand_sims, best, 1)
    return indices, sims, np.flatnonzero(~np.isfinite(sims).all(axis=1))


def _owner_of_lists(counts, n_parts):
    """Contiguous ranges of lists with about equal numbers of points per partition."""
    cumulative = np.cumsum(counts)
    return np.minimum(n_parts - 1, (n_parts * (cumulative - counts) // max(1, cumulative[-1])))


def approximate_neighbor_blocks(client, U, k, rng):
    """IVF neighbours of every row ("euclidean" metric): (indices, similarities) RowBlocks
    and the bytes the row shuffle moves (database and query pieces)."""
    n = U.n_rows
    n_lists = n_lists_for(n)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    n_train = min(n, _TRAIN_PER_LIST * n_lists)
    rows = np.arange(n) if n_train == n else np.sort(rng.choice(n, n_train, replace=False))
    index_bytes = shared(client, train_index(gather_rows(client, U, rows), n, seed))
    counts = sum(client.gather([client.submit(home_lists, f, index_bytes) for f in U.futures]))
    n_parts = len(U.futures)
    owner = _owner_of_lists(counts, n_parts).astype(np.int64)
    routed = [client.submit(route, f, start, index_bytes, owner, n_parts)
              for f, (start, _) in zip(U.futures, U.spans(), strict=True)]
    shuffled = sum(client.gather([client.submit(piece_bytes, r) for r in routed]))
    pieces = [[client.submit(route_piece, r, p) for p in range(n_parts)] for r in routed]
    databases = [client.submit(database_part,
                               *[part(client, pieces[b][p], 0) for b in range(len(routed))])
                 for p in range(n_parts)]
    indices, sims, short = [], [], []
    for b, (start, stop) in enumerate(U.spans()):
        # One task per (partition, query block): it holds one partition's rows and one
        # block's queries, never every query that probes the partition.
        results = [client.submit(search_partition, index_bytes, k + 1, databases[p],
                                 part(client, pieces[b][p], 1)) for p in range(n_parts)]
        merged = client.submit(merge_partitions, start, stop, k, *results)
        indices.append(part(client, merged, 0))
        sims.append(part(client, merged, 1))
        short.append(part(client, merged, 2))
    indices, sims = _fill_short(client, U, indices, sims, short, k)
    return RowBlocks(indices, U.bounds), RowBlocks(sims, U.bounds), shuffled


def _replace_rows(block, local, values):
    block = block.copy()
    block[local] = values
    return block


def _fill_short(client, U, indices, sims, short, k):
    """Search exactly the rows whose probed lists held fewer than k other points."""
    short = client.gather(short)
    rows = np.concatenate([s + start for s, (start, _) in zip(short, U.spans(), strict=True)])
    if not rows.size:
        return indices, sims
    exact, exact_sims = exact_rows(client, U, rows, k, "euclidean")
    owners = U.owners(rows)
    for b in np.unique(owners):
        mine = owners == b
        local = rows[mine] - U.bounds[b]
        indices[b] = client.submit(_replace_rows, indices[b], local, exact[mine])
        sims[b] = client.submit(_replace_rows, sims[b], local, exact_sims[mine])
    return indices, sims
