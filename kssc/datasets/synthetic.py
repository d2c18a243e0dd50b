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

from .._validation import normalize_rows

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

    Returns
    -------
    X : ndarray (n_subspaces * n_per_subspace, ambient_dim), the noisy points.
    y : ndarray of int, the subspace of each point (0-based, grouped).
    X_clean : ndarray like X, the points before noise.
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
            coef = coef_mean + np.sqrt(coef_var) * rng.standard_normal((n_per_subspace, subspace_dim))
        blocks.append(coef @ basis.T)
    X_clean = np.vstack(blocks)
    if normalize:
        X_clean = normalize_rows(X_clean)[0]
    X = X_clean + noise * rng.standard_normal(X_clean.shape) if noise else X_clean.copy()
    return X, _labels(n_subspaces, n_per_subspace), X_clean


def make_dvsn_data(ambient_dim, subspace_dim, n_per_subspace, n_subspaces=5, random_state=None):
    """Data of the dimension-versus-cluster-size experiment (docs/protocol.md 3.1, `test_synthetic_dvsn.m`).

    Every subspace has the basis [B0, orth(randn(D, 2d/3))] with a block B0 =
    orth(randn(D, d/3)) shared by all subspaces (so they all intersect in d/3 dimensions,
    unlike the paper's text); coefficients Uniform(-0.5, 0.5); no noise; normalised.
    `subspace_dim` must be a multiple of 3 (the grid is d = 3, 6, ..., 30).

    Returns X (n_subspaces * n_per_subspace, ambient_dim) and y.
    """
    subspace_dim = _check_int("subspace_dim", subspace_dim, 3)
    if subspace_dim % 3:
        raise ValueError(f"subspace_dim={subspace_dim} must be a multiple of 3 (shared block of d/3).")
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

    Returns X, y and B (the clean normalised points).
    """
    return make_subspaces(n_subspaces, subspace_dim, n_per_subspace, ambient_dim,
                          coefficients="gaussian", coef_mean=mean, coef_var=var, noise=noise,
                          normalize=True, random_state=random_state)


def make_intersection_data(t, ambient_dim=200, subspace_dim=10, n_per_subspace=200, random_state=None):
    """Two subspaces that intersect in `t` dimensions (docs/protocol.md 3.3, `test_synthetic_intersection.m`).

    S1 = orth(randn(D, d)); S2 = [orth(randn(D, d - t)), the last t columns of S1] (the new
    block is not orthogonalised against S1). Coefficients Uniform(0, 1), so points lie in the
    positive cone of each basis; no noise; normalised.

    Returns X (2 * n_per_subspace, ambient_dim) and y.
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
    s2 = np.hstack([random_orthonormal(ambient_dim, subspace_dim - t, rng), s1[:, subspace_dim - t:]])
    blocks = [rng.uniform(0.0, 1.0, size=(n_per_subspace, subspace_dim)) @ basis.T for basis in (s1, s2)]
    return normalize_rows(np.vstack(blocks))[0], _labels(2, n_per_subspace)


def make_runtime_data(n_per_subspace, ambient_dim=500, subspace_dim=4, n_subspaces=5, mean=0.25,
                      var=0.001, noise=0.05, random_state=None):
    """Data of the runtime-versus-N experiment (docs/protocol.md 3.10, `test_runtime.m`).

    Independent random subspaces; coefficients i.i.d. N(mean, var); noise * N(0, 1) added
    to the un-normalised points A, then normalised.

    Returns X (normalised noisy points), y and A (the clean, un-normalised points).
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

    Returns an (n_rows, n_cols) array.
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
    """An (ambient_dim, dim) matrix with orthonormal columns spanning a uniformly random subspace."""
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
