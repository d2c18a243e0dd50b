"""From coefficients to the affinity: Z from the coefficients, W = |Z| + |Z|^T from Z.

Thresholding and max-normalisation are Elhamifar and Vidal's post-processing
(`thrC.m`, `BuildAdjacency.m`); which points W leaves isolated is `isolation`'s to say.
"""

import numpy as np
import scipy.sparse as sp

AFFINITIES = ("symmetric", "max_normalized")
def threshold_rows(coef, rho):
    """Keep, per row of `coef`, the largest |entries| whose l1 mass first reaches `rho` of
    the row's l1 mass (thrC); the rest become 0. Rows of zeros stay zero."""
    a = np.abs(coef)
    order = np.argsort(-a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, 1)
    before = np.cumsum(s, axis=1) - s
    keep = np.zeros(coef.shape, dtype=bool)
    np.put_along_axis(keep, order, before < rho * s.sum(axis=1, keepdims=True), 1)
    return np.where(keep, coef, 0.0)


def coefficients_to_sparse(indices, coef, n_samples):
    """Z (n_samples x n_samples, CSR) with Z[i, indices[i, m]] = coef[i, m].

    `coef` may be a scalar (the same value everywhere); entries whose index is -1 are
    absent; repeated indices in a row are summed; exact zeros are dropped.
    """
    n, k = indices.shape
    coef = np.asarray(coef, dtype=float)
    if coef.ndim == 0:
        coef = np.full((n, k), coef)
    present = indices >= 0
    if present.all():
        Z = sp.csr_matrix((coef.ravel(), indices.ravel(), np.arange(0, n * k + 1, k)),
                          shape=(n_samples, n_samples))
    else:
        rows = np.repeat(np.arange(n), k).reshape(n, k)
        Z = sp.csr_matrix((coef[present], (rows[present], indices[present])),
                          shape=(n_samples, n_samples))
    Z.sum_duplicates()
    Z.eliminate_zeros()
    return Z


def dense_to_sparse(C):
    """Z: CSR copy of a dense coefficient matrix with its exact zeros dropped."""
    Z = sp.csr_matrix(C)
    Z.eliminate_zeros()
    return Z


def max_normalize_rows(Z):
    """Z (CSR) with every row divided by its largest |entry| (rows of zeros stay zero)."""
    Z = sp.csr_matrix(Z)
    peak = np.asarray(abs(Z).max(axis=1).todense()).ravel()
    Z = (sp.diags(1.0 / np.where(peak > 0, peak, 1.0)) @ Z).tocsr()
    Z.eliminate_zeros()
    return Z


def symmetric_affinity(Z):
    """Return W = |Z| + |Z|^T as a CSR matrix (no normalisation, thresholding or power)."""
    Z = sp.csr_matrix(Z)
    A = abs(Z)
    W = (A + A.T).tocsr()
    W.eliminate_zeros()
    # A copy: the sum's arrays are views of buffers sized for nnz(A) + nnz(A^T) (scipy's
    # sparse addition prunes by slicing), which the copy lets go.
    return W.astype(np.float64)


