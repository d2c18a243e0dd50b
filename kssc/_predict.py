"""Labels of new points for a fitted `KSSC` (an extension: k-SSC itself is transductive).

A new point is coded as the fit codes a training point: over its nearest training points in
every neighbour view (the same metric, the same top principal directions removed), with the
same solver model and penalty scale. It joins the cluster whose training points' part of
its code rebuilds it best (the smallest residual ||x - X_c z_c||, the rule of sparse
representation classification; SSSC assigns its out-of-sample points by a class residual
too). Random candidates are left out: they keep the fit's graph connected, and a new point
adds nothing to that graph.
"""

import dataclasses

import numpy as np

from ._base import unit_rows
from .coding.admm import ADMM
from .coding.representation import kssc_coefficients, outlier_gamma, penalty
from .neighbors._exact import _database, rescore
from .neighbors.candidates import _check_views, merge_candidates, top_components
from .utils._validation import normalize_rows
from .utils._warnings import warn_caller, warn_not_converged

# Similarities (float32) of a block of new points to every training point, and gathered
# candidate vectors (float64) of a block of new points, held at a time.
_BLOCK_BYTES = 64 * 2**20


def query_neighbours(queries, database, n_neighbors, metric):
    """The `n_neighbors` training rows of `database` most similar to every row of `queries`.

    The exact search of `kssc._exact` (the same float32 scores, then float64 re-scoring of
    the k found) with queries that are not database rows, so none is excluded.
    """
    n, m = database.shape[0], queries.shape[0]
    k = n_neighbors
    db = _database(database, metric)
    half_sq_norms = None
    if metric == "l2":
        # _database centred the training points; the queries move with them.
        queries_32 = (queries - database.mean(axis=0)).astype(np.float32)
        half_sq_norms = 0.5 * np.einsum("ij,ij->i", db, db)
    else:
        queries_32 = np.asarray(queries, dtype=np.float32)
    block = int(max(1, min(m, _BLOCK_BYTES // (4 * n))))
    indices = np.empty((m, k), dtype=np.int64)
    for start in range(0, m, block):
        part = slice(start, min(start + block, m))
        S = queries_32[part] @ db.T
        if metric == "abs_cosine":
            np.abs(S, out=S)
        elif metric == "l2":
            S -= half_sq_norms
        found = np.argpartition(-S, k - 1, axis=1)[:, :k]
        scores = rescore(queries[part], database, found, metric)
        if metric == "abs_cosine":
            scores = np.abs(scores)
        indices[part] = np.take_along_axis(found, np.argsort(-scores, axis=1, kind="stable"), 1)
    return indices


def query_candidates(train, new, n_neighbors, neighbor_pcs, metric, unit_rows):
    """Candidates (m, k) of every new point among the training points, view by view as
    `kssc.candidates.candidate_sets` builds them (without the random candidates)."""
    counts, pcs = _check_views(n_neighbors, neighbor_pcs)
    indices = np.empty((new.shape[0], 0), dtype=np.int64)
    for count, removed in zip(counts, pcs, strict=True):
        removed = min(removed, min(train.shape) - 1)
        Q, Q_new = train, new
        if removed > 0:
            top = top_components(train, removed)
            Q, Q_new = train - (train @ top.T) @ top, new - (new @ top.T) @ top
        if metric != "l2" and not (unit_rows and removed <= 0):
            Q, Q_new = normalize_rows(Q)[0], normalize_rows(Q_new)[0]
        found = query_neighbours(Q_new, Q, indices.shape[1] + count, metric)
        indices = merge_candidates(indices, found, count) if indices.shape[1] else found
    return indices


def residual_labels(new, train, indices, coef, labels):
    """The label whose candidates' part of each code rebuilds the point best.

    For point x with code z over the training points A = train[indices], the residual of
    cluster c is ||x - sum over candidates j in c of z_j a_j||; only clusters holding a
    non-zero coefficient compete. A point with an all-zero code gets the label of its
    nearest candidate.
    """
    m, k = indices.shape
    n_labels = int(labels.max()) + 1
    candidate_labels = labels[indices]
    out = np.empty(m, dtype=np.int64)
    block = int(max(1, _BLOCK_BYTES // (8 * k * train.shape[1])))
    for start in range(0, m, block):
        part = slice(start, min(start + block, m))
        x = np.asarray(new[part], dtype=float)
        A = np.asarray(train[indices[part]], dtype=float)
        z, own = coef[part], candidate_labels[part]
        residual = np.full((x.shape[0], n_labels), np.inf)
        for c in np.unique(own[z != 0]):
            z_c = np.where(own == c, z, 0.0)
            held = (z_c != 0).any(axis=1)
            rebuilt = np.einsum("bk,bkd->bd", z_c[held], A[held])
            residual[held, c] = np.linalg.norm(x[held] - rebuilt, axis=1)
        coded = np.isfinite(residual).any(axis=1)
        out[part] = np.where(coded, residual.argmin(axis=1), own[:, 0])
    return out


def predict_labels(model, X):
    """Labels of the validated rows X for the fitted KSSC `model`."""
    train = model._fit_X
    if model.normalize:  # the points the fit coded, made as it made them
        train = unit_rows(train, train.dtype, warn=False)
    solver = ADMM() if isinstance(model.solver, str) and model.solver == "admm" else model.solver
    if isinstance(solver, ADMM) and solver.stopping == "all":
        # Per point: a new point's code must not depend on the others predicted with it.
        solver = dataclasses.replace(solver, stopping="each")
    new = np.asarray(X, dtype=train.dtype)
    zero = np.zeros(new.shape[0], dtype=bool)
    if model.normalize:
        new, zero = normalize_rows(new)
    indices = query_candidates(train, new, model.n_neighbors, model.neighbor_pcs, model.metric,
                               model.normalize)
    gamma = outlier_gamma(train, model.lam) if isinstance(solver, ADMM) and solver.outlier else None
    lam_rows = None
    if model.lam_mode == "global":
        # The weight of the fit: lam times the smallest lambda_max over the training points.
        weight = penalty(train, model.neighbors_, model.lam, "global", positive=model.positive,
                         outlier_gamma=gamma, chunk_size=max(1, 2**20 // train.shape[1]))[0]
        lam_rows = np.full(new.shape[0], weight)
    # Rows 0..m-1 of the stack are the new points; their candidates index the training rows.
    stacked = np.vstack([new, train])
    coef, _, converged = kssc_coefficients(
        stacked, indices + new.shape[0], model.lam, solver=solver, positive=model.positive,
        lam_mode=model.lam_mode, l1_ratio=model.l1_ratio, tol=model.tol,
        max_iter=model.max_iter, chunk_size=model.chunk_size, n_jobs=model.n_jobs,
        lam_rows=lam_rows, gamma=gamma)
    if isinstance(solver, ADMM):
        warn_not_converged(converged, "ADMM", solver.max_iter)
    else:
        warn_not_converged(converged, solver, model.max_iter)
    labels = residual_labels(new, train, indices, coef, model.labels_)
    if zero.any():
        rows = np.flatnonzero(zero)
        warn_caller(f"{rows.size} new point(s) have zero norm (rows {rows[:5].tolist()}): they "
                    "have no direction and get the largest cluster's label.", UserWarning)
        labels[zero] = np.bincount(model.labels_).argmax()
    return labels
