"""Labels of new points for a fitted `KSSC` (an extension: k-SSC itself is transductive).

A new point is coded as the fit codes a training point: over its nearest training points in
every neighbour view (the same metric, the same top principal directions removed, the same
search: exact, or an IVF index with the fit's lists and probes), with the same solver model
and penalty scale (the relaxed model by homotopy, to its optimum: `kssc.coding.homotopy`).
It joins the cluster whose training points' part of its code rebuilds it best (the
smallest residual ||x - X_c z_c||, the rule of sparse representation classification; SSSC
assigns its out-of-sample points by a class residual too). Random candidates are left out:
they keep the fit's graph connected, and a new point adds nothing to that graph.

The search structure (`QueryIndex`) is built from the fitted data on the first `predict` and
kept: the coded training rows (the fit's dtype) and, per view, its rows in float32 (with an
IVF index: grouped by list, transposed), each array with room for a batch of new points
before its training rows, so that a batch is searched (the compiled IVF kernel, or blocked
GEMMs and the compiled top-k), coded (the fit's kernels on every core) and labelled (a
compiled kernel) without copying the training points again.
"""

import dataclasses
import weakref
from contextlib import nullcontext
from threading import Lock

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils import check_random_state

from ._base import unit_rows
from .coding._kernels import blocks
from .coding.admm import ADMM
from .coding.representation import (
    _n_threads,
    kssc_coefficients,
    numba_threads,
    outlier_gamma,
    penalty,
)
from .neighbors._ann import _train
from .neighbors._centroids import nearest_lists
from .neighbors._exact import _n_workers, run_threads
from .neighbors._ivf_join import InvertedLists
from .neighbors._topk import empty_top_k, update_rows
from .neighbors.candidates import _check_views, merge_candidates, top_components
from .utils._validation import normalize_rows
from .utils._warnings import warn_caller, warn_not_converged

# New points per batch: about this many bytes of their rows (float64), whatever n_features.
_BATCH_BYTES = 32 * 2**20
# Similarities of one block of new points against the training points (float32, per worker
# thread) in the exact search.
_QUERY_BYTES = 16 * 2**20
# The scores `kssc._predict_kernels.rescore_sort_range` sorts by.
_METRIC_CODES = {"euclidean": 0, "abs_cosine": 1, "l2": 2}
# The search structure of every fitted model that predicted, while the model lives: kept
# outside the model, whose attributes `predict` leaves unchanged (as scikit-learn asks) and
# whose pickle does not carry it.
_INDEXES = weakref.WeakKeyDictionary()


@dataclasses.dataclass
class _View:
    """One neighbour view's search structure. `rows` (batch + n, D): the view's rows (unit
    for the cosine metrics), the batch's first; `db32` the same rows in float32 (centred for
    "l2", whose `half_sq_norms` rank by distance); with an IVF index (`lists` not None) only
    the batch's rows. The index: `lists`, the training rows grouped by list
    (`kssc._predict_kernels.transposed_lists`; place p is training row order[p], list l
    holds places bounds[l] .. bounds[l + 1] - 1), its `centroids`, and the lists a row
    probes, `nprobe`."""

    top: np.ndarray | None
    renormalise: bool
    rows: np.ndarray
    db32: np.ndarray
    centre: np.ndarray | None = None
    half_sq_norms: np.ndarray | None = None
    lists: np.ndarray | None = None
    order: np.ndarray | None = None
    bounds: np.ndarray | None = None
    centroids: np.ndarray | None = None
    nprobe: int = 0


@dataclasses.dataclass
class QueryIndex:
    """What `predict` keeps from the fit: `coded` (batch + n, D), the coded training rows
    after room for a batch; one `_View` per neighbour view; the counts per view; the
    global l1 weight (None: computed per point) and the outlier term's gamma; `key`, the
    fit (its `neighbors_`) and settings it was built for; `lock`, held while the shared batch
    rows are used."""

    fitted: np.ndarray
    key: tuple
    batch: int
    coded: np.ndarray
    views: list
    counts: list
    weight: float | None
    gamma: float | None
    lock: Lock = dataclasses.field(default_factory=Lock)


def _index_key(model):
    """The settings the kept structure depends on (beside the fit itself)."""
    return (repr(model.n_neighbors), repr(model.neighbor_pcs),
            model.metric, model.normalize, model.lam, model.lam_mode, model.positive,
            repr(model.solver), repr(model.neighbor_search_.get("nlist")),
            repr(model.neighbor_search_.get("nprobe")), model.neighbor_search_["algorithm"])


