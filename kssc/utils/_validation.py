"""Input checks shared by the kernels and the estimators."""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import check_scalar

from ._warnings import warn_caller


class DegenerateFitWarning(UserWarning):
    """A fit ran but its result carries little or no information.

    Raised when X has fewer distinct points than clusters asked, when the representation
    has no non-zero coefficient or leaves points isolated, when fewer clusters come out
    than were asked, when the affinity graph has more
    connected components than clusters, and when the eigen-gap picks a single cluster.

    See Also
    --------
    sklearn.exceptions.ConvergenceWarning : Raised when a solver reaches its iteration cap.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from kssc import KSSC, DegenerateFitWarning
    >>> X = np.random.default_rng(0).standard_normal((30, 5))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = KSSC(n_clusters=2, n_neighbors=5, lam=5.0).fit(X)
    >>> any(issubclass(w.category, DegenerateFitWarning) for w in caught)
    True
    """


def warn_degenerate(message):
    """Issue a DegenerateFitWarning at the first caller outside kssc, baselines and sklearn."""
    warn_caller(message, DegenerateFitWarning)


def check_array_2d(X, name="X", min_samples=1):
    """Return `X` as a finite float array of shape (n_samples, n_features).

    Raises a ValueError that names the problem (dimension, emptiness, NaN or inf).
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got an array of shape {X.shape}. "
            "Reshape 1-D data with X.reshape(-1, 1) or X.reshape(1, -1)."
        )
    if X.shape[0] < min_samples or X.shape[1] == 0:
        raise ValueError(
            f"{name} has shape {X.shape}; "
            f"at least {min_samples} sample(s) and 1 feature are required."
        )
    if X.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric; got dtype {X.dtype}.")
    X = X.astype(np.result_type(X.dtype, np.float32), copy=False)
    if not np.isfinite(X).all():
        bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
        raise ValueError(
            f"{name} contains NaN or infinity in {bad.size} row(s), "
            f"first at row(s) {bad[:5].tolist()}."
        )
    return X


def normalize_rows(X):
    """Scale every row of `X` to unit Euclidean norm.

    Rows of zero norm have no direction: they stay zero and are flagged in the returned mask.
    Rows whose squared entries would overflow or underflow (norm outside
    [sqrt(tiny) / eps, sqrt(max) * eps] of the dtype) are first divided by their largest
    entry, so every finite non-zero row gets its direction.
    """
    info = np.finfo(X.dtype)
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(X, axis=1)
    zero = norms == 0
    X_unit = X / np.where(zero, 1.0, norms)[:, None]
    extreme = ~((norms >= np.sqrt(info.tiny) / info.eps) & (norms <= np.sqrt(info.max) * info.eps))
    if extreme.any():
        peaks = np.abs(X[extreme]).max(axis=1)
        zero[extreme] = peaks == 0
        scaled = X[extreme] / np.where(peaks == 0, 1.0, peaks)[:, None]
        scaled_norms = np.linalg.norm(scaled, axis=1)
        X_unit[extreme] = scaled / np.where(peaks == 0, 1.0, scaled_norms)[:, None]
    return X_unit, zero


def check_n_neighbors(n_neighbors, n_samples):
    """`n_neighbors` as an int, checked against `n_samples`: each point needs that many others.

    The type and range are scikit-learn's `check_scalar` (an estimator has checked them
    already through its `_parameter_constraints`; public functions rely on this).
    """
    check_scalar(n_neighbors, "n_neighbors", Integral, min_val=1)
    if n_neighbors >= n_samples:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be < n_samples={n_samples}: "
            "each point needs that many other points."
        )
    return int(n_neighbors)


def check_n_clusters(n_clusters, n_samples):
    """`n_clusters` as an int (None passes), checked against `n_samples`; type and range as
    in `check_n_neighbors`."""
    if n_clusters is None:
        return None
    check_scalar(n_clusters, "n_clusters", Integral, min_val=1)
    if n_clusters > n_samples:
        raise ValueError(f"n_clusters={n_clusters} must be <= n_samples={n_samples}.")
    return int(n_clusters)


def refuse_sparse(X, estimator):
    """TypeError naming what to do when X is a scipy.sparse matrix or array.

    k-SSC codes dense rows (neighbour search, Gram matrices): a sparse input is converted by
    the user, who knows whether the dense copy fits, or reduced first.
    """
    if not sp.issparse(X):
        return
    n, d = X.shape
    gib = n * d * 8 / 2**30
    raise TypeError(
        f"{estimator} takes dense data; got a sparse {X.format} matrix of shape {X.shape} "
        f"({X.nnz} stored values). Convert it with X.toarray() (a dense float64 copy of "
        f"{gib:.3g} GiB; float32 halves it: X.astype('float32').toarray()), or, when that "
        "does not fit, reduce it first, e.g. with "
        "sklearn.decomposition.TruncatedSVD(n_components=100), without centring the columns "
        "(the user guide, 'Preprocessing').")


# Bytes of rows that a pass over X reads (and casts) at a time: counting distinct points,
# scaling rows to unit norm, the suitability check (X may be a memory map).
ROW_CHUNK_BYTES = 4 * 2**20


def warn_inexact_integers(X, name="X"):
    """DataConversionWarning when X holds integers that float64 cannot hold exactly.

    Integers beyond 2**53 in magnitude round when cast to float64 (what the estimators fit):
    when the points differ in those low digits (e.g. values near a large common offset), the
    fit clusters the rounded values. Counts the changed entries a chunk of rows at a time.
    """
    if sp.issparse(X):
        return
    X = np.asarray(X)
    if X.dtype.kind not in "iu" or X.dtype.itemsize < 8 or X.ndim != 2 or X.size == 0:
        return
    step = max(1, ROW_CHUNK_BYTES // (X.dtype.itemsize * X.shape[1]))
    changed, largest = 0, 0
    for start in range(0, X.shape[0], step):
        chunk = X[start:start + step]
        with np.errstate(invalid="ignore"):  # a value that rounds to 2**63 wraps: changed too
            back = chunk.astype(np.float64).astype(chunk.dtype)
        wrong = back != chunk
        if wrong.any():
            changed += int(np.count_nonzero(wrong))
            largest = max(largest, int(np.abs(chunk[wrong].astype(np.float64)).max()))
    if changed:
        warn_caller(
            f"{name} holds {changed} integer entr{'y' if changed == 1 else 'ies'} beyond 2**53 "
            f"(up to {largest:.3e}) that float64 cannot hold exactly: they are rounded to the "
            "nearest float64 for the fit, so differences between points in their low digits "
            "are lost. Subtract a common offset before the cast if that is where the points "
            "differ; cast X to float yourself to accept the rounding.", DataConversionWarning)


def warn_few_distinct(X, n_clusters):
    """DegenerateFitWarning when X has fewer distinct rows than `n_clusters`.

    Identical points cannot be told apart: some cluster then holds copies of a point that
    another cluster also holds, and the labels of those copies are arbitrary. Reads X a
    chunk at a time and stops as soon as `n_clusters` distinct rows are found (at once
    for usual data).
    """
    if n_clusters is None or n_clusters < 2:
        return
    step = max(1, ROW_CHUNK_BYTES // (X.dtype.itemsize * X.shape[1]))
    distinct = np.empty((0, X.shape[1]), dtype=X.dtype)
    for start in range(0, X.shape[0], step):
        rows = X[start:start + step]
        distinct = np.unique(np.concatenate([distinct, rows.toarray() if sp.issparse(rows)
                                             else np.asarray(rows)]), axis=0)
        if distinct.shape[0] >= n_clusters:
            return
    warn_degenerate(
        f"X has {distinct.shape[0]} distinct point(s) for n_clusters={n_clusters}: identical "
        "points cannot be told apart, so copies of one point are split across clusters and "
        "their labels are arbitrary. Remove duplicates or ask for fewer clusters."
    )


def row_norms(X):
    """Euclidean norm of every row of the sparse matrix X, in float64."""
    X = sp.csr_matrix(X)
    return np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=float).ravel())
