"""Approximate all-nearest-neighbour search: an IVF self-join (`_ivf_join`) whose recall
is measured against the exact search on a sample of points.

The points are split into inverted lists by spherical k-means on a sample; every point's
candidates are the points of its `nprobe` most similar lists, and the best k among them are
kept exactly, all computed as blocked float32 GEMMs (the queries are the database, so a
list's points are one block against every point probing it). Deterministic given
`random_state`: its only randomness is the k-means sample and start and the recall sample.
faiss is not needed; the distributed fit runs the same join partitioned by list.

Similarity is the inner product of unit vectors: signed cosine for "euclidean" (the same
ranking as Euclidean distance) and its absolute value for "abs_cosine" (lists and probes
by absolute similarity too, so x and -x fall together).
"""

from dataclasses import dataclass
from numbers import Integral, Real
from time import perf_counter

import numpy as np
from sklearn.utils import check_random_state

from ..utils._warnings import warn_caller
from ._centroids import fit_centroids, nearest_lists
from ._exact import _n_workers, exact_search, rescored
from ._ivf_join import _JOIN_SLOT_BYTES, InvertedLists, join, join_buffer_bytes

# The self-join's defaults, also the distributed fit's (`kssc.distributed`, which imports
# these public names; the functions here read the private ones): about 2 sqrt(n) lists of at
# least 39 points each, nprobe adapted from 8, k-means on 40 points per list for 8
# iterations (in two levels from 1,024 lists, `kssc.neighbors._centroids`).
JOIN_LISTS_PER_SQRT_N = _JOIN_LISTS_PER_SQRT_N = 2
JOIN_FIRST_PROBE = _JOIN_FIRST_PROBE = 8
MIN_TRAIN_PER_LIST = _MIN_TRAIN_PER_LIST = 39
_KMEANS_ITERATIONS = 8
_JOIN_TRAIN_PER_LIST = 40
# An adapted nprobe scanning more than this share of the lists is about as costly as the
# exact search, with the recall rounds: the exact search runs instead. Measured by
# `python -m benchmarks.bench_ivf_share` (results/bench_ivf_share.csv; the scale union,
# D = 64, 2 sqrt(N) lists): at N = 50,000, 447 lists, nprobe 32 took 0.40 of the exact
# search's time and nprobe 64 0.57; at 20,000 (282 lists) nprobe 64 took 0.60.
EXACT_FROM_SHARE = _EXACT_FROM_SHARE = 1 / 8
# Found neighbours within this of the exact k-th similarity count as found (ties, and the
# exact sample is searched in float32).
_RECALL_TOL = 1e-6


class NeighborRecallWarning(UserWarning):
    """The approximate neighbour search found too few of the exact neighbours.

    Raised when the recall measured on a sample of points (`IVF.recall_sample`) is below
    `IVF.min_recall`: raise `IVF.nprobe` (or leave it None, adapted), or search exactly.

    See Also
    --------
    IVF : The approximate index and its recall check.

    Examples
    --------
    >>> import warnings
    >>> from kssc import IVF, NeighborRecallWarning, nearest_neighbors
    >>> from kssc.datasets import make_union_of_subspaces
    >>> X, _ = make_union_of_subspaces(5000, ambient_dim=30, n_subspaces=2,
    ...                                subspace_dims=[25], noise=0.01, random_state=0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = nearest_neighbors(X, 10, algorithm=IVF(nprobe=1), random_state=0)
    >>> any(issubclass(w.category, NeighborRecallWarning) for w in caught)
    True
    """


