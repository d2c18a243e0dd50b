"""Synthetic unions of subspaces: a general generator and the recipes of the paper's experiments.

Rows are points (scikit-learn convention); the paper's code holds points in columns. Points
are grouped by subspace, in label order 0, 1, ..., as in the paper's scripts. Every
function takes `random_state` (None, an int, a numpy Generator or a RandomState) and draws
everything from one generator. The recipes reproduce the distributions of the authors'
MATLAB code (the section of docs/protocol.md cited in each docstring), not its random streams.

"Normalised" means every point scaled to unit Euclidean norm (`normalize_rows`).
"""

import numbers

import numpy as np
from scipy.linalg import cholesky_banded

from ..utils._validation import normalize_rows

_COEFFICIENTS = ("uniform", "gaussian")


def make_subspaces(n_subspaces, subspace_dim, n_per_subspace, ambient_dim, *,
                   coefficients="uniform", coef_mean=0.0, coef_var=1.0, shared_dim=0,
                   noise=0.0, normalize=True, random_state=None):
    """Points drawn from a union of random linear subspaces.

    Subspace j has the basis [B0, Bj]: B0 is a random (ambient_dim, shared_dim) orthonormal
    block common to all subspaces and Bj a random (ambient_dim, subspace_dim - shared_dim)
    orthonormal block of its own (orthonormal bases from the QR factorisation of Gaussian
    matrices, like MATLAB `orth(randn(...))`). As in the paper's code the two blocks are not
    orthogonalised against each other, so the basis is orthonormal only up to the small
    random overlap of B0 and Bj. Each point is basis @ c with c of length subspace_dim:
    i.i.d. Uniform(-0.5, 0.5) (`coefficients="uniform"`) or N(coef_mean, coef_var)
    (`"gaussian"`).

    With `normalize`, the clean points are scaled to unit norm; `noise * N(0, 1)` is added
    afterwards (as in docs/protocol.md 3.2), so noisy points are not unit norm.

    Parameters
    ----------
    n_subspaces : int
        Number of subspaces (clusters).
    subspace_dim : int
        Dimension of every subspace, at most `ambient_dim`.
    n_per_subspace : int
        Points drawn from each subspace.
    ambient_dim : int
        Number of features.
    coefficients : {"uniform", "gaussian"}, default="uniform"
        Distribution of the coefficients of each point in its subspace's basis.
    coef_mean : float, default=0.0
        Mean of the Gaussian coefficients.
    coef_var : float, default=1.0
        Variance of the Gaussian coefficients.
    shared_dim : int, default=0
        Dimension of the block shared by all subspaces, at most `subspace_dim`.
    noise : float, default=0.0
        Standard deviation of the Gaussian noise added to every entry.
    normalize : bool, default=True
        Scale the clean points to unit norm before adding noise.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    X : ndarray of shape (n_subspaces * n_per_subspace, ambient_dim)
        The noisy points.
    y : ndarray of shape (n_subspaces * n_per_subspace,)
        The subspace of each point (0-based, grouped).
    X_clean : ndarray of shape (n_subspaces * n_per_subspace, ambient_dim)
        The points before noise.

    See Also
    --------
    make_dvsn_data, make_mv_data, make_runtime_data : The paper's recipes built on it.

    Examples
    --------
    >>> from kssc.datasets import make_subspaces
    >>> X, y, X_clean = make_subspaces(3, 2, 10, 5, noise=0.01, random_state=0)
    >>> X.shape, y[:12].tolist()
    ((30, 5), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    """
    n_subspaces = _check_int("n_subspaces", n_subspaces, 1)
    subspace_dim = _check_int("subspace_dim", subspace_dim, 1)
    n_per_subspace = _check_int("n_per_subspace", n_per_subspace, 1)
    ambient_dim = _check_int("ambient_dim", ambient_dim, 1)
    shared_dim = _check_int("shared_dim", shared_dim, 0)
    if subspace_dim > ambient_dim:
        raise ValueError(f"subspace_dim={subspace_dim} must be <= ambient_dim={ambient_dim}.")
    if shared_dim > subspace_dim:
        raise ValueError(f"shared_dim={shared_dim} must be <= subspace_dim={subspace_dim}.")
    if coefficients not in _COEFFICIENTS:
        raise ValueError(f"coefficients must be one of {_COEFFICIENTS}; got {coefficients!r}.")
    coef_var = _check_nonnegative("coef_var", coef_var)
    noise = _check_nonnegative("noise", noise)
    rng = check_generator(random_state)

    shared = random_orthonormal(ambient_dim, shared_dim, rng)
    blocks = []
    for _ in range(n_subspaces):
        basis = np.hstack([shared, random_orthonormal(ambient_dim, subspace_dim - shared_dim, rng)])
        if coefficients == "uniform":
            coef = rng.uniform(-0.5, 0.5, size=(n_per_subspace, subspace_dim))
        else:
            coef = coef_mean + np.sqrt(coef_var) * rng.standard_normal(
                (n_per_subspace, subspace_dim))
        blocks.append(coef @ basis.T)
    X_clean = np.vstack(blocks)
    if normalize:
        X_clean = normalize_rows(X_clean)[0]
    X = X_clean + noise * rng.standard_normal(X_clean.shape) if noise else X_clean.copy()
    return X, _labels(n_subspaces, n_per_subspace), X_clean


