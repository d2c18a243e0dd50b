"""Approximate all-nearest-neighbour search with an inverted-file index (faiss ``IndexIVFFlat``),
its recall measured against the exact search on a sample of points.

Chosen by measurement on 2 cores against hnswlib (HNSW) and pynndescent: at N = 10^5..10^6,
D = 64, k = 20 the IVF index built and searched all points fastest at recall >= 0.99 and,
unlike graph indexes built by several threads, it is deterministic: its only randomness is
the training sample, the k-means seed and the recall sample, all drawn from `random_state`,
and a search scans whole inverted lists exactly (docs/scaling.md has the numbers).

Similarity is the inner product of unit vectors: signed cosine for "euclidean" (the same
ranking as Euclidean distance) and, for "abs_cosine", the best of the searches for x and -x.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ._exact import exact_search
from ._warnings import warn_caller

_LISTS_PER_SQRT_N = 4  # default nlist: about 4 sqrt(n) inverted lists
_FIRST_PROBE = 16  # the adapted nprobe starts here and doubles
# An adapted nprobe scanning more than this share of the lists costs about as much as the
# exact search (N = 60,000, D = 64, 979 lists: nprobe 16 took 0.58 of the exact search's
# time, nprobe 64 1.2): the exact search runs instead.
_EXACT_FROM_SHARE = 1 / 32
_TRAIN_PER_LIST = 64
_MIN_TRAIN_PER_LIST = 39  # faiss' own floor for a k-means training set
_BATCH = 2**13  # rows searched and re-scored at once (~100 MiB of gathered candidates)
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
    """An approximate neighbour index (faiss ``IndexIVFFlat``) and its recall check.

    The `neighbor_algorithm` of `KSSC` and the `algorithm` of `nearest_neighbors`
    ("approximate" is ``IVF()``). The points are split into `nlist` inverted lists by
    k-means; a query scans its `nprobe` nearest lists. At fit time the exact neighbours of
    `recall_sample` random points are searched (O(recall_sample * n * D)) and the recall,
    the share of their found neighbours at least as similar as their exact k-th neighbour,
    is reported (``KSSC.neighbor_recall_``).

    Parameters
    ----------
    nlist : int or None, default=None
        Inverted lists; None: about 4 sqrt(n_samples) (at least 39 points per list).
    nprobe : int or None, default=None
        Lists scanned per query; None adapts it: from 16, doubled until the sampled recall
        reaches `target_recall`; when that takes more than 1/32 of the lists (data of high
        intrinsic dimension), the exact search runs instead, which is then cheaper.
    target_recall : float in (0, 1], default=0.95
        The recall the adapted `nprobe` aims at.
    min_recall : float in [0, 1], default=0.9
        A `NeighborRecallWarning` is raised when the measured recall is below it.
    recall_sample : int, default=1000
        Points whose recall is measured; 0 measures nothing (recall NaN, `nprobe` None
        then means 16, no warning).

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
    >>> model.neighbor_recall_ >= 0.95
    True
    >>> float(clustering_error(y, model.labels_))
    0.0
    """

    nlist: int | None = None
    nprobe: int | None = None
    target_recall: float = 0.95
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


def _import_faiss():
    try:
        import faiss
    except ImportError as error:
        raise ImportError(
            "neighbor_algorithm='approximate' needs the faiss library: "
            "pip install faiss-cpu (or conda install -c pytorch faiss-cpu)."
        ) from error
    return faiss


def _build_index(faiss, X32, n_lists, rng):
    dim = X32.shape[1]
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFFlat(quantizer, dim, n_lists, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = int(rng.randint(np.iinfo(np.int32).max))
    n = X32.shape[0]
    n_train = min(n, _TRAIN_PER_LIST * n_lists)
    train = X32 if n_train == n else X32[np.sort(rng.choice(n, n_train, replace=False))]
    index.train(np.ascontiguousarray(train))
    for start in range(0, n, 2**16):
        index.add(np.ascontiguousarray(X32[start:start + 2**16]))
    return index


def _best_other(X_unit, rows, candidates, n_neighbors, metric):
    """The `n_neighbors` most similar distinct candidates of each row, never the row itself.

    Returns (indices, similarities, short): `short` flags the rows with too few valid
    candidates (their slots hold -1), to be searched exactly.
    """
    candidates = np.sort(candidates, axis=1)
    duplicate = np.zeros(candidates.shape, dtype=bool)
    duplicate[:, 1:] = candidates[:, 1:] == candidates[:, :-1]
    invalid = (candidates < 0) | duplicate | (candidates == rows[:, None])
    safe = np.where(invalid, 0, candidates)
    sims = np.einsum("id,ikd->ik", np.asarray(X_unit[rows], dtype=float),
                     np.asarray(X_unit[safe], dtype=float))
    if metric == "abs_cosine":
        sims = np.abs(sims)
    sims[invalid] = -np.inf
    order = np.argsort(-sims, axis=1, kind="stable")[:, :n_neighbors]
    sims = np.take_along_axis(sims, order, 1)
    indices = np.take_along_axis(candidates, order, 1)
    short = ~np.isfinite(sims).all(axis=1)
    return indices, sims, short


def _search_rows(index, X_unit, X32, rows, n_neighbors, metric):
    """Index neighbours of the points `rows` (each asked for k + 1 candidates, also for -x
    with "abs_cosine"); rows the index under-fills are searched exactly."""
    k = n_neighbors
    indices = np.empty((rows.size, k), dtype=np.int64)
    sims = np.empty((rows.size, k))
    for start in range(0, rows.size, _BATCH):
        part = slice(start, start + _BATCH)
        queries = np.ascontiguousarray(X32[rows[part]])
        candidates = index.search(queries, k + 1)[1]
        if metric == "abs_cosine":
            candidates = np.hstack([candidates, index.search(-queries, k + 1)[1]])
        indices[part], sims[part], short = _best_other(X_unit, rows[part], candidates, k, metric)
        if short.any():
            redo = np.flatnonzero(short) + start
            indices[redo], sims[redo] = exact_search(X_unit, k, metric, rows=rows[redo])
    return indices, sims


def neighbor_recall(found, exact, tol=_RECALL_TOL):
    """Mean share of the found neighbours at least as similar as the exact k-th one.

    `found` and `exact` hold the similarities (n, k) of the found and of the exact
    neighbours of the same points, most similar first; a found neighbour counts when its
    similarity is >= the exact k-th minus `tol`, so ties broken differently still count.
    """
    return float(np.mean(found >= exact[:, -1:] - tol))


def approximate_search(X_unit, n_neighbors, metric="euclidean", index=None,
                           random_state=None):
    """Approximate k most similar other points of every unit-norm row of `X_unit`.

    The index (`index`, an `IVF`; default ``IVF()``) is built once on X and queried with
    every point for k + 1 candidates (one may be the point itself, or an exact duplicate
    standing in for it); with "abs_cosine" also with -x, and the two candidate lists are
    merged. Self and repeated candidates are dropped by index, so a point is never its own
    neighbour, also with duplicates. Rows left with fewer than k candidates (tiny inverted
    lists) are searched exactly. Runs on all cores (faiss' OpenMP threads); the result is
    deterministic given `random_state`. X_unit may be float32 (also a memory map).

    With an adapted nprobe (`IVF`) that would scan more than `_EXACT_FROM_SHARE` of the
    lists, the exact search runs instead.

    Returns (indices (n, k) int64, similarities (n, k) float64, info): info holds
    "algorithm" ("ivf", or "exact" after that switch), "nlist", "nprobe", "recall" (NaN
    when not measured) and "recall_sample".
    """
    faiss = _import_faiss()
    settings = IVF() if index is None else index
    rng = check_random_state(random_state)
    n = X_unit.shape[0]
    k = int(n_neighbors)
    X32 = np.ascontiguousarray(X_unit, dtype=np.float32)
    n_lists = settings.nlist or int(_LISTS_PER_SQRT_N * np.sqrt(n))
    n_lists = int(np.clip(n_lists, 1, max(1, n // _MIN_TRAIN_PER_LIST)))
    ivf = _build_index(faiss, X32, n_lists, rng)
    sample = np.sort(rng.choice(n, min(settings.recall_sample, n), replace=False))
    n_probe = min(n_lists, settings.nprobe or _FIRST_PROBE)
    recall = float("nan")
    if sample.size:
        exact = exact_search(X32, k, metric, rows=sample)[1]
        while True:
            ivf.nprobe = n_probe
            recall = neighbor_recall(_search_rows(ivf, X_unit, X32, sample, k, metric)[1], exact)
            if settings.nprobe or recall >= settings.target_recall or n_probe >= n_lists:
                break
            n_probe = min(2 * n_probe, n_lists)
            if n_probe > _EXACT_FROM_SHARE * n_lists:
                del ivf
                indices, sims = exact_search(X_unit, k, metric)
                return indices, sims, {"algorithm": "exact", "nlist": n_lists, "nprobe": None,
                                       "recall": 1.0, "recall_sample": int(sample.size)}
    ivf.nprobe = n_probe
    indices, sims = _search_rows(ivf, X_unit, X32, np.arange(n), k, metric)
    if recall < settings.min_recall:
        warn_caller(
            f"the approximate neighbour search (faiss IVF, nlist={n_lists}, nprobe={n_probe}) "
            f"found {recall:.3f} of the exact neighbours of {sample.size} sampled points, below "
            f"min_recall={settings.min_recall:g}: raise nprobe (or leave it None, adapted) or "
            "use the exact search.", NeighborRecallWarning)
    return indices, sims, {"algorithm": "ivf", "nlist": n_lists, "nprobe": n_probe,
                           "recall": recall, "recall_sample": int(sample.size)}
