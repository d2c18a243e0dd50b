"""Solvers for SSC over the full N x N coefficient matrix (rows convention).

Both solve  min_C lam * ||C||_1 + 1/2 * ||X - C X||_F^2,  diag(C) = 0  (optionally C >= 0),
where row i of C rebuilds point i (the transpose of the paper's Z). `column_wise=False` is
one solver over the whole matrix with shared step constants and a stopping rule on totals
(the authors' `ssc_relaxed` / `ssc_exact`); `column_wise=True` gives every point its own
constants and stopping rule (`ssc_relaxed_par` / `ssc_exact_par`), still computed as whole
matrix products over the points that have not stopped yet.

Both first replace X by an N x r factor F with the same Gram matrix, r = rank(X)
(`row_space_factor`). FISTA's smooth part then goes through whichever product is cheaper:
with the N x N Gram matrix K one product C K per step (N^3), or one C F and one R F^T
(2 N^2 r) when r < N / 2. Once C is sparse enough the product with it is a sparse one.
Work arrays are allocated once and the elementwise passes are fused, compiled and parallel
over rows (`_ssc_kernels`): at N = 750 they, not the products, set the run time.
"""

import numpy as np
from threadpoolctl import threadpool_limits

from ._batch import ProblemBatch
from ._ssc_kernels import extrapolate, prox_gradient_rows, sparse_rows_product

# Below this fraction of non-zeros, C @ K is computed as a sparse-dense product.
_SPARSE_BELOW = 0.05


def _blas_threads():
    """One BLAS thread for FISTA: its compiled elementwise passes (numba, every core)
    dominate, and OpenBLAS threads left spinning after a product slow them about threefold.
    (LADMPSAP's two n x n x r products per step dominate it: it keeps the caller's BLAS
    threads, 1.65 s on 1 core and 1.20 s on 2 at N = 1,000, D = 500, against 1.70 s on 2
    with one BLAS thread.)"""
    return threadpool_limits(limits=1, user_api="blas")


def _rowdot(A, B):
    """Row-wise inner products (a batched matmul is several times faster than einsum here)."""
    return np.matmul(A[:, None, :], B[:, :, None])[:, 0, 0]


def _take(A, rows):
    """A[rows] without a copy when `rows` is every row in order (the shared-step solvers)."""
    return A if len(rows) == A.shape[0] else A[rows]


def _product(C, B, out):
    """out = C @ B, skipping the zeros of C when it is mostly zeros."""
    if np.count_nonzero(C) <= _SPARSE_BELOW * C.size:
        sparse_rows_product(C, np.arange(C.shape[0]), B, out)
    else:
        np.matmul(C, B, out=out)
    return out


def _product_rows(C, rows, nnz, B, out):
    """out[rows] = C[rows] @ B, given the non-zero count `nnz` of those rows."""
    if nnz <= _SPARSE_BELOW * len(rows) * C.shape[1]:
        sparse_rows_product(C, rows, B, out)
    elif len(rows) == C.shape[0]:
        np.matmul(C, B, out=out)
    else:
        out[rows] = C[rows] @ B
    return out


class _GramSmooth:
    """f(C) = 1/2 ||X - C X||^2 through K = X X^T; the cached product is M = C K."""

    def __init__(self, X):
        self.K = X @ X.T
        self.sq_norms = np.diag(self.K).copy()
        self.width = self.K.shape[0]

    def operand(self):
        return self.K

    def value(self, C, M, rows):
        return 0.5 * _rowdot(C, M) - _rowdot(C, _take(self.K, rows)) + 0.5 * self.sq_norms[rows]

    def curvature(self, C, M):
        """||c X||^2 of every row c of C."""
        return _rowdot(C, M)

    def gradient(self, M, rows, out):
        return np.subtract(M, _take(self.K, rows), out=out)


class _FeatureSmooth:
    """f(C) = 1/2 ||X - C X||^2 through the features; the cached product is M = C X."""

    def __init__(self, X):
        self.X = X
        self.width = X.shape[1]

    def operand(self):
        return self.X

    def value(self, C, M, rows):
        R = _take(self.X, rows) - M
        return 0.5 * _rowdot(R, R)

    def curvature(self, C, M):
        """||c X||^2 of every row c of C."""
        return _rowdot(M, M)

    def gradient(self, M, rows, out):
        return np.matmul(M - _take(self.X, rows), self.X.T, out=out)


def _zero_self(C, rows):
    C[np.arange(len(rows)), rows] = 0.0
    return C


