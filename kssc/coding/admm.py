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
every point costs a k x k system plus two products with its candidates A_i (read from X).

The compiled per-point setup and step are in `kssc.coding._point_kernels`. A point's
state is its iterates only (c, dual, the affine multiplier; e and its dual with the outlier
term), so a chunk of points can be rebuilt from its data and resumed (the "all" rule).

Stopping: their code stops every point together once the largest change over all points,
max |z - c|, max |z - c_prev| (and |1^T z - 1|, and the e changes), is <= tol ("all"); the
inexact solution is part of their method (docs/tuned_accuracy.md). "each" stops every point
on its own change. Either way a point that never met the tolerance is flagged unconverged.
"""

from dataclasses import dataclass

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
        or max_iter is reached (their rule: the cap is part of the method, so reaching it
        raises no warning; `n_iter_` shows it); "each": every point stops on its own
        change, and points that reach max_iter raise one ``ConvergenceWarning``.
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