def make_dvsn_data(ambient_dim, subspace_dim, n_per_subspace, n_subspaces=5, random_state=None):
    """Data of the dimension-versus-cluster-size experiment (docs/protocol.md 3.1).

    The paper's code: `test_synthetic_dvsn.m`.

    Every subspace has the basis [B0, orth(randn(D, 2d/3))] with a block B0 =
    orth(randn(D, d/3)) shared by all subspaces (so they all intersect in d/3 dimensions,
    unlike the paper's text); coefficients Uniform(-0.5, 0.5); no noise; normalised.
    `subspace_dim` must be a multiple of 3 (the grid is d = 3, 6, ..., 30).

    Parameters
    ----------
    ambient_dim : int
        D, the number of features (30, 50 or 100 in the paper).
    subspace_dim : int
        The dimension d of every subspace, a multiple of 3.
    n_per_subspace : int
        N_i, points per subspace.
    n_subspaces : int, default=5
        Number of subspaces.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    X : ndarray of shape (n_subspaces * n_per_subspace, ambient_dim)
        Unit-norm points.
    y : ndarray of shape (n_subspaces * n_per_subspace,)
        The subspace of each point.

    See Also
    --------
    make_subspaces : The general generator.

    Examples
    --------
    >>> from kssc.datasets import make_dvsn_data
    >>> X, y = make_dvsn_data(30, 6, 15, random_state=0)
    >>> X.shape
    (75, 30)
    """
    subspace_dim = _check_int("subspace_dim", subspace_dim, 3)
    if subspace_dim % 3:
        raise ValueError(
            f"subspace_dim={subspace_dim} must be a multiple of 3 (shared block of d/3).")
    X, y, _ = make_subspaces(n_subspaces, subspace_dim, n_per_subspace, ambient_dim,
                             coefficients="uniform", shared_dim=subspace_dim // 3,
                             random_state=random_state)
    return X, y


def make_mv_data(mean, var, noise, ambient_dim=50, subspace_dim=10, n_per_subspace=20,
                 n_subspaces=5, random_state=None):
    """Data of the mean-versus-variance experiment (docs/protocol.md 3.2, `test_synthetic_mv.m`).

    Independent random subspaces; coefficients i.i.d. N(mean, var); B = normalised points;
    X = B + noise * N(0, 1), not normalised again (the caller normalises, and computes the
    PSNR of X against B).

    Parameters
    ----------
    mean : float
        Mean of the coefficients.
    var : float
        Variance of the coefficients.
    noise : float
        Standard deviation of the noise added to the normalised points.
    ambient_dim : int, default=50
        Number of features.
    subspace_dim : int, default=10
        Dimension of every subspace.
    n_per_subspace : int, default=20
        Points per subspace.
    n_subspaces : int, default=5
        Number of subspaces.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    X : ndarray of shape (n_subspaces * n_per_subspace, ambient_dim)
        The noisy points.
    y : ndarray of shape (n_subspaces * n_per_subspace,)
        The subspace of each point.
    B : ndarray of shape (n_subspaces * n_per_subspace, ambient_dim)
        The clean normalised points.

    See Also
    --------
    kssc.psnr : The PSNR of X against B.

    Examples
    --------
    >>> from kssc.datasets import make_mv_data
    >>> X, y, B = make_mv_data(0.5, 1.0, 0.05, random_state=0)
    >>> X.shape
    (100, 50)
    """
    return make_subspaces(n_subspaces, subspace_dim, n_per_subspace, ambient_dim,
                          coefficients="gaussian", coef_mean=mean, coef_var=var, noise=noise,
                          normalize=True, random_state=random_state)


