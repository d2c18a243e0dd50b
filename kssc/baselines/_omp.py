"""Orthogonal matching pursuit of every point over all the other points, batched.

Each point x_i picks up to `k_max` other points greedily: the one whose inner product with
the current residual is largest (signed, as the k-SSC authors' `gfs_sc`, or in absolute
value, as standard OMP), then the residual becomes x_i minus its projection on the span of
the points picked so far. Points stop early once ||residual|| <= tol.

All points of a block advance together. Each keeps an orthonormal basis of its picked
points (Gram-Schmidt, applied twice for stability) and the triangular factor T with
X_S = T Q, so the residual update is one rank-one step and the least-squares coefficients
one small triangular solve. Memory per block: its correlations with every point plus its
bases, bounded by `block_bytes`.
"""

import numpy as np

_BLOCK_BYTES = 64 * 2**20


def _omp_block(X, rows, k_max, tol, signed):
    b, d = len(rows), X.shape[1]
    residual = X[rows].copy()
    basis = np.zeros((b, k_max, d))
    factor = np.zeros((b, k_max, k_max))
    projection = np.zeros((b, k_max))
    picked = np.full((b, k_max), -1, dtype=np.int64)
    basis_point = np.full((b, k_max), -1, dtype=np.int64)
    n_basis = np.zeros(b, dtype=np.int64)
    active = np.linalg.norm(residual, axis=1) > tol
    for step in range(k_max):
        a = np.flatnonzero(active)
        if a.size == 0:
            break
        corr = residual[a] @ X.T
        if not signed:
            np.abs(corr, out=corr)
        corr[np.arange(a.size), rows[a]] = -np.inf
        j = np.argmax(corr, axis=1)
        picked[a, step] = j
        v = X[j]
        Q = basis[a]
        coeffs = np.einsum("amd,ad->am", Q, v)
        w = v - np.einsum("am,amd->ad", coeffs, Q)
        again = np.einsum("amd,ad->am", Q, w)
        w -= np.einsum("am,amd->ad", again, Q)
        coeffs += again
        norm = np.linalg.norm(w, axis=1)
        # A pick already in the span (a re-pick, or a duplicate point) adds no direction: the
        # residual stays, as with the pseudo-inverse projection of the authors' code.
        grows = norm > 1e-10 * np.maximum(np.linalg.norm(v, axis=1), 1e-300)
        g, m = a[grows], n_basis[a[grows]]
        q = w[grows] / norm[grows, None]
        basis[g, m] = q
        factor[g, m] = coeffs[grows]
        factor[g, m, m] = norm[grows]
        p = np.einsum("ad,ad->a", q, residual[g])
        projection[g, m] = p
        residual[g] -= p[:, None] * q
        basis_point[g, m] = j[grows]
        n_basis[g] += 1
        active[a] = np.linalg.norm(residual[a], axis=1) > tol
    # Least squares over the independent picks: X_S = T Q and P x = p Q give T^T c = p.
    unused = np.arange(k_max)[None, :] >= n_basis[:, None]
    pad_row, pad_slot = np.nonzero(unused)
    factor[pad_row, pad_slot, pad_slot] = 1.0
    coef = np.linalg.solve(np.swapaxes(factor, 1, 2), projection[:, :, None])[:, :, 0]
    coef[unused] = 0.0
    return picked, basis_point, coef, np.linalg.norm(residual, axis=1)


def omp_all_points(X, k_max, tol=1e-3, *, signed=True, block_bytes=_BLOCK_BYTES):
    """OMP of every row of X over the other rows.

    Parameters
    ----------
    X : array (n, d), usually unit rows.
    k_max : int, picks per point (at most n - 1).
    tol : float, stop a point once the norm of its residual is <= tol.
    signed : bool, pick by the largest signed inner product (the authors' `gfs_sc`) or by
        the largest absolute one (standard OMP, scikit-learn's `OrthogonalMatchingPursuit`).

    Returns
    -------
    picked : (n, k_max) int, the point picked at every step, -1 after an early stop
        (may repeat a point: already picked points stay candidates, as in `gfs_sc`).
    support : (n, k_max) int, the distinct picks that enlarged the span, -1 padded.
    coef : (n, k_max) least-squares coefficients over `support` (0 where padded).
    residual_norm : (n,) norm of the final residual.
    """
    n, d = X.shape
    block = int(max(1, min(n, block_bytes // (8 * (n + k_max * (d + k_max))))))
    parts = [_omp_block(X, np.arange(s, min(s + block, n)), k_max, tol, signed)
             for s in range(0, n, block)]
    return tuple(np.concatenate(p) for p in zip(*parts, strict=True))