def _with_room(rows, batch, dtype):
    """`rows` (n, D) after `batch` zero rows, as one C-contiguous array of `dtype`."""
    out = np.empty((batch + rows.shape[0], rows.shape[1]), dtype=dtype)
    out[:batch] = 0.0
    out[batch:] = rows
    return out


def global_weight(P, indices, lam, positive, gamma=None):
    """The fit's l1 weight with ``lam_mode="global"``: lam times the smallest positive
    lambda_max over the coded training rows P: `kssc.coding.representation.penalty`'s number, by a
    compiled kernel reading the rows in place (penalty gathers them, the cost of a first
    `predict`)."""
    from ._predict_kernels import lambda_max_blocks

    scale = np.empty(indices.shape[0])
    lambda_max_blocks(blocks(scale.size, _n_threads()), P,
                      np.ascontiguousarray(indices, dtype=np.int64), bool(positive), scale)
    if gamma is not None:
        scale = np.maximum(scale, np.abs(P).max(axis=1) / gamma)
    positive_scale = scale > 0
    return lam * (scale[positive_scale].min() if positive_scale.any() else 1.0)


def _solver(model):
    solver = ADMM() if isinstance(model.solver, str) and model.solver == "admm" else model.solver
    if isinstance(solver, ADMM) and solver.stopping == "all":
        # Per point: a new point's code must not depend on the others predicted with it.
        solver = dataclasses.replace(solver, stopping="each")
    return solver


