"""Cheap label-free signs that a setting does not suit the data, raised once per fit.

Standardised features (every column mean 0 and variance 1, e.g. StandardScaler's output):
centring moves subspaces through the origin off it, turning a union of linear subspaces
into affine ones, which the linear self-expression codes badly.

Signs tried and not used, because they did not separate the data where a preset helps from
the data where it does not (docs/presets.md): the length of the points' mean unit vector (a
common offset) and the share of their top principal direction.
"""

import numpy as np

from ._validation import ROW_CHUNK_BYTES
from ._warnings import warn_caller

# Above this many rows the check is skipped (it reads every row).
MAX_ROWS = 200_000
STANDARDISED_TOL = 1e-4


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


def warn_unsuitable(X):
    """One UnsuitableSettingWarning when X shows a sign the fit will not suit it."""
    if looks_standardised(X):
        warn_caller(
            "X looks standardised (every feature has mean 0 and variance 1, as StandardScaler "
            "gives): centring moves subspaces through the origin off it, so a union of linear "
            "subspaces becomes affine. Fit the data before centring (a per-feature scale "
            "alone keeps subspaces linear); if the data are affine by nature (e.g. motion "
            "trajectories), try preset 'motion' (kssc.presets).", UnsuitableSettingWarning)
