"""Compiled (numba) labelling of new points by the residual of each cluster's part of their
codes (`kssc._predict.residual_labels`). Imported on first use, as the coefficient kernels."""

import numpy as np
from numba import prange

from ._kernels import jit, parallel_jit


@jit
def residual_label_range(lo, hi, points, X, indices, coef, candidate_labels, out):
    """out[i], i in [lo, hi): the label c minimising ||points[i] - sum over m with
    candidate_labels[i, m] == c of coef[i, m] X[indices[i, m]]|| among the labels holding a
    non-zero coefficient (ties: the smaller label); candidate_labels[i, 0] when none does."""
    k, D = indices.shape[1], X.shape[1]
    rest = np.empty(D)
    for i in range(lo, hi):
        best, best_label = np.inf, -1
        for m in range(k):
            c = candidate_labels[i, m]
            if coef[i, m] == 0.0:
                continue
            seen = False
            for p in range(m):
                if coef[i, p] != 0.0 and candidate_labels[i, p] == c:
                    seen = True
                    break
            if seen:
                continue
            for d in range(D):
                rest[d] = points[i, d]
            for p in range(m, k):
                z = coef[i, p]
                if z != 0.0 and candidate_labels[i, p] == c:
                    a = X[indices[i, p]]
                    for d in range(D):
                        rest[d] -= z * a[d]
            s = 0.0
            for d in range(D):
                s += rest[d] * rest[d]
            if s < best or (s == best and c < best_label):
                best, best_label = s, c
        out[i] = best_label if best_label >= 0 else candidate_labels[i, 0]


@parallel_jit
def residual_label_blocks(bounds, points, X, indices, coef, candidate_labels, out):
    """`residual_label_range` over the blocks [bounds[b], bounds[b + 1]), in parallel."""
    for b in prange(bounds.size - 1):
        residual_label_range(bounds[b], bounds[b + 1], points, X, indices, coef,
                             candidate_labels, out)
