"""Cheap label-free signs that a setting does not suit the data, raised once per fit.

Standardised features (every column mean 0 and variance 1, e.g. StandardScaler's output):
centring moves subspaces through the origin off it, turning a union of linear subspaces
into affine ones, which the linear self-expression codes badly. Features in different units
(a few features hold nearly all of the points' energy): the directions compared are those
of the few. Both warnings end with the one preprocessing rule, `PREPROCESSING_RULE`, which
the user guide quotes. A scale far from 1 (`SCALE_RANGE`) where the points are coded as
given (``normalize=False``, the presets "faces" and "motion"): the solvers' absolute
constants then decide the codes.

Signs tried and not used, because they did not separate the data where a preset helps from
the data where it does not (docs/presets.md): the length of the points' mean unit vector (a
common offset) and the share of their top principal direction.
"""

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from sklearn.utils import check_random_state

from ._validation import ROW_CHUNK_BYTES
from ._warnings import warn_caller

# Above this many rows the check is skipped (it reads every row).
MAX_ROWS = 200_000
STANDARDISED_TOL = 1e-4

PREPROCESSING_RULE = (
    "Do not centre the features. Scale them only when they are in different units: divide "
    "each by its standard deviation without subtracting its mean (X / X.std(axis=0)); "
    "features in one unit (pixels, coordinates, spectra) stay as they are.")
"""The one preprocessing rule, quoted by the user guide ("Preprocessing") and ending the
warnings of `warn_unsuitable`. Measured with the generic preset on the panel's tables
(benchmarks/bench_suitability.py --part preprocessing, 17 tasks): centring raised the error
on 10 and lowered it only on 5 where the generic preset already failed (45 to 59 % error);
scaling by the standard deviation without centring cut it on the two tables in mixed units
(wine 33.7 to 4.5 %, breast cancer 10.4 to 7.6 %), raised it on digits (12.6 to 23.0 %) and
iris (2.7 to 5.3 %), whose features share one unit, and moved it by at most 2.4 points
elsewhere but on one Yale B pair (48.4 to 0.0 %)."""

MIXED_UNITS_SHARE = 0.2
"""Features look like different units when their effective number (the participation ratio
(sum e_j)^2 / sum e_j^2 of the features' mean squares e_j) is below this share of them: 0.079
for wine and 0.062 for breast cancer, at least 0.388 on the panel's other tables (TIR 0.388,
digits 0.530, iris 0.630, Yale B 0.874, synthetic 0.944, Hopkins 155 0.995); 0.2 lies in
that gap, which no family alone decides."""

SCALE_RANGE = (1e-60, 1e15)
"""Median over the points of their largest absolute entry within which the settings that
code points as given (normalize=False) fit as at scale 1. On three 3-dimensional subspaces
in R^20 (benchmarks/bench_suitability.py --part scale; median 0.51 at scale 1), preset
"faces" failed (66 % error) from a median of 5e-81 down and "motion" from 5e19 up (10 %;
62 % from 5e49), both fitting as at scale 1 from 5e-76 to 5e17; the range keeps a factor
of at least 500 inside that."""


class UnsuitableSettingWarning(UserWarning):
    """The data show a sign that the chosen setting does not suit them.

    The message says what to try: a preset of `kssc.presets`, or the data before a
    transformation.

    See Also
    --------
    DegenerateFitWarning : The fit ran but its result carries little information.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn.preprocessing import StandardScaler
    >>> from kssc import KSSC, UnsuitableSettingWarning
    >>> X = StandardScaler().fit_transform(np.random.default_rng(0).random((60, 5)))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = KSSC(n_clusters=2, n_neighbors=5).fit(X)
    >>> any(issubclass(w.category, UnsuitableSettingWarning) for w in caught)
    True
    """


