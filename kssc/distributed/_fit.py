"""The distributed k-SSC fit: validate, neighbours, coefficients, affinity, N-Cut."""

from numbers import Integral, Real
from time import perf_counter

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..estimator import APPROXIMATE_FROM
from ..utils._validation import check_n_clusters, check_n_neighbors, warn_degenerate
from ..utils._warnings import warn_caller
from . import _coefficients, _neighbors, _spectral
from ._blocks import RowBlocks, check_dask_array, part, unit_block
from ._worker_tuning import tuned_workers

# The least memory_limit a worker may have. A worker process that has run a fit holds about
# 360 MiB of libraries and state before any data (numpy, scipy, numba, faiss, distributed;
# measured on a 360-point fit, docs/scaling.md), and dask pauses a worker at 80 % of its
# limit and restarts it at 95 %: 1 GiB leaves about 450 MiB for blocks before a pause (at
# 300 MB the fit died with KilledWorker).
MIN_WORKER_MEMORY = 2**30


class DistributedKSSC:
    """What `kssc.distributed.fit` learned; per-point arrays stay on the cluster as dask arrays.

    Attributes
    ----------
    labels_ : dask.array.Array of shape (n_samples,)
        Cluster of every point, 0 to ``n_clusters - 1``.
    neighbors_ : dask.array.Array of shape (n_samples, n_neighbors)
        Indices of each point's neighbours, most similar first.
    coefficients_ : dask.array.Array of shape (n_samples, n_neighbors)
        Row i codes point i over ``neighbors_[i]``: Z[i, neighbors_[i, m]] = coefficients_[i, m]
        (`kssc.spectral.affinity.coefficients_to_sparse` builds Z from both when it fits).
    n_iter_ : dask.array.Array of shape (n_samples,)
        Solver iterations per point.
    n_clusters_ : int
        Number of clusters asked for.
    neighbor_recall_ : float or None
        Approximate search: the recall `KSSC` reports in ``neighbor_recall_`` (the share of
        the found neighbours at least as similar as the exact k-th one), on a sample of
        1,000 points searched exactly. None with exact search.
    timings_ : dict
        Seconds per stage: "neighbours", "coefficients", "representation", "spectral",
        "total" (wall clock on the client).
    shuffle_bytes_ : dict
        Bytes each shuffle moves between blocks: with the approximate search "replicas"
        (every row to every worker, where each can hold them) or "rows_by_list" (the join
        split by list), then "neighbour_rows", "transpose", and "eigen_halo" (the rows of
        LOBPCG's iterate all its products moved).
    n_features_in_ : int
        Number of features of X.
    """

    def __init__(self, labels, neighbors, coefficients, n_iter, n_clusters, recall, timings,
                 shuffle_bytes, n_features, blocks):
        self.labels_ = labels
        self.neighbors_ = neighbors
        self.coefficients_ = coefficients
        self.n_iter_ = n_iter
        self.n_clusters_ = n_clusters
        self.neighbor_recall_ = recall
        self.timings_ = timings
        self.shuffle_bytes_ = shuffle_bytes
        self.n_features_in_ = n_features
        # The dask arrays name the results' keys; these futures keep them on the cluster.
        self._blocks = blocks


def _check_options(n_neighbors, lam, lam_mode, solver, metric, neighbor_algorithm, n):
    k = check_n_neighbors(n_neighbors, n)
    if not isinstance(lam, Real) or not lam > 0:
        raise ValueError(f"lam must be a positive number; got {lam!r}.")
    if lam_mode not in ("absolute", "relative", "global"):
        raise ValueError(f"lam_mode must be 'absolute', 'relative' or 'global'; got "
                         f"{lam_mode!r}.")
    if solver not in ("relaxed", "exact"):
        raise ValueError(f"solver must be 'relaxed' or 'exact'; got {solver!r}.")
    if metric not in ("euclidean", "abs_cosine"):
        raise ValueError(f"metric must be 'euclidean' or 'abs_cosine'; got {metric!r}.")
    if neighbor_algorithm == "auto":
        neighbor_algorithm = "approximate" if n >= APPROXIMATE_FROM else "exact"
    if neighbor_algorithm not in ("exact", "approximate"):
        raise ValueError("neighbor_algorithm must be 'auto', 'exact' or 'approximate'; got "
                         f"{neighbor_algorithm!r}.")
    return k, neighbor_algorithm


