"""Unions of random subspaces of mixed dimensions, at any size (the scale experiment's data)."""

import numpy as np


def make_union_of_subspaces(n_samples, *, ambient_dim, n_subspaces, subspace_dims, noise,
                            random_state=None):
    """Points on random linear subspaces of the given dimensions, shuffled.

    Subspace j has dimension ``subspace_dims[j % len(subspace_dims)]``; its points are
    Gaussian combinations of an orthonormal basis, scaled to unit norm, then
    N(0, noise^2) noise is added per coordinate. The subspaces hold as equal a number of
    points as can be.

    Parameters
    ----------
    n_samples : int
        Number of points.
    ambient_dim : int
        Dimension D of the space the subspaces live in.
    n_subspaces : int
        Number of subspaces.
    subspace_dims : sequence of int
        Dimensions, used in turn for subspace 0, 1, ...
    noise : float
        Standard deviation of the Gaussian noise added to every coordinate.
    random_state : int, numpy Generator or None, default=None
        Seed of `numpy.random.default_rng`.

    Returns
    -------
    X : ndarray of shape (n_samples, ambient_dim)
        The points, in random order.
    y : ndarray of shape (n_samples,)
        The subspace of each point.

    See Also
    --------
    make_subspaces : Subspaces of one dimension with the paper's generator.

    Examples
    --------
    >>> from kssc.datasets import make_union_of_subspaces
    >>> X, y = make_union_of_subspaces(100, ambient_dim=8, n_subspaces=3,
    ...                                subspace_dims=[2, 3], noise=0.0, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((100, 8), [0, 1, 2])
    """
    rng = np.random.default_rng(random_state)
    sizes = np.full(n_subspaces, n_samples // n_subspaces)
    sizes[: n_samples % n_subspaces] += 1
    X = np.empty((n_samples, ambient_dim))
    y = np.repeat(np.arange(n_subspaces), sizes)
    start = 0
    for j, size in enumerate(sizes):
        dim = subspace_dims[j % len(subspace_dims)]
        basis = np.linalg.qr(rng.standard_normal((ambient_dim, dim)))[0]
        block = rng.standard_normal((size, basis.shape[1])) @ basis.T
        X[start:start + size] = block / np.linalg.norm(block, axis=1, keepdims=True)
        start += size
    X += noise * rng.standard_normal(X.shape)
    order = rng.permutation(n_samples)
    return X[order], y[order]
