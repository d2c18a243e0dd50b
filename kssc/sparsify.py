"""Post-processing of the representation before the affinity, as Elhamifar and Vidal's code
does it (`thrC.m`, `BuildAdjacency.m`)."""

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


def max_normalize_rows(Z):
    """Z (CSR) with every row divided by its largest |entry| (rows of zeros stay zero)."""
    Z = sp.csr_matrix(Z)
    peak = np.asarray(abs(Z).max(axis=1).todense()).ravel()
    Z = (sp.diags(1.0 / np.where(peak > 0, peak, 1.0)) @ Z).tocsr()
    Z.eliminate_zeros()
    return Z