def make_intersection_data(t, ambient_dim=200, subspace_dim=10, n_per_subspace=200,
                           random_state=None):
    """Two subspaces that intersect in `t` dimensions (docs/protocol.md 3.3).

    The paper's code: `test_synthetic_intersection.m`.

    S1 = orth(randn(D, d)); S2 = [orth(randn(D, d - t)), the last t columns of S1] (the new
    block is not orthogonalised against S1). Coefficients Uniform(0, 1), so points lie in the
    positive cone of each basis; no noise; normalised.

    Parameters
    ----------
    t : int
        Dimension of the intersection, 0 to `subspace_dim`.
    ambient_dim : int, default=200
        Number of features.
    subspace_dim : int, default=10
        Dimension of both subspaces.
    n_per_subspace : int, default=200
        Points per subspace.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    X : ndarray of shape (2 * n_per_subspace, ambient_dim)
        Unit-norm points.
    y : ndarray of shape (2 * n_per_subspace,)
        The subspace of each point (0 or 1).

    See Also
    --------
    make_subspaces : Unions of subspaces with a shared block.

    Examples
    --------
    >>> from kssc.datasets import make_intersection_data
    >>> X, y = make_intersection_data(2, n_per_subspace=50, random_state=0)
    >>> X.shape
    (100, 200)
    """
    subspace_dim = _check_int("subspace_dim", subspace_dim, 1)
    ambient_dim = _check_int("ambient_dim", ambient_dim, 1)
    n_per_subspace = _check_int("n_per_subspace", n_per_subspace, 1)
    t = _check_int("t", t, 0)
    if t > subspace_dim:
        raise ValueError(f"t={t} must be <= subspace_dim={subspace_dim}.")
    if subspace_dim > ambient_dim:
        raise ValueError(f"subspace_dim={subspace_dim} must be <= ambient_dim={ambient_dim}.")
    rng = check_generator(random_state)
    s1 = random_orthonormal(ambient_dim, subspace_dim, rng)
    s2 = np.hstack([random_orthonormal(ambient_dim, subspace_dim - t, rng),
                    s1[:, subspace_dim - t:]])
    blocks = [rng.uniform(0.0, 1.0, size=(n_per_subspace, subspace_dim)) @ basis.T
              for basis in (s1, s2)]
    return normalize_rows(np.vstack(blocks))[0], _labels(2, n_per_subspace)


def make_runtime_data(n_per_subspace, ambient_dim=500, subspace_dim=4, n_subspaces=5, mean=0.25,
                      var=0.001, noise=0.05, random_state=None):
    """Data of the runtime-versus-N experiment (docs/protocol.md 3.10, `test_runtime.m`).

    Independent random subspaces; coefficients i.i.d. N(mean, var); noise * N(0, 1) added
    to the un-normalised points A, then normalised.

    Parameters
    ----------
    n_per_subspace : int
        Points per subspace (20 to 200 in the paper).
    ambient_dim : int, default=500
        Number of features.
    subspace_dim : int, default=4
        Dimension of every subspace.
    n_subspaces : int, default=5
        Number of subspaces.
    mean : float, default=0.25
        Mean of the coefficients.
    var : float, default=0.001
        Variance of the coefficients.
    noise : float, default=0.05
        Standard deviation of the noise added to A.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    X : ndarray of shape (n_subspaces * n_per_subspace, ambient_dim)
        The normalised noisy points.
    y : ndarray of shape (n_subspaces * n_per_subspace,)
        The subspace of each point.
    A : ndarray of shape (n_subspaces * n_per_subspace, ambient_dim)
        The clean, un-normalised points.

    See Also
    --------
    make_subspaces : The general generator.

    Examples
    --------
    >>> from kssc.datasets import make_runtime_data
    >>> X, y, A = make_runtime_data(20, random_state=0)
    >>> X.shape
    (100, 500)
    """
    X_noisy, y, A = make_subspaces(n_subspaces, subspace_dim, n_per_subspace, ambient_dim,
                                   coefficients="gaussian", coef_mean=mean, coef_var=var,
                                   noise=noise, normalize=False, random_state=random_state)
    return normalize_rows(X_noisy)[0], y, A