@dataclass(frozen=True)
class IVF:
    """An approximate neighbour index (an IVF self-join) and its recall check.

    The `neighbor_algorithm` of `KSSC` and the `algorithm` of `nearest_neighbors`
    ("approximate" is ``IVF()``). The points are split into `nlist` inverted lists by
    spherical k-means; every point's candidates are the points of its `nprobe` most
    similar lists, among which its k best are kept exactly. At fit time the exact neighbours of
    `recall_sample` random points are searched (O(recall_sample * n * D)) and the recall,
    the share of their found neighbours at least as similar as their exact k-th neighbour,
    is reported (``KSSC.neighbor_recall_``).

    Parameters
    ----------
    nlist : int or None, default=None
        Inverted lists; None: about 2 sqrt(n_samples) (at least 39 points per list).
    nprobe : int or None, default=None
        Lists probed per point; None adapts it: the smallest nprobe of at least 8 whose
        probed lists hold `target_recall` of the sampled points' exact neighbours; when
        that takes more than 1/8 of the lists (data of high intrinsic dimension), the
        exact search runs instead, which is then cheaper.
    target_recall : float in (0, 1], default=0.99
        The recall the adapted `nprobe` aims at. 0.99 is where the labels of `KSSC`'s
        defaults agreed with the exact search's on this project's real data
        (`benchmarks/bench_recall_agreement.py`, docs/scaling.md); 0.95 did not.
    min_recall : float in [0, 1], default=0.9
        A `NeighborRecallWarning` is raised when the measured recall is below it.
    recall_sample : int, default=1000
        Points whose recall is measured; 0 measures nothing (recall NaN, `nprobe` None
        then means 8, no warning).

    See Also
    --------
    KSSC : Takes an IVF as its `neighbor_algorithm`.
    nearest_neighbors : Takes an IVF as its `algorithm`.

    Examples
    --------
    >>> from kssc import IVF, KSSC, clustering_error
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 300, 20, random_state=0)
    >>> model = KSSC(3, neighbor_algorithm=IVF(recall_sample=200), random_state=0).fit(X)
    >>> model.neighbor_recall_ >= 0.99
    True
    >>> float(clustering_error(y, model.labels_))
    0.0
    """

    nlist: int | None = None
    nprobe: int | None = None
    target_recall: float = 0.99
    min_recall: float = 0.9
    recall_sample: int = 1000

    def validate(self):
        """Raise a ValueError naming the first bad setting."""
        for name in ("nlist", "nprobe"):
            value = getattr(self, name)
            if value is not None and not _is_int(value, 1):
                raise ValueError(f"IVF {name} must be an integer >= 1 or None; got {value!r}.")
        if not (isinstance(self.target_recall, Real) and 0 < self.target_recall <= 1):
            raise ValueError(f"IVF target_recall must be in (0, 1]; got {self.target_recall!r}.")
        if not (isinstance(self.min_recall, Real) and 0 <= self.min_recall <= 1):
            raise ValueError(f"IVF min_recall must be in [0, 1]; got {self.min_recall!r}.")
        if not _is_int(self.recall_sample, 0):
            raise ValueError(f"IVF recall_sample must be an integer >= 0; "
                             f"got {self.recall_sample!r}.")


def _is_int(value, low):
    return isinstance(value, Integral) and not isinstance(value, bool) and value >= low


def neighbor_recall(found, exact, tol=_RECALL_TOL):
    """Mean share of the found neighbours at least as similar as the exact k-th one.

    `found` and `exact` hold the similarities (n, k) of the found and of the exact
    neighbours of the same points, most similar first; a found neighbour counts when its
    similarity is >= the exact k-th minus `tol`, so ties broken differently still count.
    """
    return float(np.mean(found >= exact[:, -1:] - tol))


def _train(X32, n_lists, metric, rng):
    """Centroids of the inverted lists: spherical k-means on a random sample of the rows
    (X32: an array, or any object with a shape that gathers rows by index)."""
    n = X32.shape[0]
    n_train = min(n, _JOIN_TRAIN_PER_LIST * n_lists)
    rows = np.arange(n) if n_train == n else np.sort(rng.choice(n, n_train, replace=False))
    return fit_centroids(np.asarray(X32[rows], dtype=np.float32), n_lists, metric,
                         _KMEANS_ITERATIONS, rng)


def _joined(X_unit, X32, index, rows, probes, k, metric, progress=None):
    """IVF self-join neighbours of the rows `rows` (ascending) on X32, re-scored on X_unit
    in float64 and sorted; rows with fewer than k candidates (tiny lists) are searched
    exactly."""
    found = join(X32, index, rows, probes, k, metric, progress)
    short = (found < 0).any(axis=1)
    np.maximum(found, 0, out=found)  # a missing candidate (-1) scored as row 0, then replaced
    indices, sims = rescored(X_unit, rows, found, metric)
    del found
    if short.any():
        indices[short], sims[short] = exact_search(X_unit, k, metric, rows=rows[short])
    return indices, sims


def first_nprobe(settings, n_lists):
    """The nprobe the join starts from: `settings.nprobe`, else `_JOIN_FIRST_PROBE` (at most
    n_lists)."""
    return min(n_lists, settings.nprobe or _JOIN_FIRST_PROBE)


def most_adapted(settings, n_lists):
    """The largest nprobe the adaptation may choose: `settings.nprobe` when fixed, else
    `_EXACT_FROM_SHARE` of the lists (at least the first nprobe, at most n_lists)."""
    first = first_nprobe(settings, n_lists)
    if settings.nprobe:
        return first
    return min(n_lists, max(first, int(_EXACT_FROM_SHARE * n_lists)))