def looks_standardised(X):
    """Whether every column of X has mean 0 and (population) variance 1, up to float error."""
    if X.shape[0] < 3 or X.shape[0] > MAX_ROWS:
        return False
    mean = np.mean(X, axis=0, dtype=np.float64)  # float64 sums, no float64 copy of X
    if np.abs(mean).max() >= STANDARDISED_TOL:
        return False
    # The variance in float64 a chunk of rows at a time (X may be a large memory map).
    step = max(1, ROW_CHUNK_BYTES // (8 * X.shape[1]))
    squares = np.zeros(X.shape[1])
    for start in range(0, X.shape[0], step):
        centred = np.asarray(X[start:start + step], dtype=np.float64) - mean
        squares += np.einsum("ij,ij->j", centred, centred)
    return bool(np.abs(np.sqrt(squares / X.shape[0]) - 1.0).max() < STANDARDISED_TOL)


def _chunks(X):
    """X's rows in float64, a chunk at a time (X may be a large memory map)."""
    step = max(1, ROW_CHUNK_BYTES // (8 * X.shape[1]))
    for start in range(0, X.shape[0], step):
        yield np.asarray(X[start:start + step], dtype=np.float64)


def effective_features(X):
    """(participation ratio, largest share) of the features' mean squares e_j: the effective
    number of features (sum e_j)^2 / sum e_j^2, and max e_j / sum e_j. The squares of every
    chunk are taken after dividing it by its largest entry, so no scale overflows."""
    energy = np.zeros(X.shape[1])
    peak = 0.0
    for chunk in _chunks(X):
        top = float(np.abs(chunk).max(initial=0.0))
        if top > peak:  # rescale what was summed to the new peak
            energy *= (peak / top) ** 2
            peak = top
        if peak > 0:
            energy += np.einsum("ij,ij->j", chunk / peak, chunk / peak)
    if not energy.any():
        return float(X.shape[1]), 1.0 / X.shape[1]
    return float(energy.sum() ** 2 / np.sum(energy**2)), float(energy.max() / energy.sum())


def looks_mixed_units(X):
    """(ratio, share) of `effective_features` when it is below MIXED_UNITS_SHARE of the
    features (3 or more), else None."""
    if X.shape[0] < 3 or X.shape[0] > MAX_ROWS or X.shape[1] < 3:
        return None
    ratio, share = effective_features(X)
    return (ratio, share) if ratio < MIXED_UNITS_SHARE * X.shape[1] else None


def data_scale(X):
    """Median over the points of their largest absolute entry (0 for all-zero data)."""
    return float(np.median(np.concatenate([np.abs(chunk).max(axis=1) for chunk in _chunks(X)])))


def outside_scale_range(X):
    """`data_scale(X)` when it is non-zero and outside SCALE_RANGE, else None."""
    scale = data_scale(X)
    return scale if scale > 0 and not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1] else None


def rescaling(X):
    """The power of two that brings `data_scale(X)` to about 1 when it lies outside
    SCALE_RANGE, else 1.0 (at most 2^1000 either way, which float64 holds). A power of two
    scales every float exactly (no rounding)."""
    scale = outside_scale_range(X)
    return 1.0 if scale is None else float(2.0 ** np.clip(-round(np.log2(scale)), -1000, 1000))


def warn_unsuitable(X, normalize=True):
    """One UnsuitableSettingWarning per sign X shows that the fit will not suit it.

    `normalize` is the estimator's: with False the points are coded as given, and a scale
    outside SCALE_RANGE is a sign too.
    """
    if looks_standardised(X):
        warn_caller(
            "X looks standardised (every feature has mean 0 and variance 1, as StandardScaler "
            "gives): centring moves subspaces through the origin off it, so a union of linear "
            f"subspaces becomes affine. {PREPROCESSING_RULE} If the data are affine by nature "
            "(e.g. motion trajectories), try preset 'motion' (kssc.presets).",
            UnsuitableSettingWarning)
    elif (mixed := looks_mixed_units(X)) is not None:
        warn_caller(
            f"X's features look like different units: the largest holds {mixed[1]:.0%} of "
            f"the points' energy (an effective {mixed[0]:.2g} of {X.shape[1]} features), so "
            f"the directions k-SSC compares are those few features'. {PREPROCESSING_RULE}",
            UnsuitableSettingWarning)
    if not normalize and X.shape[0] <= MAX_ROWS and (scale := outside_scale_range(X)):
        warn_caller(
            f"X's scale (median largest |entry| per point {scale:.3g}) lies outside "
            f"[{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}], where a fit with normalize=False "
            "(presets 'faces' and 'motion') was measured to match its fit at scale 1: the "
            "solver's absolute constants decide the codes. Divide X by one number of its "
            "scale (e.g. X / np.abs(X).max()); AutoKSSC does so itself.",
            UnsuitableSettingWarning)


def centroid_silhouette(X, labels):
    """Mean silhouette of the points with centroids for centres: (b - a) / max(a, b), a the
    squared distance to its own cluster's centroid with the point left out (scaled by
    (m / (m - 1))^2 for a cluster of m points), b the smallest to another's. The k-means
    counterpart of `kssc.auto.subspace_silhouette`, on the points as given; in [-1, 1], -1
    with a single cluster."""
    clusters, own = np.unique(labels, return_inverse=True)
    if len(clusters) < 2:
        return -1.0
    X = np.asarray(X, dtype=np.float64)
    sizes = np.bincount(own)
    centres = np.stack([X[own == c].mean(axis=0) for c in range(len(clusters))])
    distances = (np.einsum("ij,ij->i", X, X)[:, None] - 2 * X @ centres.T
                 + np.einsum("ij,ij->i", centres, centres)[None, :]).clip(0)
    rows = np.arange(len(X))
    a = distances[rows, own] * (sizes[own] / np.maximum(sizes[own] - 1, 1)) ** 2
    distances[rows, own] = np.inf
    b = distances.min(axis=1)
    return float(np.mean((b - a) / np.maximum(np.maximum(a, b), np.finfo(float).tiny)))


CENTROID_MARGIN = 0.45
"""How far k-means' centroid silhouette must exceed the chosen clustering's subspace
silhouette for `warn_centroid_model` to warn. On the panel's tables
(benchmarks/bench_suitability.py --part centroid) the excess was +0.600 on wine, the one
table where k-means beat AutoKSSC by more than 2 points (29.8 against 32.6 % error), +0.307
on breast cancer, where AutoKSSC is ahead (10.4 against 14.6 %), +0.097 on one noisy TIR
draw (52 against 56 %, both failing) and negative on the rest; 0.45 lies between wine and
breast cancer. With a single table on k-means' side no leave-one-family-out check is
possible."""


CENTROID_SAMPLE = 2_000
"""Points the k-means comparison of `centroid_check` fits at most (a random sample beyond):
10 k-means restarts on 20,000 x 321 points took 45 s on one loaded core."""


def centroid_check(X, labels, subspace_score, random_state=None):
    """The label-free comparison of the chosen subspace clustering with a k-means fit of as
    many clusters on the same points (at most CENTROID_SAMPLE of them, drawn with
    `random_state`): {"subspace_silhouette": `subspace_score` (the chosen labels'
    `kssc.auto.subspace_silhouette`), "kmeans_silhouette": `centroid_silhouette` of
    k-means' labels, "kmeans_agreement": the adjusted Rand index of the two labelings}."""
    n_clusters = len(np.unique(labels))
    if n_clusters < 2:
        return {"subspace_silhouette": subspace_score, "kmeans_silhouette": np.nan,
                "kmeans_agreement": np.nan}
    rng = check_random_state(random_state)
    if X.shape[0] > CENTROID_SAMPLE:
        sample = np.sort(rng.choice(X.shape[0], CENTROID_SAMPLE, replace=False))
        X, labels = X[sample], np.asarray(labels)[sample]
    kmeans = KMeans(n_clusters, n_init=10, random_state=rng).fit(X).labels_
    return {"subspace_silhouette": float(subspace_score),
            "kmeans_silhouette": centroid_silhouette(X, kmeans),
            "kmeans_agreement": float(adjusted_rand_score(labels, kmeans))}


def warn_centroid_model(check):
    """UnsuitableSettingWarning with the numbers when k-means' centroid silhouette exceeds
    the subspace silhouette by more than CENTROID_MARGIN (`centroid_check`'s dict)."""
    if not check["kmeans_silhouette"] > check["subspace_silhouette"] + CENTROID_MARGIN:
        return
    warn_caller(
        f"a centroid model fits these data better than subspaces: k-means' silhouette "
        f"{check['kmeans_silhouette']:.3f} (distances to centroids) against the chosen "
        f"clustering's subspace silhouette {check['subspace_silhouette']:.3f} (residuals to "
        f"subspaces); the two labelings agree at adjusted Rand index "
        f"{check['kmeans_agreement']:.2f}. Try sklearn.cluster.KMeans on these data. "
        f"{PREPROCESSING_RULE}", UnsuitableSettingWarning)
