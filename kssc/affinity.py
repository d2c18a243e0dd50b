"""The affinity W = |Z| + |Z|^T, and which points it leaves isolated."""

import numpy as np
import scipy.sparse as sp


def symmetric_affinity(Z):
    """Return W = |Z| + |Z|^T as a CSR matrix (no normalisation, thresholding or power)."""
    Z = sp.csr_matrix(Z)
    A = abs(Z)
    W = (A + A.T).tocsr()
    W.eliminate_zeros()
    return W.astype(np.float64)


def isolated_points(W):
    """Indices of the points with no non-zero affinity to another point (diagonal ignored)."""
    W = sp.csr_matrix(W)
    off_diagonal = W - sp.diags(W.diagonal())
    off_diagonal.eliminate_zeros()
    return np.flatnonzero(np.diff(off_diagonal.indptr) == 0)
