"""Isolated points: the one policy, from their definition to the fit's warning.

An isolated point has no affinity above `ISOLATION_THRESHOLD` to another point: the N-Cut
matrix drops such an affinity (docs/protocol.md 1.7), so to the spectral step the point is
a component of its own. This module holds the whole policy:

- what an isolated point is (`ISOLATION_THRESHOLD`, `isolated_points`; the distributed N-Cut
  uses the same definition) and the mask of the others (`linked_points`);
- what happens to isolated points (`leaves_out`: the spectral step leaves them out when more
  points than clusters are linked; `ISOLATED_FATE`: they then get the largest cluster's
  label);
- how a fit reports them (`warn_isolated`: one warning per cause, all-zero rows of X
  (`zero_rows`) apart from the other isolated points; `isolated_message`: the one wording).

Two pieces live where they act, for reasons of their own:

- the spectral step applies the policy in `kssc.spectral._clustering`: `spectral_labels`
  clusters the linked points and gives the isolated ones the largest cluster's label, and
  `_normalized_affinity` puts 1 on the diagonal of an isolated point (its own component);
  both are the N-Cut's code, which reads the policy from here;
- why points became isolated is the estimators' to say, as the `reason` they pass to
  `warn_isolated`: `kssc._base.lam_max_reason` tells a lasso's lam >= lambda_max (it rescores
  neighbours, which is the coding stage's business, not the spectral step's).
"""

import numpy as np
import scipy.sparse as sp

from ..utils._validation import ROW_CHUNK_BYTES, warn_degenerate
from ..utils._validation import row_norms as sparse_row_norms

# Affinities at or below this are no link: N-Cut drops them (docs/protocol.md 1.7).
ISOLATION_THRESHOLD = 1e-6


def isolated_points(W, start=0):
    """Indices of the rows of W with no affinity above `ISOLATION_THRESHOLD` to another point.

    The one definition of an isolated point: the fit's warning, the spectral step (which
    leaves these points out) and the distributed N-Cut all use it. Below the threshold an
    affinity is as good as none to the N-Cut matrix, which drops it (docs/protocol.md 1.7).
    `W` may be a row block whose first row is point `start` (its diagonal is at column
    start + i).
    """
    W = sp.csr_matrix(W)
    if not W.has_canonical_format:
        W = W.copy()
        W.sum_duplicates()
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    linked = (np.abs(W.data) > ISOLATION_THRESHOLD) & (W.indices != rows + start)
    return np.flatnonzero(np.bincount(rows[linked], minlength=W.shape[0]) == 0)


def linked_points(W):
    """Mask of the points that are not isolated (`isolated_points`, the one
    definition); the isolated points are left out of the spectral step."""
    linked = np.ones(W.shape[0], dtype=bool)
    linked[isolated_points(W)] = False
    return linked


def leaves_out(linked, n_clusters):
    """Whether the spectral step leaves the isolated points out: when more points than
    clusters are linked (else every label is arbitrary)."""
    return int(linked.sum()) > n_clusters


ISOLATED_FATE = "they are left out of the spectral step and given the largest cluster's label"


def isolated_message(isolated, n, left_out):
    """The one wording of the isolated-points warning (`isolated`: indices among n)."""
    if isolated.size == n:
        return ("the representation has no non-zero coefficient between points (no affinity "
                f"above {ISOLATION_THRESHOLD:g}): every point is isolated and the labels are "
                "arbitrary.")
    fate = ISOLATED_FATE if left_out else "too few points are linked: the labels are arbitrary"
    return (f"{isolated.size} of {n} point(s) are isolated (no affinity above "
            f"{ISOLATION_THRESHOLD:g} to another point; rows {isolated[:5].tolist()}): {fate}.")


def zero_rows(X):
    """Indices of the all-zero rows of X, read a chunk of rows at a time (X may be a map,
    or scipy.sparse)."""
    if sp.issparse(X):
        return np.flatnonzero(sparse_row_norms(X) == 0)
    step = max(1, ROW_CHUNK_BYTES // (8 * X.shape[1]))
    return np.concatenate([start + np.flatnonzero(~np.asarray(X[start:start + step]).any(axis=1))
                           for start in range(0, X.shape[0], step)])


def warn_isolated(W, reason=lambda isolated: "", *, points=None, n_clusters=None):
    """One warning per cause: zero rows of `points`, and other points with no affinity to
    any other point.

    Zero rows (no direction) get one warning of their own, whatever the affinity gives
    them; the other isolated points one warning, which `reason(isolated)` may explain (e.g.
    lam >= lambda_max; called only then). `n_clusters` decides whether the spectral step
    leaves isolated points out (None: it does).
    """
    linked = linked_points(W)
    n = W.shape[0]
    isolated = np.flatnonzero(~linked)
    left_out = n_clusters is None or leaves_out(linked, n_clusters)
    zero = zero_rows(points) if points is not None else np.empty(0, dtype=np.int64)
    if zero.size:
        if linked[zero].any():
            fate = "their labels carry no information"
        else:
            fate = ("they get no affinity, and "
                    + (ISOLATED_FATE if left_out else "the labels are arbitrary"))
        warn_degenerate(f"{zero.size} point(s) have zero norm (rows {zero[:5].tolist()}): they "
                        f"have no direction; {fate}.")
        isolated = np.setdiff1d(isolated, zero)
    if not isolated.size:
        return
    message = isolated_message(isolated, n, left_out)
    explanation = reason(isolated)
    warn_degenerate(f"{message} {explanation}" if explanation else message)
