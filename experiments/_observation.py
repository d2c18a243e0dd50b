"""Shared computations of the observation figures (docs/protocol.md 3.8 and 3.9).

Singular values of each group's points, and the true/false positive rate of exact
Euclidean k-nearest-neighbours on the raw (not unit-normalised) data, for k = 1..k_max.
The paper's code used a kd-tree with 10k+1 comparisons (heavily approximate); exact
search is the recommended resolution.
"""

import numpy as np
from sklearn.neighbors import NearestNeighbors


def singular_value_rows(X, group, n_singular, **extra):
    """The first `n_singular` singular values of X, one row each, with `energy_total`, the sum
    of all squared singular values (||X||_F^2), so that the share of the energy the first d
    hold can be computed from the stored rows."""
    X = np.asarray(X, dtype=float)
    values = np.linalg.svd(X, compute_uv=False)[:n_singular]
    energy = float(np.sum(X * X))
    return [{"panel": "singular_values", "group": group, "index": i + 1,
             "singular_value": float(v), "energy_total": energy, **extra}
            for i, v in enumerate(values)]


def euclidean_neighbor_indices(X, k_max):
    """Indices (n, k_max) of each point's nearest other points, by Euclidean distance."""
    k_max = min(k_max, X.shape[0] - 1)
    nn = NearestNeighbors(n_neighbors=k_max + 1, algorithm="brute").fit(X)
    _, idx = nn.kneighbors(X)
    n = X.shape[0]
    # Exclude each point itself by index (also when exact duplicates tie with it).
    keep = idx != np.arange(n)[:, None]
    keep[keep.sum(axis=1) > k_max, -1] = False
    return idx[keep].reshape(n, k_max)


def neighbour_rows(X, y, group, k_max, subspace_dim):
    """TP% and FP% of the k nearest neighbours for k = 1..k_max, and the 'sufficient' line.

    TP% = 100 TP / (k N) with TP the number of (neighbour, point) pairs in the same group;
    sufficient = 100 if TP / N >= subspace_dim (the mean point has d true neighbours) else 0.
    """
    y = np.asarray(y)
    idx = euclidean_neighbor_indices(np.asarray(X, dtype=float), k_max)
    same = (y[idx] == y[:, None]).cumsum(axis=1)
    n = len(y)
    rows = []
    for k in range(1, idx.shape[1] + 1):
        tp = int(same[:, k - 1].sum())
        rows.append({"panel": "neighbours", "group": group, "n_neighbors": k, "n_samples": n,
                     "tp_pct": 100.0 * tp / (k * n), "fp_pct": 100.0 * (1 - tp / (k * n)),
                     "tp_per_point": tp / n,
                     "sufficient_pct": 100.0 * (tp / n >= subspace_dim)})
    return rows


def match_histogram(image, reference):
    """Map the grey levels of `image` so its cumulative histogram matches `reference`'s."""
    _, src_index, src_counts = np.unique(image, return_inverse=True, return_counts=True)
    ref_values, ref_counts = np.unique(reference, return_counts=True)
    src_cdf = np.cumsum(src_counts) / image.size
    ref_cdf = np.cumsum(ref_counts) / reference.size
    return np.interp(src_cdf, ref_cdf, ref_values)[src_index].reshape(image.shape)
