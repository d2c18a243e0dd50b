"""Elhamifar and Vidal's ADMM for many small (affine, outlier, elastic-net) lasso problems.

E. Elhamifar and R. Vidal, "Sparse Subspace Clustering: Algorithm, Theory, and
Applications", IEEE TPAMI 35(11), 2013, and their code (`admmLasso_mat_func.m`,
`admmOutlier_mat_func.m`). Problem i, in their scaling (mu1_i = 1 / (lam_i * l1_ratio)):

    min_z ||c||_1 + q/2 ||z||^2 + mu1_i/2 ||x_i - A_i^T z - e/gamma||^2 + [outlier] ||e||_1
    s.t. z = c  [and 1^T z = 1 if affine],

q = (1 - l1_ratio) / l1_ratio the elastic-net weight (You, Li, Robinson and Vidal, CVPR 2016),
split z = c with penalty mu2 (their mu2 = alpha). The affine constraint is carried by its
own multiplier. With the outlier term their dictionary is [A_i^T, I / gamma]; its
(k + D)-square system is solved through the Schur complement of the identity block, so
every point costs a k x k system plus two products with its gathered candidates A_i.

Stopping: their code stops every point together once the largest change over all points,
max |z - c|, max |z - c_prev| (and |1^T z - 1|, and the e changes), is <= tol ("all"); the
inexact solution is part of their method (docs/tuned_accuracy.md). "each" stops every point
on its own change. Either way a point that never met the tolerance is flagged unconverged.
"""

from dataclasses import dataclass

import numpy as np

from ._batch import ProblemBatch
from .prox import nonneg_soft_threshold, soft_threshold

STOPPING = ("all", "each")


@dataclass(frozen=True)
class ADMM:
    """Elhamifar and Vidal's model and ADMM, as the `solver` of `KSSC` and `baselines.SSC`.

    Parameters
    ----------
    affine : bool, default=False
        Constrain every code to sum to one (points on affine subspaces, e.g. motion).
    outlier : bool, default=False
        Add a sparse error term ||e||_1 coded over I / gamma, gamma = 1 / (lam * max_j
        ||x_j||_1) (their face setting); the penalty scale also counts these atoms.
        Not with `affine`.
    stopping : {"all", "each"}, default="all"
        "all": every point iterates until the largest change over all points is <= tol
        (their rule); "each": every point stops on its own change.
    tol : float, default=2e-4
        Tolerance on the largest absolute change (their `thr`).
    max_iter : int, default=200
        Iteration cap (their `maxIter`).

    See Also
    --------
    KSSC : Takes an ADMM as its `solver`, on each point's candidate set.
    baselines.SSC : Takes an ADMM as its `solver`, over all points.

    Examples
    --------
    >>> from kssc import ADMM, KSSC, clustering_error
    >>> from kssc.datasets import make_subspaces
    >>> X, y, _ = make_subspaces(3, 3, 30, 20, random_state=0)
    >>> model = KSSC(3, n_neighbors=10, lam=0.05, lam_mode="global", positive=False,
    ...              solver=ADMM(), random_state=0).fit(X)
    >>> float(clustering_error(y, model.labels_))
    0.0
    """

    affine: bool = False
    outlier: bool = False
    stopping: str = "all"
    tol: float = 2e-4
    max_iter: int = 200

    def validate(self):
        """Raise a ValueError naming the first bad setting."""
        if self.stopping not in STOPPING:
            raise ValueError(f"ADMM stopping must be one of {STOPPING}; got {self.stopping!r}.")
        if not self.tol >= 0:
            raise ValueError(f"ADMM tol must be >= 0; got {self.tol!r}.")
        if int(self.max_iter) != self.max_iter or self.max_iter < 1:
            raise ValueError(f"ADMM max_iter must be an integer >= 1; got {self.max_iter!r}.")
        if self.affine and self.outlier:
            raise ValueError("ADMM(affine=True, outlier=True) is not supported; choose one.")


def _matvec(M, v):
    return np.matmul(M, v[:, :, None])[:, :, 0]