def adapted_nprobe(ranked, neighbor_lists, settings, n_lists):
    """The nprobe of the join: `settings.nprobe` when fixed, else the smallest from the first
    nprobe (8) up to `most_adapted` at which the sampled points' probed lists hold
    `settings.target_recall` of their exact neighbours; None when none does (the exact search
    is then the cheaper one).

    `ranked` (s, m) holds each sampled point's m >= `most_adapted` most similar lists, the
    most similar first; `neighbor_lists` (s, k) the lists of its exact neighbours. The
    share held at nprobe p is at most the recall of the join at p: a neighbour in a probed
    list is found (the join keeps the best k of its candidates exactly).
    """
    first, last = first_nprobe(settings, n_lists), most_adapted(settings, n_lists)
    if settings.nprobe:
        return first
    hit = ranked[:, :last, None] == neighbor_lists[:, None, :]
    rank = np.where(hit.any(axis=1), hit.argmax(axis=1), last)
    held = np.cumsum(np.bincount(rank.ravel(), minlength=last + 1))[:last] / max(1, rank.size)
    reaching = np.flatnonzero(held[first - 1:] >= settings.target_recall)
    if reaching.size:
        return first + int(reaching[0])
    return n_lists if last >= n_lists else None


def kept_probes(settings, n_lists, n_sampled):
    """The lists every row's first assignment keeps: the first nprobe when it is fixed (or
    no recall is measured, so it never adapts), else twice it, so that an adapted nprobe of
    up to twice the first reads every row's lists from that one pass over the centroids (a
    second pass: 6-7 s at 10^6 points)."""
    n_probe = first_nprobe(settings, n_lists)
    return n_probe if settings.nprobe or not n_sampled else min(n_lists, 2 * n_probe)