def dependent_coefficients(mean, var, n_rows, n_cols, random_state=None):
    """Rows of serially correlated Gaussian coefficients, the paper code's `gen_depcoeff`.

    Each of the `n_rows` rows is an `n_cols`-vector ~ N(mean * 1, S) with S tridiagonal:
    `var` on the diagonal and `var / 2` on the first off-diagonals, so consecutive points
    (columns) are correlated. Sampled as mean + L z with L the bidiagonal Cholesky factor
    of S (banded Cholesky, O(n_cols)), so n_cols in the hundreds of thousands is cheap.

    Parameters
    ----------
    mean : float
        Mean of every entry.
    var : float
        Variance of every entry; consecutive entries of a row have covariance var / 2.
    n_rows : int
        Number of independent rows.
    n_cols : int
        Length of each row.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    coefficients : ndarray of shape (n_rows, n_cols)
        The sampled rows.

    See Also
    --------
    make_tir : Combines library spectra with these coefficients.

    Examples
    --------
    >>> from kssc.datasets import dependent_coefficients
    >>> dependent_coefficients(0.1, 0.001, 5, 20, random_state=0).shape
    (5, 20)
    """
    n_rows = _check_int("n_rows", n_rows, 1)
    n_cols = _check_int("n_cols", n_cols, 1)
    var = _check_nonnegative("var", var)
    rng = check_generator(random_state)
    z = rng.standard_normal((n_rows, n_cols))
    if var == 0:
        return np.full((n_rows, n_cols), float(mean))
    bands = np.empty((2, n_cols))
    bands[0] = var
    bands[1] = var / 2
    factor = cholesky_banded(bands, lower=True)
    sample = factor[0] * z
    sample[:, 1:] += factor[1, :-1] * z[:, :-1]
    return mean + sample


def random_orthonormal(ambient_dim, dim, random_state=None):
    """An (ambient_dim, dim) matrix with orthonormal columns spanning a uniformly random subspace.

    Parameters
    ----------
    ambient_dim : int
        Number of rows.
    dim : int
        Number of columns, at most `ambient_dim`.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    basis : ndarray of shape (ambient_dim, dim)
        Orthonormal columns (the Q of a QR factorisation of a Gaussian matrix).

    See Also
    --------
    make_subspaces : Draws one such basis per subspace.

    Examples
    --------
    >>> import numpy as np
    >>> from kssc.datasets import random_orthonormal
    >>> Q = random_orthonormal(10, 3, random_state=0)
    >>> bool(np.allclose(Q.T @ Q, np.eye(3)))
    True
    """
    rng = check_generator(random_state)
    if dim == 0:
        return np.empty((ambient_dim, 0))
    q, r = np.linalg.qr(rng.standard_normal((ambient_dim, dim)))
    return q * np.sign(np.diag(r))


def check_generator(random_state):
    """A numpy Generator from None, an int, a SeedSequence, a Generator or a RandomState.

    A RandomState is not wrapped but seeds a new Generator from its stream, which keeps
    results deterministic for a seeded RandomState.
    """
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    return np.random.default_rng(random_state)


def _labels(n_groups, n_per_group):
    return np.repeat(np.arange(n_groups), n_per_group)


def _check_int(name, value, minimum):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_nonnegative(name, value):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not value >= 0:
        raise ValueError(f"{name} must be a real number >= 0; got {value!r}.")
    return float(value)