def _prox_inplace(V, threshold, positive):
    """V <- prox of threshold * ||.||_1 (+ indicator(V >= 0) when `positive`), in place."""
    if positive:
        V -= threshold
        return np.maximum(V, 0.0, out=V)
    magnitude = np.abs(V)
    magnitude -= threshold
    np.maximum(magnitude, 0.0, out=magnitude)
    return np.copysign(magnitude, V, out=V)


def ssc_fista(X, lam, *, positive=True, column_wise=False, tol=1e-6, max_iter=200, rho0=1.0,
              growth=1.1):
    """FISTA with backtracking for SSC (docs/protocol.md 1.5).

    Constants of the authors' code: rho_0 = 1, growth 1.1, stop when the objective changes
    by at most `tol` (the total objective, or each point's own with `column_wise`).

    Returns (C dense (n, n), n_iter (n,), converged (n,) bool).
    """
    with _blas_threads():
        return _ssc_fista(X, lam, positive, column_wise, tol, max_iter, rho0, growth)


def _ssc_fista(X, lam, positive, column_wise, tol, max_iter, rho0, growth):
    X = row_space_factor(X)
    n, r = X.shape
    smooth = _FeatureSmooth(X) if 2 * r < n else _GramSmooth(X)
    batch = ProblemBatch(n, n, max_iter)
    act = batch.index
    C, C_prev, J, G, T = (np.zeros((n, n)) for _ in range(5))
    M, M_prev, MJ = (np.zeros((n, smooth.width)) for _ in range(3))
    alpha = np.ones(n) if column_wise else 1.0
    rho = np.full(n, float(rho0))
    F_prev = np.full(n, np.inf)

    def total(v):
        """A per-point quantity, or the total over all points for the shared-step solver."""
        return v if column_wise else np.full(len(v), v.sum())

    def trial(rows):
        """Prox-gradient point of the given rows (positions in the batch) and its model terms."""
        nnz = prox_gradient_rows(G, J, rho, lam, positive, rows, act[rows], C, T, lin, sq, l1)
        _product_rows(C, rows, nnz, smooth.operand(), M)
        full = len(rows) == len(act)
        f_C[rows] = smooth.value(C if full else C[rows], M if full else M[rows], act[rows])

    def first_step(rho):
        """The backtracking of the first step (J = 0) in one product.

        At J = 0 the trial point is B / rho with B = prox(-G, lam), and F <= Q reads
        rho >= ||B X||^2 / ||B||^2, so the smallest rho0 * growth^m passing the test is
        known from the trial at rho0; C, M and the model terms are rescaled to it.
        """
        ratio = total(smooth.curvature(C, M)) / np.maximum(total(sq), np.finfo(float).tiny)
        steps = np.ceil(np.log(np.maximum(ratio / rho, 1.0)) / np.log(growth))
        scale = growth**steps
        rho *= scale
        C[...] /= scale[:, None]
        M[...] /= scale[:, None]
        f_C[:] = smooth.value(C, M, act)
        lin[:] = lin / scale
        sq[:] = sq / scale**2
        l1[:] = l1 / scale

    for it in range(1, max_iter + 1):
        smooth.gradient(MJ, act, out=G)
        f_j = smooth.value(J, MJ, act)
        C, C_prev, M, M_prev = C_prev, C, M_prev, M
        f_C, lin, sq, l1 = (np.empty(len(act)) for _ in range(4))
        # Backtracking on the rows whose quadratic model still underestimates F (all rows
        # together for the shared step).
        everyone = np.arange(len(act))
        trial(everyone)
        if it == 1:
            first_step(rho)
        while True:
            Q = f_j + lin + 0.5 * rho * sq
            bad = total(f_C) > total(Q) + 1e-12 * np.abs(total(Q))
            if not bad.any():
                break
            rows = everyone if bad.all() else np.flatnonzero(bad)
            rho[rows] *= growth
            trial(rows)
        F = lam * l1 + f_C

        alpha_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * alpha**2))
        beta = (alpha - 1.0) / alpha_new * np.ones(len(act))
        alpha = alpha_new
        extrapolate(C, C_prev, beta, J)  # J = C + beta (C - C_prev)
        np.subtract(M, M_prev, out=MJ)
        MJ *= beta[:, None]
        MJ += M

        if column_wise:
            done = np.abs(F - F_prev) <= tol
        else:
            done = np.full(len(act), abs(F.sum() - F_prev.sum()) <= tol)
        F_prev = F
        if done.any():
            batch.finish(done, C, it)
            keep = ~done
            if batch.drop(keep):
                break
            act = batch.index
            C, C_prev, J, G, T = C[keep], C_prev[keep], J[keep], G[keep], T[keep]
            M, M_prev, MJ = M[keep], M_prev[keep], MJ[keep]
            rho, F_prev, alpha = rho[keep], F_prev[keep], alpha[keep]
    return batch.result(C)


