"""Shared computations of the observation figures (docs/protocol.md 3.8 and 3.9).

Singular values of each group's points, and the true/false positive rate of exact
Euclidean k-nearest-neighbours on the raw (not unit-normalised) data, for k = 1..k_max.
The paper's code used a kd-tree with 10k+1 comparisons (heavily approximate); exact
search is the recommended resolution. The summary table holds each group's subspace
dimension estimated from its singular values (`summarise_dims`), which the claims read.
"""

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

ENERGIES = (0.95, 0.99)


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


def estimated_dim(rows, energy):
    """The dimension of the linear subspace the group's points lie near: 1 (the first singular
    direction) + the smallest m whose next m singular values hold `energy` of the squared
    singular values beyond the first (`energy_total` - s_1^2; without `energy_total` only the
    stored ones, which overstates the share).

    Why not the share of all the energy: pixel intensities and image coordinates are
    non-negative, so the first singular direction is close to the points' mean and holds
    93-98 % of the energy by itself; a share of all of it reads a face as 2-dimensional. Set
    apart, the first direction stands for the offset and the rest measures the spread about
    it, as centring would (the stored rows hold no centred spectrum). A group whose stored
    values never reach the share counts as one more than it stores (a lower bound)."""
    s2 = np.sort(rows["singular_value"].to_numpy())[::-1] ** 2
    total = (rows["energy_total"].iloc[0] if "energy_total" in rows
             and rows["energy_total"].notna().all() else s2.sum())
    reached = np.flatnonzero(np.cumsum(s2[1:]) >= energy * (total - s2[0]))
    return int(1 + (reached[0] + 1 if len(reached) else len(s2)))


def summarise_dims(frame, exp=None):
    """The summary table: per group (each motion of a sequence, or each subject) with singular
    values, `estimated_dim_<p>` (`estimated_dim` at p % of the energy), for p in ENERGIES."""
    sv = frame[frame["panel"] == "singular_values"]
    keys = ["group"] + (["motion"] if "motion" in sv and sv["motion"].notna().any() else [])
    if "motion" in keys:  # float in the trial rows, where the neighbour rows leave it empty
        sv = sv.astype({"motion": int})
    rows = []
    for key, part in sv.groupby(keys):
        rows.append({**dict(zip(keys, key, strict=True)),
                     **{f"estimated_dim_{round(100 * e)}": estimated_dim(part, e)
                        for e in ENERGIES}})
    return pd.DataFrame(rows, columns=[*keys, *(f"estimated_dim_{round(100 * e)}"
                                                 for e in ENERGIES)])
