"""The comparison arithmetic: coefficient differences and label agreement."""

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from kssc.metrics import clustering_error


def dense(matrix):
    """A dense float array of a dense or sparse matrix."""
    return matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix, dtype=float)


def max_abs_dz(ours_rows, theirs_columns):
    """max |Z_ours - Z_theirs^T|: ours has row i coding point i, the authors' code column i."""
    ours, theirs = dense(ours_rows), dense(theirs_columns).T
    if ours.shape != theirs.shape:
        raise ValueError(f"coefficient matrices differ in shape: {ours.shape} != {theirs.shape}.")
    return float(np.abs(ours - theirs).max())


def label_agreement(labels_a, labels_b):
    """(adjusted Rand index, percent of points with the same label after optimal matching)."""
    a, b = np.asarray(labels_a).ravel(), np.asarray(labels_b).ravel()
    return float(adjusted_rand_score(a, b)), 100.0 - clustering_error(a, b)
