"""The relaxed model's lasso of one point solved exactly, by homotopy, in Gram form.

Point i: min_z lam ||z||_1 + 1/2 z^T G z - b^T z (optionally z >= 0), with G = A A^T (k x k,
plus the elastic net's ridge on its diagonal) and b = A x, as `kssc.coding.fista` states it.
Its solution z(mu) is piecewise linear in the weight mu (Osborne, Presnell and Turlach 2000;
LARS with the lasso modification, Efron et al. 2004): z = 0 from mu = max |b| down, then on
each piece the active coefficients move along d = G_AA^-1 s_A (s: their signs) while mu
falls, until an active coefficient reaches zero (it leaves) or an inactive correlation
|b_j - G_j z| reaches mu (it joins, with that correlation's sign), and the path stops at
mu = lam. Each piece costs one new row of the active block's Cholesky factor (all of it
after a leave), a substitution and one product with G's active columns; at k = 20 a point
takes about k pieces, a few thousand flops against the hundred or so iterations FISTA needs
to meet its objective tolerance.

The result is the model's optimum (to rounding) rather than an iterate stopped by a
tolerance. Duplicate neighbours are harmless (a copy's correlation never leaves its twin's,
so it never joins); a point whose active block stops being positive definite or whose path
takes more than `max_steps` pieces (`kssc._predict` allows 8 k) reports failure;
`homotopy_range` then solves it by FISTA (`kssc.coding.fista.fista_point`, the fit's solver)
instead. `KSSC.predict` codes new points with it.
"""

import numpy as np
from numba import prange

from ._kernels import fill_cache, gram_point, jit, parallel_jit
from .fista import fista_point
from .representation import _FISTA_STEP

# A Cholesky pivot below this share of its diagonal entry: the active block is singular.
_PIVOT_SHARE = 1e-12
# The fallback's first step and growth: the fit's FISTA settings.
_FISTA_RHO0, _FISTA_GROWTH = _FISTA_STEP


@jit
def homotopy_point(G, b, lam, positive, max_steps, z, work, active, member, L):
    """Solve one problem into `z` (k,). Scratch: `work` (5, k), `active` (k,) int64,
    `member` (k,) bool, `L` (k, k). Returns (pieces, solved)."""
    k = b.size
    c, d, a, sign, w = work[0], work[1], work[2], work[3], work[4]
    z[:] = 0.0
    member[:] = False
    for j in range(k):
        c[j] = b[j]
    n = factored = 0
    mu = 0.0
    dropped = -1
    for step in range(1, max_steps + 1):
        if n == 0:
            # Start (or restart after every coefficient left): the largest correlation joins.
            first, mu = -1, 0.0
            for j in range(k):
                v = c[j] if positive else abs(c[j])
                if v > mu:
                    first, mu = j, v
            if first < 0 or mu <= lam:
                return step - 1, True
            active[0], member[first], n, factored = first, True, 1, 0
            sign[first] = 1.0 if c[first] > 0 else -1.0
        # Cholesky of G[A, A] (rows and columns in the order of `active`): after a join only
        # its new last row, after a start or a leave all of it; w = L^-1 s_A row by row with
        # it (an active sign never changes, so a join adds one entry to w).
        for p in range(factored, n):
            for q in range(p + 1):
                v = G[active[p], active[q]]
                for r in range(q):
                    v -= L[p, r] * L[q, r]
                if p == q:
                    if v <= _PIVOT_SHARE * G[active[p], active[p]]:
                        return step, False
                    L[p, p] = np.sqrt(v)
                else:
                    L[p, q] = v / L[q, q]
            v = sign[active[p]]
            for r in range(p):
                v -= L[p, r] * w[r]
            w[p] = v / L[p, p]
        factored = n
        # d = G_AA^-1 s_A = L^-T w (by position in `active`): backward substitution by rows
        # of L (contiguous updates, no chain of dependent sums).
        for p in range(n):
            d[p] = w[p]
        for p in range(n - 1, -1, -1):
            d[p] /= L[p, p]
            dp = d[p]
            for r in range(p):
                d[r] -= L[p, r] * dp
        # a_j = G[j, A] d (G is symmetric: read by rows): how fast correlation j falls.
        for j in range(k):
            a[j] = 0.0
        for p in range(n):
            col, dp = active[p], d[p]
            for j in range(k):
                a[j] += G[col, j] * dp
        # The next event along the piece: the end (mu = lam), a leave or a join.
        gamma, event, who = mu - lam, 0, -1
        for p in range(n):
            i = active[p]
            if z[i] * d[p] < 0.0:
                t = -z[i] / d[p]
                if t < gamma:
                    gamma, event, who = t, 1, p
        for j in range(k):
            if member[j] or j == dropped:
                continue
            # Step gap / rate, compared by a product: a division only for a new nearest.
            rate, gap = 1.0 - a[j], mu - c[j]
            if rate > 0.0 and gap > 0.0 and gap < gamma * rate:
                gamma, event, who = gap / rate, 2, j
            rate, gap = 1.0 + a[j], mu + c[j]
            if not positive and rate > 0.0 and gap > 0.0 and gap < gamma * rate:
                gamma, event, who = gap / rate, 3, j
        for p in range(n):
            z[active[p]] += gamma * d[p]
        mu -= gamma
        # Every correlation falls at its rate a along the piece (as LARS updates them).
        for j in range(k):
            c[j] -= gamma * a[j]
        dropped = -1
        if event == 0:
            return step, True
        if event == 1:
            i = active[who]
            z[i], member[i], dropped = 0.0, False, i
            n -= 1
            active[who] = active[n]
            factored = 0
        else:
            active[n], member[who] = who, True
            sign[who] = 1.0 if event == 2 else -1.0
            n += 1
    return max_steps, False


@jit
def homotopy_range(lo, hi, X, rows, indices, weight, ridge, positive, max_steps, tol, max_iter,
                   coef, n_iter, converged):
    """Points lo..hi-1 (row rows[i] of X coded over the rows indices[i]) into coef, n_iter
    (pieces, or FISTA's iterations where it took over: tol, max_iter) and converged."""
    k = indices.shape[1]
    gram, corr = np.empty((k, k)), np.empty(k)
    work, L, fista_work = np.empty((5, k)), np.empty((k, k)), np.empty((5, k))
    active, member = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.bool_)
    for i in range(lo, hi):
        sq_norm = gram_point(X, rows[i], indices[i], gram, corr)
        for m in range(k):
            gram[m, m] += ridge[i]
        steps, solved = homotopy_point(gram, corr, weight[i], positive, max_steps, coef[i],
                                       work, active, member, L)
        if solved:
            n_iter[i], converged[i] = steps, True
        else:
            n_iter[i], converged[i] = fista_point(gram, corr, sq_norm, weight[i], positive, tol,
                                                  max_iter, _FISTA_RHO0, _FISTA_GROWTH,
                                                  coef[i], fista_work)


@parallel_jit
def homotopy_blocks(bounds, X, rows, indices, weight, ridge, positive, max_steps, tol,
                    max_iter, coef, n_iter, converged):
    """`homotopy_range` over the blocks [bounds[b], bounds[b + 1]), in parallel."""
    for b in prange(bounds.size - 1):
        homotopy_range(bounds[b], bounds[b + 1], X, rows, indices, weight, ridge, positive,
                       max_steps, tol, max_iter, coef, n_iter, converged)


fill_cache(__name__)  # run from the on-disk cache, never from an in-process compile
