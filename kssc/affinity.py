"""The affinity W = |Z| + |Z|^T."""

import numpy as np
import scipy.sparse as sp


def symmetric_affinity(Z):
    """Return W = |Z| + |Z|^T as a CSR matrix (no normalisation, thresholding or power)."""
    Z = sp.csr_matrix(Z)
    A = abs(Z)
    W = (A + A.T).tocsr()
    W.eliminate_zeros()
    return W.astype(np.float64)