def row_space_factor(X):
    """F (n, r) with F F^T = X X^T up to rounding, r the numerical rank of X.

    The SSC objectives see X only through X X^T (the noise and multiplier of the exact model
    stay in the row space of X), so F can replace X: products cost r instead of D per entry,
    a large saving on low-rank data such as TIR (r = 15 for D = 321). F comes from the
    eigen-decomposition of the smaller of X^T X and X X^T; directions whose eigenvalue is
    below max(n, d) * eps of the largest add nothing to X X^T at double precision.
    """
    n, d = X.shape
    values, vectors = np.linalg.eigh(X.T @ X if d <= n else X @ X.T)
    keep = values > max(values[-1], 0.0) * max(n, d) * np.finfo(float).eps
    if not keep.any():
        return np.zeros((n, 1))
    if d <= n:
        return X @ vectors[:, keep]
    return vectors[:, keep] * np.sqrt(values[keep])


def ssc_ladmpsap(X, lam, *, positive=True, column_wise=False, tol_primal=1e-3, tol_change=1e-4,
                 max_iter=200, mu0=None, mu_max=1.0, growth=1.1):
    """Linearised ADMM for exact SSC (docs/protocol.md 1.6):
    min lam ||C||_1 + 1/2 ||E||^2  s.t.  X = C X + E, diag(C) = 0.

    Constants of the authors' code: rho = 1.2 ||X||_2^2, mu_max = 1, mu_0 = 0.5 (`ssc_exact`)
    or 0.1 (`ssc_exact_par`, `column_wise`), e updated with the new C, stopping tests
    normalised by ||X||_F, the change test with sqrt(rho) on the C term only.

    Returns (C dense (n, n), n_iter (n,), converged (n,) bool).
    """
    if mu0 is None:
        mu0 = 0.1 if column_wise else 0.5
    # The caller's BLAS threads (`_blas_threads`).
    return _ssc_ladmpsap(X, lam, positive, column_wise, tol_primal, tol_change, max_iter,
                         mu0, mu_max, growth)


def _ssc_ladmpsap(X, lam, positive, column_wise, tol_primal, tol_change, max_iter, mu0, mu_max,
                  growth):
    n = X.shape[0]
    Xr = row_space_factor(X)
    spectral_sq = max(np.linalg.norm(Xr, 2) ** 2, np.finfo(float).tiny)
    rho = 1.2 * spectral_sq
    norm = max(np.linalg.norm(Xr), np.finfo(float).tiny)

    batch = ProblemBatch(n, n, max_iter)
    act = batch.index
    C = np.zeros((n, n))
    CX = np.zeros_like(Xr)
    E = np.zeros_like(Xr)
    Y = np.zeros_like(Xr)
    mu = np.full(n, float(mu0))

    def total(v):
        return v if column_wise else np.full(len(v), v.sum())

    for it in range(1, max_iter + 1):
        Xa = _take(Xr, act)
        grad = (CX - Xa + E + Y / mu[:, None]) @ Xr.T
        C_new = _zero_self(_prox_inplace(C - (mu / rho)[:, None] * grad, lam / rho, positive), act)
        CX_new = _product(C_new, Xr, np.empty((len(act), Xr.shape[1])))
        E_new = (Xa - CX_new - Y / mu[:, None]) / (1.0 / mu + 1.0)[:, None]
        dC = C_new - C
        dE = E_new - E
        primal_res = CX_new - Xa + E_new
        change = mu * np.maximum(np.sqrt(rho * total(_rowdot(dC, dC))),
                                 np.sqrt(total(_rowdot(dE, dE)))) / norm
        primal = np.sqrt(total(_rowdot(primal_res, primal_res))) / norm
        C, CX, E = C_new, CX_new, E_new
        Y = Y + mu[:, None] * primal_res
        mu = np.minimum(mu_max, np.where(change < tol_change, growth, 1.0) * mu)

        done = (primal < tol_primal) & (change < tol_change)
        if done.any():
            batch.finish(done, C, it)
            keep = ~done
            if batch.drop(keep):
                break
            act = batch.index
            C, CX, E, Y, mu = C[keep], CX[keep], E[keep], Y[keep], mu[keep]
    return batch.result(C)