def build_index(model):
    """The `QueryIndex` of the fitted KSSC `model`: the views of the fit's candidate search
    over its coded rows, each searched as the fit searched it (exact, or an IVF index of the
    fit's nlist and nprobe, its lists trained as the fit trains them)."""
    train = model._fit_X
    n, dim = train.shape
    P = unit_rows(train, train.dtype, warn=False) if model.normalize else train
    batch = int(max(1, min(_BATCH_BYTES // (8 * dim), max(n, 4096))))
    coded = _with_room(P, batch, P.dtype)
    search = model.neighbor_search_
    ivf = search["algorithm"] == "ivf"
    rng = check_random_state(model.random_state)
    counts, pcs = _check_views(model.n_neighbors, model.neighbor_pcs)
    views = []
    for removed in pcs:
        removed = min(removed, min(P.shape) - 1)
        top = top_components(P, removed) if removed > 0 else None
        renormalise = model.metric != "l2" and not (model.normalize and top is None)
        if top is None and not renormalise:
            rows = coded
        else:
            Q = P if top is None else P - (P @ top.T) @ top
            rows = _with_room(normalize_rows(Q)[0] if renormalise else Q, batch, P.dtype)
        view = _View(top, renormalise, rows, np.asarray(rows, dtype=np.float32))
        if model.metric == "l2":
            view.centre = rows[batch:].mean(axis=0)
            view.db32 = np.asarray(rows - view.centre, dtype=np.float32)
            view.half_sq_norms = 0.5 * np.einsum("ij,ij->i", view.db32[batch:],
                                                 view.db32[batch:])
        elif ivf:
            from ._predict_kernels import transposed_lists

            train32 = view.db32[batch:]
            view.centroids = _train(train32, search["nlist"], model.metric, rng)
            lists = InvertedLists(nearest_lists(train32, view.centroids, model.metric, 1)[:, 0],
                                  search["nlist"])
            view.order, view.bounds = lists.order, lists.bounds
            view.lists = transposed_lists(train32, view.order, view.bounds)
            view.db32 = np.array(view.db32[:batch])
            view.nprobe = int(search["nprobe"])
        views.append(view)
    solver = _solver(model)
    gamma = (outlier_gamma(P, model.lam) if isinstance(solver, ADMM) and solver.outlier
             else None)
    weight = None
    if model.lam_mode == "global":
        weight = global_weight(P, model.neighbors_, model.lam, model.positive, gamma)
    return QueryIndex(model.neighbors_, _index_key(model), batch, coded, views, counts, weight,
                      gamma)


def exact_top_k(db32, queries, offset, k, metric, half_sq_norms=None):
    """Float32 top-k (unordered) of the rows `queries` of `db32` among its rows offset..end:
    (m, k) row indices of db32. Blocks of queries, one per worker thread at a time, each
    multiplied against the training rows in column chunks of `_QUERY_BYTES` and selected by
    the compiled running top-k."""
    database = db32[offset:]
    n, m = database.shape[0], queries.size
    block = int(min(max(1, m), 256))
    width = int(max(1, min(n, _QUERY_BYTES // (4 * block))))
    starts = range(0, m, block)
    workers = _n_workers(len(starts))
    scores, indices = empty_top_k(m, k)

    def search(worker):
        buffer = np.empty(block * width, dtype=np.float32)
        for q in starts[worker::workers]:
            ids = queries[q:q + block]
            points = db32[ids]
            for c in range(0, n, width):
                columns = database[c:c + width]
                S = np.matmul(points, columns.T,
                              out=buffer[:ids.size * columns.shape[0]].reshape(ids.size, -1))
                if metric == "abs_cosine":
                    np.abs(S, out=S)
                elif metric == "l2":
                    S -= half_sq_norms[c:c + columns.shape[0]]
                update_rows(S, np.arange(offset + c, offset + c + columns.shape[0]), scores,
                            indices, q)

    run_threads([lambda w=w: search(w) for w in range(workers)], workers)
    return indices


def _dense_top_k(rows, queries, batch, k, metric):
    """Top-k (unordered) of the rows `queries` of `rows` among its rows batch..end, by one
    float64 product per block of queries (the few rows an IVF index leaves short)."""
    train = rows[batch:]
    step = int(max(1, _QUERY_BYTES // (8 * train.shape[0])))
    found = np.empty((queries.size, k), dtype=np.int64)
    for start in range(0, queries.size, step):
        S = rows[queries[start:start + step]] @ train.T
        if metric == "abs_cosine":
            np.abs(S, out=S)
        found[start:start + step] = np.argpartition(-S, k - 1, axis=1)[:, :k] + batch
    return found


def _search_view(view, b, k, metric, batch, ordered=True):
    """The k nearest training rows (indices into the training points) of the batch's b
    rows, already written to the view's first rows: float32 top-k by the IVF lists or the
    exact search; `ordered`: then re-scored in float64 and sorted, most similar first
    (compiled kernels over numba's threads; ties: the smaller index, as the fit's search)."""
    from ._predict_kernels import ivf_top_k_blocks, rescore_sort_blocks

    bounds = blocks(b, _n_threads())
    if view.lists is not None:
        probes = nearest_lists(view.db32[:b], view.centroids, metric, view.nprobe)
        scores, found = empty_top_k(b, k)
        ivf_top_k_blocks(bounds, view.db32[:b], view.lists, view.bounds, probes,
                         metric == "abs_cosine", scores, found)
        short = np.flatnonzero((found < 0).any(axis=1))
        found = view.order[np.maximum(found, 0)] + batch
        if short.size:  # rows whose probed lists hold fewer than k points: all of them
            found[short] = _dense_top_k(view.rows, short, batch, k, metric)
    else:
        found = exact_top_k(view.db32, np.arange(b), batch, k, metric, view.half_sq_norms)
    if not ordered:
        return found - batch
    by_score = np.empty_like(found)
    rescore_sort_blocks(bounds, view.rows, found, _METRIC_CODES[metric], by_score)
    return by_score - batch


def query_candidates(index, new, metric, ordered=True):
    """Candidates (b, k) of the new rows `new` (coded as the fit codes: unit rows when it
    normalises; at most `index.batch`) among the training points, view by view as
    `kssc.neighbors.candidates.candidate_sets` builds them (without the random candidates). Writes
    them into the index's batch rows. Not `ordered` (one view only): each row's candidates
    in no particular order (a code does not depend on it, up to rounding), without the
    float64 re-sort."""
    b = new.shape[0]
    index.coded[:b] = new
    candidates = np.empty((b, 0), dtype=np.int64)
    for view, count in zip(index.views, index.counts, strict=True):
        if view.rows is not index.coded:
            Q = new if view.top is None else new - (new @ view.top.T) @ view.top
            view.rows[:b] = normalize_rows(Q)[0] if view.renormalise else Q
        if view.centre is not None:
            view.db32[:b] = view.rows[:b] - view.centre
        else:
            view.db32[:b] = view.rows[:b]
        found = _search_view(view, b, candidates.shape[1] + count, metric, index.batch,
                             ordered or len(index.views) > 1)
        candidates = merge_candidates(candidates, found, count) if candidates.shape[1] else found
    return candidates


def residual_labels(new, train, indices, coef, labels):
    """The label whose candidates' part of each code rebuilds the point best.

    For point x with code z over the training points A = train[indices], the residual of
    cluster c is ||x - sum over candidates j in c of z_j a_j||; only clusters holding a
    non-zero coefficient compete (ties: the smaller label). A point with an all-zero code
    gets the label of its nearest candidate. A compiled kernel on all cores.
    """
    from ._predict_kernels import residual_label_blocks

    out = np.empty(indices.shape[0], dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    residual_label_blocks(blocks(indices.shape[0], _n_threads()), np.asarray(new),
                          np.asarray(train), indices, np.ascontiguousarray(coef, dtype=float),
                          np.ascontiguousarray(labels[indices], dtype=np.int64), out)
    return out


def _code(model, index, indices, solver):
    """Codes of the batch's rows over their candidates, and whether each converged: the
    relaxed model's lasso solved exactly by homotopy (`kssc.coding.homotopy`: its optimum,
    where the fit's FISTA stops within its tolerance of it), every other solver as the fit
    runs it."""
    b = indices.shape[0]
    lam_rows = None if index.weight is None else np.full(b, index.weight)
    if isinstance(solver, str) and solver == "relaxed":
        return _homotopy_code(model, index, indices + index.batch, lam_rows)
    coef, _, converged = kssc_coefficients(
        index.coded, indices + index.batch, model.lam, solver=solver, positive=model.positive,
        lam_mode=model.lam_mode, l1_ratio=model.l1_ratio, tol=model.tol,
        max_iter=model.max_iter, chunk_size=model.chunk_size, n_jobs=model.n_jobs,
        lam_rows=lam_rows, gamma=index.gamma)
    return coef, converged


def _homotopy_code(model, index, indices, lam_rows):
    """`_code` for the relaxed model: the batch's rows (the first of `index.coded`) over the
    training rows `indices` (into `index.coded`), on numba's threads (at most n_jobs)."""
    from .coding.homotopy import homotopy_blocks

    b = indices.shape[0]
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    if lam_rows is None:
        lam_rows = penalty(index.coded, indices, model.lam, model.lam_mode,
                           positive=model.positive, chunk_size=b)
    coef = np.zeros(indices.shape)
    n_iter = np.zeros(b, dtype=np.int64)
    converged = np.zeros(b, dtype=bool)
    threads = (nullcontext() if model.n_jobs is None
               else numba_threads(min(effective_n_jobs(model.n_jobs), _n_threads())))
    with threads:
        homotopy_blocks(blocks(b, _n_threads()), index.coded, np.arange(b), indices,
                        lam_rows * model.l1_ratio, lam_rows * (1.0 - model.l1_ratio),
                        bool(model.positive), 8 * indices.shape[1], float(model.tol),
                        int(model.max_iter), coef, n_iter, converged)
    return coef, converged


def query_index(model):
    """The `QueryIndex` of the fitted KSSC `model`: built on its first call for this fit and
    these settings, then kept while the model lives."""
    index = _INDEXES.get(model)
    if index is None or index.fitted is not model.neighbors_ or index.key != _index_key(model):
        index = _INDEXES[model] = build_index(model)
    return index


def predict_labels(model, X):
    """Labels of the validated rows X for the fitted KSSC `model`."""
    index = query_index(model)
    solver = _solver(model)
    new = np.asarray(X, dtype=index.coded.dtype)
    zero = np.zeros(new.shape[0], dtype=bool)
    labels = np.empty(new.shape[0], dtype=np.int64)
    converged = np.ones(new.shape[0], dtype=bool)
    with index.lock:
        for start in range(0, new.shape[0], index.batch):
            part = slice(start, start + index.batch)
            rows = new[part]
            if model.normalize:
                rows, zero[part] = normalize_rows(rows)
            indices = query_candidates(index, rows, model.metric, ordered=False)
            coef, converged[part] = _code(model, index, indices, solver)
            b = indices.shape[0]
            labels[part] = residual_labels(index.coded[:b], index.coded[index.batch:], indices,
                                           coef, model.labels_)
    if isinstance(solver, ADMM):
        warn_not_converged(converged, "ADMM", solver.max_iter)
    else:
        warn_not_converged(converged, solver, model.max_iter)
    if zero.any():
        rows = np.flatnonzero(zero)
        warn_caller(f"{rows.size} new point(s) have zero norm (rows {rows[:5].tolist()}): they "
                    "have no direction and get the largest cluster's label.", UserWarning)
        labels[zero] = np.bincount(model.labels_).argmax()
    return labels
