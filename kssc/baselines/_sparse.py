"""Small helpers that build the sparse representation matrices of the baselines."""

import numpy as np
import scipy.sparse as sp


def dense_to_csr(C):
    """CSR copy of a dense coefficient matrix with its exact zeros dropped."""
    Z = sp.csr_matrix(C)
    Z.eliminate_zeros()
    return Z


def rows_to_csr(columns, values, n_samples):
    """Z (n x n, CSR) with Z[i, columns[i, m]] = values[i, m]; entries with column -1 are absent.

    Repeated columns in a row are summed; exact zeros are dropped.
    """
    n, width = columns.shape
    rows = np.repeat(np.arange(n), width)
    columns = columns.ravel()
    values = np.broadcast_to(values, (n, width)).ravel()
    keep = columns >= 0
    Z = sp.csr_matrix((values[keep], (rows[keep], columns[keep])), shape=(n_samples, n_samples))
    Z.sum_duplicates()
    Z.eliminate_zeros()
    return Z