class LassoADMM:
    """One chunk of (affine, elastic-net) lasso problems; `state` holds the iterates only,
    so a chunk can be rebuilt from its data and resumed (the "all" rule across chunks).

    gram (n, k, k) = A_i A_i^T, corr (n, k) = A_i x_i, mu1 (n,), mu2 and q scalars.
    """

    def __init__(self, gram, corr, mu1, mu2, q=0.0, *, affine=False, positive=False, state=None):
        n, k = corr.shape
        shift = mu2 if affine else 0.0
        system = mu1[:, None, None] * gram + (mu2 + q) * np.eye(k) + shift
        self.inverse = np.linalg.inv(system)
        self.rhs = mu1[:, None] * corr + shift
        self.mu2, self.affine = mu2, affine
        self.prox = nonneg_soft_threshold if positive else soft_threshold
        self.state = state or {"c": np.zeros((n, k)), "dual": np.zeros((n, k)),
                               "dual_affine": np.zeros((n, 1))}

    def keep(self, rows):
        self.inverse, self.rhs = self.inverse[rows], self.rhs[rows]
        self.state = {name: value[rows] for name, value in self.state.items()}

    def step(self):
        """One iteration; returns every problem's change (n,)."""
        s, mu2 = self.state, self.mu2
        z = _matvec(self.inverse, self.rhs + mu2 * s["c"] - s["dual"] - s["dual_affine"])
        c_new = self.prox(z + s["dual"] / mu2, 1.0 / mu2)
        s["dual"] += mu2 * (z - c_new)
        gap = np.maximum(np.abs(z - c_new).max(axis=1), np.abs(z - s["c"]).max(axis=1))
        if self.affine:
            excess = z.sum(axis=1, keepdims=True) - 1.0
            s["dual_affine"] += mu2 * excess
            gap = np.maximum(gap, np.abs(excess[:, 0]))
        s["c"] = c_new
        return gap

    def coef(self):
        return self.state["c"]


class OutlierADMM:
    """One chunk of outlier-term problems: points x (n, D), their candidates A (n, k, D),
    gram and corr as for `LassoADMM`, mu1 (n,), mu2, q and gamma scalars."""

    def __init__(self, A, x, gram, corr, mu1, mu2, gamma, q=0.0, *, positive=False, state=None):
        n, k = corr.shape
        self.A = A
        self.beta = (mu1 / gamma)[:, None]
        self.s = (mu1 / gamma**2 + mu2)[:, None]
        system = ((mu1 - mu1**2 / gamma**2 / self.s[:, 0])[:, None, None] * gram
                  + (mu2 + q) * np.eye(k))
        self.inverse = np.linalg.inv(system)
        self.rhs_z, self.rhs_e = mu1[:, None] * corr, self.beta * x
        self.mu2 = mu2
        self.prox = nonneg_soft_threshold if positive else soft_threshold
        self.state = state or {"c": np.zeros((n, k)), "e": np.zeros(x.shape),
                               "dual": np.zeros((n, k)), "dual_e": np.zeros(x.shape)}

    def keep(self, rows):
        self.A, self.beta, self.s = self.A[rows], self.beta[rows], self.s[rows]
        self.inverse, self.rhs_z, self.rhs_e = (self.inverse[rows], self.rhs_z[rows],
                                                self.rhs_e[rows])
        self.state = {name: value[rows] for name, value in self.state.items()}

    def step(self):
        st, mu2, beta, s = self.state, self.mu2, self.beta, self.s
        a = self.rhs_z + mu2 * st["c"] - st["dual"]
        b = self.rhs_e + mu2 * st["e"] - st["dual_e"]
        u = _matvec(self.inverse, a - beta / s * _matvec(self.A, b))
        v = (b - beta * np.matmul(u[:, None, :], self.A)[:, 0, :]) / s
        c_new = self.prox(u + st["dual"] / mu2, 1.0 / mu2)
        e_new = soft_threshold(v + st["dual_e"] / mu2, 1.0 / mu2)
        st["dual"] += mu2 * (u - c_new)
        st["dual_e"] += mu2 * (v - e_new)
        gap = np.maximum.reduce([np.abs(u - c_new).max(axis=1), np.abs(v - e_new).max(axis=1),
                                 np.abs(u - st["c"]).max(axis=1), np.abs(v - st["e"]).max(axis=1)])
        st["c"], st["e"] = c_new, e_new
        return gap

    def coef(self):
        return self.state["c"]


def solve_each(problem, tol, max_iter):
    """Iterate until every problem's own change is <= tol; (coef, n_iter, converged)."""
    n, k = problem.coef().shape
    batch = ProblemBatch(n, k, max_iter)
    for it in range(1, max_iter + 1):
        done = problem.step() <= tol
        if done.any():
            batch.finish(done, problem.coef(), it)
            if batch.drop(~done):
                break
            problem.keep(~done)
    return batch.result(problem.coef())


def advance_all(problem, start, target, tol, max_iter):
    """Iterate from iteration `start` to at least `target`, then on until the largest change
    of the chunk is <= tol or max_iter. Returns (the iteration reached, tolerance met)."""
    it, met = start, False
    while it < max_iter:
        it += 1
        met = problem.step().max(initial=0.0) <= tol
        if it >= target and met:
            break
    return it, met