_ONLY = {"neighbor_pcs": 0, "n_random": 0, "normalize": True, "threshold": None,
         "assign_labels": "discretize"}


def _check_unsupported(**params):
    """ValueError naming the first `KSSC` parameter given a value the distributed fit lacks."""
    for name, value in params.items():
        only = _ONLY[name]
        if not (value is None if only is None else (
                isinstance(value, bool) == isinstance(only, bool) and value == only)):
            raise ValueError(f"{name}={value!r} is not available in the distributed fit "
                             f"(only {only!r}); fit on one machine with kssc.KSSC.")


def _check_workers(client):
    """MemoryError naming every worker whose memory_limit is below MIN_WORKER_MEMORY."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    if not workers:
        raise RuntimeError("the cluster has no worker: start workers before fitting.")
    small = {address: info["memory_limit"] for address, info in workers.items()
             if 0 < (info.get("memory_limit") or 0) < MIN_WORKER_MEMORY}
    if small:
        listed = ", ".join(f"{address} ({limit / 2**20:.0f} MiB)"
                           for address, limit in sorted(small.items())[:5])
        raise MemoryError(
            f"{len(small)} worker(s) have a memory_limit below the {MIN_WORKER_MEMORY // 2**20} "
            f"MiB the distributed fit needs: {listed}. A worker's libraries alone take a third "
            "of that and dask pauses a worker at 80 % of its limit; start workers with "
            "memory_limit >= 1 GiB (or fewer workers with more memory each).")


def _unit_blocks(client, X, bounds):
    """Unit-norm float64 row blocks of X on the workers; errors on NaN, warns on zero rows."""
    raw = client.compute(X.to_delayed().ravel().tolist())
    checked = [client.submit(unit_block, f) for f in raw]
    U = RowBlocks([part(client, c, 0) for c in checked], bounds)
    report = client.gather([client.submit(_rows_flagged, c) for c in checked])
    del raw
    bad = np.concatenate([b + start for (b, _), start in zip(report, bounds[:-1], strict=True)])
    if bad.size:
        raise ValueError(f"X contains NaN or infinity in {bad.size} row(s), first at row(s) "
                         f"{bad[:5].tolist()}.")
    zero = np.concatenate([z + start for (_, z), start in zip(report, bounds[:-1], strict=True)])
    if zero.size:
        warn_caller(f"{zero.size} point(s) have zero norm (rows {zero[:5].tolist()}): they have "
                    "no direction, get all-zero coefficients and are labelled by the spectral "
                    "step alone.", UserWarning)
    return U


def _rows_flagged(checked):
    return checked[1], checked[2]


def fit(X, n_clusters, *, n_neighbors=20, lam=0.1, lam_mode="absolute", solver="relaxed",
        positive=True, l1_ratio=1.0, metric="euclidean", affinity="symmetric",
        neighbor_algorithm="auto", tol=1e-6, max_iter=200, neighbor_pcs=0, n_random=0,
        normalize=True, threshold=None, assign_labels="discretize", random_state=None,
        client=None):
    """Cluster a row-partitioned dask array with k-SSC; X stays on the workers at every step.

    With its defaults this is the paper's k-SSC,
    ``KSSC(n_clusters, n_neighbors=20, **kssc.presets.PAPER_SETTING)`` (unit-norm points,
    non-negative lasso codes with lam = 0.1 over the 20 nearest neighbours by Euclidean
    distance of unit vectors, ``W = |Z| + |Z|^T``, N-Cut with Yu and Shi's discretisation);
    ``fit(X, n_clusters, **kssc.presets.preset_params("generic"))`` is ``KSSC(n_clusters)``'s
    defaults (the global penalty scale reduced over every block, max-normalised rows of Z).
    With exact search either gives the single-machine estimator's neighbours and
    coefficients, with the IVF search its neighbours for the same seed
    (tests/kssc/distributed/test_distributed_fit.py). Not available here: `ADMM` solvers
    (the faces and motion presets), threshold, normalize=False, metric="l2", candidate sets
    (lists of n_neighbors, neighbor_pcs, n_random), assign_labels other than "discretize",
    and n_clusters=None: those parameters take only the value that means "none of it". The
    eigenvectors come from a distributed LOBPCG (the same invariant subspace as `KSSC`'s
    ARPACK, to the multilevel route's tolerance: where the eigen-gap is small the partition
    can differ from `KSSC`'s). docs/scaling.md describes the stages, their shuffles and their
    measured cost.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Points as rows, chunked by rows only (`read_npy`, ``dask.array.from_zarr``, ...).
    n_clusters : int
        Number of clusters.
    n_neighbors : int, default=20
        Neighbours each point is coded over; must be < n_samples.
    lam : float, default=0.1
        The l1 weight (`KSSC`'s `lam`).
    lam_mode : {"absolute", "relative", "global"}, default="absolute"
        `lam` itself, a fraction of each point's lambda_max, or of the smallest positive
        lambda_max over all points (`KSSC`'s default).
    solver : {"relaxed", "exact"}, default="relaxed"
        FISTA on the lasso or LADMPSAP on the exact problem, the single-machine kernels.
    positive : bool, default=True
        Non-negative coefficients.
    l1_ratio : float in (0, 1], default=1.0
        The elastic net's mix in the relaxed model (`KSSC`'s `l1_ratio`).
    metric : {"euclidean", "abs_cosine"}, default="euclidean"
        Neighbour similarity of unit vectors.
    affinity : {"symmetric", "max_normalized"}, default="symmetric"
        ``W = |Z| + |Z|^T``, or with every row of Z first divided by its largest absolute entry.
    neighbor_algorithm : {"auto", "exact", "approximate"}, default="auto"
        Exact search by block pairs (cost n^2), or the single machine's IVF self-join
        (`kssc.IVF()`'s defaults): where every worker's memory_limit holds four times the
        rows (12 bytes a coordinate), each worker joins its own blocks on a copy of all
        rows; above, the join is split by inverted list. "auto" is exact below 50,000
        points, as in `KSSC`.
    tol : float, default=1e-6
        Solver tolerance.
    max_iter : int, default=200
        Solver iteration cap.
    neighbor_pcs : int, default=0
        `KSSC`'s parameter, accepted with the one value supported here (so that a preset's
        parameters can be passed whole); so are the next four.
    n_random : int, default=0
        Random candidates: none here.
    normalize : bool, default=True
        The points are always coded as unit rows here.
    threshold : None, default=None
        No thresholding of Z's rows here.
    assign_labels : {"discretize"}, default="discretize"
        Yu and Shi's discretisation.
    random_state : int, RandomState instance or None, default=None
        Seeds the index (its k-means and recall samples, as `KSSC`'s), the eigensolver's
        start (one seed per block) and the discretisation (the same seed gives the same
        answer).
    client : distributed.Client or None, default=None
        The cluster's client; None uses the current one (``distributed.get_client()``).

    Returns
    -------
    model : DistributedKSSC
        Labels, neighbours, coefficients (dask arrays on the cluster), recall, timings.
        Cluster ids are numbered in the order of each cluster's first point (isolated
        points aside), so the same partition always has the same ids (also after a worker
        was lost).

    Raises
    ------
    MemoryError
        When a worker's memory_limit is below MIN_WORKER_MEMORY (1 GiB), before any work.

    See Also
    --------
    kssc.KSSC : The single-machine estimator; this function reproduces it with the paper's
        setting (`kssc.presets.PAPER_SETTING`).

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from kssc.datasets import make_subspaces
    >>> from kssc.distributed import fit
    >>> X, y, _ = make_subspaces(3, 3, 40, 20, random_state=0)
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \\
    ...         Client(cluster) as client:
    ...     model = fit(da.from_array(X, chunks=(40, -1)), 3, n_neighbors=10, random_state=0)
    ...     labels = model.labels_.compute()
    >>> labels.shape
    (120,)
    """
    from distributed import KilledWorker, get_client
    from distributed.client import CancelledError

    bounds = check_dask_array(X)
    n = int(bounds[-1])
    check_n_clusters(n_clusters, n)
    if n_clusters is None:
        raise ValueError("n_clusters must be given in the distributed fit (no eigen-gap).")
    if isinstance(n_neighbors, (list, tuple, np.ndarray)):
        raise ValueError(f"n_neighbors={n_neighbors!r}: neighbour views (a list of counts) are "
                         "not available in the distributed fit; fit on one machine with "
                         "kssc.KSSC.")
    k, algorithm = _check_options(n_neighbors, lam, lam_mode, solver, metric,
                                  neighbor_algorithm, n)
    _check_unsupported(neighbor_pcs=neighbor_pcs, n_random=n_random, normalize=normalize,
                       threshold=threshold, assign_labels=assign_labels)
    if affinity not in ("symmetric", "max_normalized"):
        raise ValueError(f"affinity must be 'symmetric' or 'max_normalized'; got {affinity!r}.")
    if not (isinstance(l1_ratio, Real) and 0 < l1_ratio <= 1) or (
            l1_ratio != 1 and solver != "relaxed"):
        raise ValueError(f"l1_ratio must be in (0, 1], and 1 with the exact solver; got "
                         f"{l1_ratio!r}.")
    if not isinstance(max_iter, Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}.")
    client = client if client is not None else get_client()
    _check_workers(client)
    options = {"lam": lam, "solver": solver, "positive": positive, "lam_mode": lam_mode,
               "l1_ratio": l1_ratio, "tol": tol, "max_iter": max_iter}
    try:
        with tuned_workers(client):
            return _fit(client, X, bounds, n_clusters, k, algorithm, metric, options,
                        affinity, check_random_state(random_state))
    except (CancelledError, KilledWorker) as exc:
        raise RuntimeError(
            f"the distributed fit lost its workers ({type(exc).__name__}: {exc}). Workers "
            "running it died (killed, out of memory or restarted) and the scheduler could not "
            "recompute results they held (it gives up on a task after several lost workers, "
            "and forgets the tasks no client holds). Rerun the fit, with more memory per "
            "worker if they died for memory.") from exc


def _fit(client, X, bounds, n_clusters, k, algorithm, metric, options, affinity, rng):
    """The stages of `fit` on checked arguments."""
    from distributed import wait

    n = int(bounds[-1])
    start = perf_counter()
    U = _unit_blocks(client, X, bounds)
    shuffled, search = {}, {}
    if algorithm == "exact":
        indices, _ = _neighbors.exact_neighbor_blocks(client, U, k, metric)
    else:
        indices, _, moved, search = _neighbors.approximate_neighbor_blocks(client, U, k,
                                                                           metric, rng)
        shuffled["replicas" if search["join"] == "replicated" else "rows_by_list"] = moved
    wait(indices.futures)
    found = perf_counter()
    coef, n_iter, missed, shuffled["neighbour_rows"] = _coefficients.coefficients(
        client, U, indices, k, options, search.get("lists"), search.pop("partitions", None))
    solved = perf_counter()
    if missed:
        warn_caller(f"{missed} of {n} point(s) reached max_iter={options['max_iter']} in the "
                    f"{options['solver']} solver before meeting the tolerance; raise max_iter "
                    "or tol.",
                    ConvergenceWarning)
    W, degrees, isolated, n_isolated, shuffled["transpose"] = _spectral.affinity(
        client, indices, coef, max_normalized=affinity == "max_normalized")
    if n_isolated:
        warn_degenerate(f"{n_isolated} of {n} point(s) are isolated (no coefficient above 1e-6 "
                        "to or from another point): they are given the largest cluster's "
                        "label.")
    if n_clusters == 1:
        labels = RowBlocks([client.submit(np.zeros, b - a, dtype=np.int64)
                            for a, b in U.spans()], bounds)
        shuffled["eigen_halo"] = 0
    else:
        labels, shuffled["eigen_halo"] = _spectral.ncut_labels(client, W, degrees, isolated,
                                                                n_clusters, rng)
    wait(labels.futures)
    done = perf_counter()
    recall = None if algorithm == "exact" else search["recall"]
    del U, W, search
    timings = {"neighbours": found - start, "coefficients": solved - found,
               "representation": solved - start, "spectral": done - solved,
               "total": done - start}
    return DistributedKSSC(labels.to_dask((), np.int64), indices.to_dask((k,), np.int64),
                           coef.to_dask((k,), np.float64), n_iter.to_dask((), np.int64),
                           n_clusters, recall, timings, shuffled, X.shape[1],
                           [labels, indices, coef, n_iter])
