"""k-SSC along a grid of settings: penalties x cluster counts from one neighbour search.

The neighbour search runs once; each penalty codes the points once (its own affinity);
each affinity's spectral embedding is computed once, for the largest cluster count, and
its leading eigenvectors serve the smaller counts; each penalty's ARPACK solve starts from
the previous penalty's last eigenvector.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from ._base import warn_isolated
from .coding.admm import ADMM
from .coding.representation import _CHUNK_BYTES, penalty
from .estimator import KSSC
from .spectral._clustering import (
    _DENSE_LIMIT,
    _MULTILEVEL_FROM,
    _check_graph,
    _normalized_affinity,
    arpack_top,
    discretize,
    leaves_out,
    linked_points,
    spectral_labels,
    top_eigenvectors,
)
from .spectral.affinity import symmetric_affinity
from .utils._validation import check_n_clusters, warn_degenerate, warn_few_distinct


def kssc_path(X, lams, n_clusters, *, neighbors=None, **params):
    """Labels of `KSSC` for every penalty and cluster count, from one neighbour search.

    As scikit-learn's `lasso_path` fits a grid of penalties in one call, this fits the grid
    ``lams x n_clusters``: the neighbours are searched (or taken from `neighbors`) once, the
    points are coded once per penalty (with ``lam_mode="global"``, the default, the smallest
    lambda_max that scales every penalty is computed once), and the affinity of each penalty
    is embedded once, with as many eigenvectors as the largest cluster count, whose leading
    ones give the smaller counts. With an integer `random_state` every setting's random
    steps start from the generator's state after the search, as in a separate fit, and the
    coefficient solves start from zero, as in a fit (a warm start from the previous penalty
    would move the codes within the solver's tolerance, and the labels with them). So each
    setting gets the labels of
    ``KSSC(n_clusters=c, lam=lam, **params).fit(X, neighbors=neighbors)`` up to the eigen
    solve: identical up to 1,000 linked points (the dense eigensolver); above, ARPACK's
    vectors for the largest count agree with a solve for fewer, and (but for "njw") the
    solve that starts from the previous penalty's last eigenvector with one from the fit's
    random vector, to about 1e-11, which gives the same partition wherever the affinity has
    at most c connected components, though the label numbers can differ (the discretisation
    breaks near-ties between separate components by those last digits). With more components
    than clusters (a fit warns), which components share a cluster is arbitrary, in a fit as
    here. Where a count exceeds the clusters the data hold, the split through a cluster can
    move a few points with those digits (the discretisation's iterations): on
    benchmarks/bench_path.py's data, 2 and 6 of 20,000 points at count 6 for two of the five
    penalties started from the previous one's vector. Above 50,000 linked points (the
    multilevel eigensolver, whose draws depend on the count) and for a count of n - 1 or
    more each count gets its own eigen solve. Asking one eigenvector beyond the clusters the
    data hold makes ARPACK's solve several times slower (its last eigenvalue lies close to
    the next), in a fit as here; from the previous penalty's vector it takes about a third
    of the products (`_arpack_from`).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Points as rows, as `KSSC.fit` takes them.
    lams : array-like of float
        Values of KSSC's `lam` (in its `lam_mode`), in the order the result gives them.
    n_clusters : array-like of int
        Cluster counts, in the order the result gives them.
    neighbors : array-like, (indices, distances) pair or sparse matrix, default=None
        Precomputed neighbours, as `KSSC.fit` takes them; None searches.
    **params
        Other parameters of `KSSC` (not `lam` or `n_clusters`).

    Returns
    -------
    labels : ndarray of shape (len(lams), len(n_clusters), n_samples)
        ``labels[i, j]``: the labels of penalty ``lams[i]`` with ``n_clusters[j]`` clusters.

    See Also
    --------
    KSSC : One setting; its `fit` takes the same `neighbors`.

    Examples
    --------
    >>> from kssc import clustering_error, kssc_path
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    >>> labels = kssc_path(X, [0.001, 0.01], [2, 3], n_neighbors=10, random_state=0)
    >>> labels.shape
    (2, 2, 90)
    >>> float(clustering_error(y, labels[0, 1]))
    0.0
    """
    taken = {"lam", "n_clusters"} & params.keys()
    if taken:
        raise TypeError(f"kssc_path takes lams and n_clusters as lists; got {sorted(taken)} "
                        "among the KSSC parameters.")
    lams = np.asarray(lams, dtype=float).ravel()
    counts = np.asarray(n_clusters).ravel()
    if lams.size == 0 or counts.size == 0:
        raise ValueError(f"lams and n_clusters must be non-empty; got {lams.size} penalties "
                         f"and {counts.size} cluster counts.")
    models = [KSSC(lam=float(lam), **params) for lam in lams]
    for model in models:
        model._validate_params()
    model = models[0]
    X = validate_data(model, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                      ensure_min_samples=2)
    counts = [check_n_clusters(c.item() if isinstance(c, np.generic) else c, X.shape[0])
              for c in counts]
    warn_few_distinct(X, max(counts))
    rng = check_random_state(model.random_state)
    model._timings, model._given_neighbors = {}, neighbors
    P, solver = model._coded_points(X)
    with model._timed("neighbours"):
        indices, order = model._candidates(P, rng)
    state = rng.get_state()
    labels = np.empty((lams.size, len(counts), X.shape[0]), dtype=np.int64)
    start = None
    for i, (lam_model, coder) in enumerate(zip(models, _coders(models, P, indices, solver),
                                               strict=True)):
        coder._timings = {}
        Z = coder._code(X, P, indices, solver, order)[0]
        W = symmetric_affinity(Z)
        warn_isolated(W, lambda isolated, m=lam_model: m._isolation_reason(X, isolated),
                      points=X, n_clusters=max(counts))
        labels[i], start = labels_for_counts(W, counts, lam_model.assign_labels, state, start)
    return labels


def _coders(models, P, indices, solver):
    """Models whose `_code` gives the codes of `models`: with ``lam_mode="global"`` (dense
    X, FISTA or the exact solver) each penalty's weight is lam times the smallest lambda_max
    of the points, the same for every penalty: computed once here
    (`kssc.coding.representation.penalty`), each model codes with ``lam_mode="absolute"``
    and that weight (the same weights to the last bit; the scale's pass over every point
    and its candidates cost about a fifth of a coding on the benchmark's data). Otherwise
    `models` themselves."""
    model = models[0]
    if model.lam_mode != "global" or sp.issparse(P) or isinstance(solver, ADMM):
        return models
    k = indices.shape[1]
    chunk_size = model.chunk_size or max(1, _CHUNK_BYTES // (8 * k * max(P.shape[1], k)))
    smallest = penalty(P, indices, 1.0, "global", positive=model.positive,
                       chunk_size=chunk_size)[0]
    return [clone(m).set_params(lam=m.lam * smallest, lam_mode="absolute") for m in models]


def _generator(state):
    rng = np.random.RandomState()
    rng.set_state(state)
    return rng


def labels_for_counts(W, counts, assign_labels, state, start=None):
    """`kssc.spectral._clustering.spectral_labels(W, c, assign_labels, rng)` for every c in
    `counts`, each with a generator in `state`, from one eigen solve for the largest count where the
    eigensolver's random draws do not depend on the count (dense or ARPACK).

    Returns (labels (len(counts), n), start): `start` (n,), the last eigenvector of the
    ARPACK solve of the N-Cut matrix (zero at isolated points), or None, is where the next
    penalty's solve may start (`_top_vectors`). Not for "njw": its matrix has the
    eigenvalue 1 once per connected component, ARPACK can return fewer copies than there
    are (on 4 components asked for 5 vectors, 3 from a random start), and which ones
    depends on the start; the N-Cut matrix's offset separates them."""
    n = W.shape[0]
    linked = linked_points(W)
    n_linked = int(linked.sum())
    largest = max(counts)
    shared = n_linked <= _MULTILEVEL_FROM and (n_linked <= _DENSE_LIMIT or largest < n_linked - 1)
    W_linked = sp.csr_matrix(W) if linked.all() else sp.csr_matrix(W)[linked][:, linked]
    embedding, next_start = None, None
    labels = np.empty((len(counts), n), dtype=np.int64)
    for j, c in enumerate(counts):
        if c == 1 or not shared or not leaves_out(linked, c) and not linked.all():
            labels[j] = spectral_labels(W, c, assign_labels, _generator(state),
                                        report_isolated=False)
            continue
        if embedding is None:
            embedding = _top_vectors(W_linked, largest, assign_labels, _generator(state),
                                     None if start is None else start[linked])
            if n_linked > _DENSE_LIMIT and assign_labels != "njw":
                next_start = np.zeros(n)
                next_start[linked] = embedding[0][:, -1]
        _check_graph(W_linked, c)
        labels[j, linked] = _assign(embedding, c, assign_labels)
        if not linked.all():
            labels[j, ~linked] = np.bincount(labels[j, linked]).argmax()
        found = np.unique(labels[j]).size
        if found < c:
            warn_degenerate(
                f"{found} cluster(s) came out of the spectral step for n_clusters={c}: "
                f"{c - found} stayed empty (duplicated points, or an affinity with fewer "
                "well-separated groups than asked).")
    return labels, next_start


def _top_vectors(W, n_vectors, assign_labels, rng, start=None):
    """(vectors, degrees or None, the generator's state after the eigen solve): the top
    eigenvectors of the N-Cut matrix (`kssc.spectral.ncut_embedding`) or, for "njw", of
    D^-1/2 W D^-1/2 (`kssc.spectral.njw_embedding`), by `kssc.spectral.top_eigenvectors`,
    or, given a non-zero `start` above the dense eigensolver's limit, by ARPACK from
    `start` (`_arpack_from`)."""
    if assign_labels == "njw":
        eps = np.finfo(float).eps
        scale = sp.diags(1.0 / np.sqrt(np.asarray(W.sum(axis=1)).ravel() + eps))
        P, degrees = (scale @ W @ scale).tocsr(), None
    else:
        P, degrees = _normalized_affinity(W)
    if start is None or P.shape[0] <= _DENSE_LIMIT or not start.any():
        vectors = top_eigenvectors(P, n_vectors, rng)[1]
    else:
        vectors = _arpack_from(P, n_vectors, rng, start)
    return vectors, degrees, rng.get_state()


def _arpack_from(P, n_vectors, rng, start):
    """`top_eigenvectors(P, n_vectors, rng)`'s ARPACK solve started from `start` instead of
    a random vector (the generator draws that vector all the same, so that the steps after
    the solve get the state a fit gives them). From the previous penalty's last
    eigenvector, the solve for one cluster more than the benchmark's data hold took 270-320
    matrix-vector products against 600-1,000 from the random start (the last eigenvalue
    lies within 1e-4 of the next; with the random start mixed in at 1e-8 of its norm,
    300-560), for vectors within 1e-11 of the random start's, as close as a solve for one
    vector fewer (entries about 0.05; benchmarks/bench_path.py's data, 20,000 points)."""
    drawn = rng.uniform(-1.0, 1.0, P.shape[0])
    # One connected component at a time, as top_eigenvectors' ARPACK (from the drawn vector
    # on a component where `start` is zero).
    values, vectors = arpack_top(P, n_vectors, start, fallback=drawn)
    return vectors[:, np.argsort(values)[::-1]]


def _assign(embedding, c, assign_labels):
    """Labels from the leading `c` of the shared eigenvectors, as
    `kssc.spectral._clustering._assign` gives them from its own eigen solve of `c` vectors."""
    vectors, degrees, state = embedding
    rng = _generator(state)
    vectors = vectors[:, :c]
    if assign_labels == "njw":
        eps = np.finfo(float).eps
        rows = vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + eps)
        return KMeans(c, n_init=20, random_state=rng).fit_predict(rows).astype(np.int64)
    vectors = vectors / np.sqrt(degrees)[:, None]
    vectors *= np.sqrt(len(degrees)) / np.linalg.norm(vectors, axis=0)
    vectors = vectors * np.where(vectors[0] > 0, -1.0, 1.0)
    if assign_labels == "discretize":
        return discretize(vectors, rng)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = vectors / np.where(norms == 0, 1.0, norms)
    return KMeans(c, n_init=10, random_state=rng).fit_predict(rows).astype(np.int64)