def memory_bytes(n_samples, n_features, n_neighbors, index=None, dtype=float):
    """Bytes `approximate_search` holds at its peak (resident): a float32 copy of the rows
    unless they are float32 already, and the largest of its phases: the k-means sample; the
    recall sample's exact search (its similarity blocks); the join (the lists every row keeps
    from its first assignment, `kept_probes`: twice the first nprobe when it adapts; the
    lists' ordering, the part of the worker threads' buffers that a
    list's points and the rows probing it fill, with room for lists 4x the mean, their
    slots sorted by list, and the running top-k); its end (the join's indices, the re-scored
    scores, the sort order and the sorted result, 32 bytes per neighbour). No copy of the
    data for the index."""
    from ._exact import _BLOCK_BYTES

    settings = IVF() if index is None else index
    n, d, k = n_samples, n_features, n_neighbors
    n_lists = settings.nlist or int(_JOIN_LISTS_PER_SQRT_N * np.sqrt(n))
    n_probe = first_nprobe(settings, n_lists)
    kept = kept_probes(settings, n_lists, min(settings.recall_sample, n))
    workers = _n_workers(n)
    copy = 4 * n * d if dtype != np.float32 else 0
    train = 12 * min(n, _JOIN_TRAIN_PER_LIST * n_lists) * d
    recall = min(_BLOCK_BYTES, 4 * settings.recall_sample * n)
    list_size = min(n, 4 * n // max(1, n_lists))
    probing = min(n, list_size * n_probe)
    gathered = 4 * (list_size + probing) * d + 4 * list_size * probing
    slots = 16 * (n // workers) * max(1, n_probe - 1)
    buffers = workers * (min(join_buffer_bytes(d), gathered) + min(_JOIN_SLOT_BYTES, slots))
    join = 4 * n * kept + 16 * n + buffers + 12 * n * k
    end = 4 * 8 * n * k
    return copy + max(train, recall, join, end)


def approximate_search(X_unit, n_neighbors, metric="euclidean", index=None,
                       random_state=None, progress=None):
    """Approximate k most similar other points of every unit-norm row of `X_unit`.

    An IVF self-join (`kssc.neighbors._ivf_join`): the points are split into inverted lists by
    spherical k-means on a sample; each list's points are multiplied in blocked
    float32 GEMMs against the points of the `nprobe` lists with the most similar centroids
    (itself first, absolute similarity for "abs_cosine"), and the best k of every row are
    kept exactly among those candidates, then re-scored in float64. A point is never its
    own neighbour (excluded by index, also with duplicates). Rows left with fewer than k
    candidates (tiny lists) are searched exactly. Runs on all cores; the result is
    deterministic given `random_state`. X_unit may be float32 (also a memory map); memory:
    the index (one float32 copy of the data, sorted by list) and buffers of fixed bytes.

    The settings are `index` (an `IVF`; default ``IVF()``). With an adapted nprobe that
    would join more than `_EXACT_FROM_SHARE` of the lists, the exact search runs instead.
    `progress(done, total)` is called as the lists of the full join finish.

    Returns (indices (n, k) int64, similarities (n, k) float64, info): info holds
    "algorithm" ("ivf", or "exact" after that switch), "nlist", "nprobe", "recall" (NaN
    when not measured) and "recall_sample"; for "ivf" also the seconds ("timings") and the
    similarities computed ("similarities", pairs of D-vectors) of its stages: "train"
    (k-means), "assign" (every point's lists), "recall" (the sample) and "join", and
    "order": the rows sorted by list (close points together; `KSSC` codes them in it).
    """
    settings = IVF() if index is None else index
    rng = check_random_state(random_state)
    n = X_unit.shape[0]
    k = int(n_neighbors)
    X32 = X_unit if X_unit.dtype == np.float32 else np.asarray(X_unit, dtype=np.float32)
    n_lists = settings.nlist or int(_JOIN_LISTS_PER_SQRT_N * np.sqrt(n))
    n_lists = int(np.clip(n_lists, 1, max(1, n // _MIN_TRAIN_PER_LIST)))
    clock = [perf_counter()]
    centroids = _train(X32, n_lists, metric, rng)
    n_lists = centroids.shape[0]
    clock.append(perf_counter())
    n_probe = first_nprobe(settings, n_lists)
    sample = np.sort(rng.choice(n, min(settings.recall_sample, n), replace=False))
    probes = nearest_lists(X32, centroids, metric, kept_probes(settings, n_lists, sample.size))
    index = InvertedLists(probes[:, 0], n_lists)
    clock.append(perf_counter())
    recall = float("nan")
    if sample.size:
        exact_ids, exact = exact_search(X32, k, metric, rows=sample)
        ranked = nearest_lists(X32[sample], centroids, metric, most_adapted(settings, n_lists))
        n_probe = adapted_nprobe(ranked, probes[exact_ids, 0], settings, n_lists)
        if n_probe is None:
            del index, probes
            indices, sims = exact_search(X_unit, k, metric, progress=progress)
            return indices, sims, {"algorithm": "exact", "nlist": n_lists, "nprobe": None,
                                   "recall": 1.0, "recall_sample": int(sample.size)}
        found = _joined(X_unit, X32, index, sample, ranked[:, :n_probe], k, metric)[1]
        recall = neighbor_recall(found, exact)
    if n_probe > probes.shape[1]:
        probes = nearest_lists(X32, centroids, metric, n_probe)
    elif n_probe < probes.shape[1]:
        probes = np.ascontiguousarray(probes[:, :n_probe])
    clock.append(perf_counter())
    indices, sims = _joined(X_unit, X32, index, np.arange(n), probes, k, metric, progress)
    clock.append(perf_counter())
    sizes = np.diff(index.bounds)
    # What the stages computed, for their rates: similarities (pairs of D-vectors).
    work = {"train": _KMEANS_ITERATIONS * min(n, _JOIN_TRAIN_PER_LIST * n_lists) * n_lists,
            "assign": n * n_lists, "recall": sample.size * n,
            "join": int(sizes[probes].sum())}
    timings = dict(zip(("train", "assign", "recall", "join"), np.diff(clock).tolist(),
                       strict=True))
    if recall < settings.min_recall:
        warn_caller(
            f"the approximate neighbour search (IVF self-join, nlist={n_lists}, "
            f"nprobe={n_probe}) found {recall:.3f} of the exact neighbours of {sample.size} "
            f"sampled points, below min_recall={settings.min_recall:g}: raise nprobe (or "
            "leave it None, adapted) or use the exact search.", NeighborRecallWarning)
    return indices, sims, {"algorithm": "ivf", "nlist": n_lists, "nprobe": n_probe,
                           "recall": recall, "recall_sample": int(sample.size),
                           "timings": timings, "similarities": work, "order": index.order}


train_centroids = _train
"""`_train` under a public name, for the distributed fit (the same sample and k-means)."""
joined = _joined
"""`_joined` under a public name, for the distributed fit's replicated join (the same join,
re-scoring and exact fallback)."""
