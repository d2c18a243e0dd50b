"""The thermal infrared (TIR) mineral spectral library and the paper's semi-synthetic TIR data.

`tir/TIRlib.mat` comes from the paper's code repository (sjtrny/kssc @ 9189465e, MIT
license; the origin of the spectra is not stated there). Its variable `A` holds 120
spectra of 321 bands (6 to 14 um in 0.025 um steps, variable `wv`), each roughly min-max
scaled to [0, 1]. There are no labels: the experiments build each cluster from a few
random library spectra (`make_tir`, `make_tir_large`).
"""

import numpy as np
import scipy.io

from ._paths import require_files
from ._registry import Dataset
from .synthetic import (
    _check_int,
    _check_nonnegative,
    _labels,
    check_generator,
    dependent_coefficients,
)

TIR_FILE = "TIRlib.mat"

DATASET = Dataset(
    name="tir",
    title="TIR mineral spectral library",
    sources=(
        "https://github.com/sjtrny/kssc/raw/9189465e4b14c344fac73756ffb6cf84fb36b68f/data/"
        "TIRlib.mat",
    ),
    layout="file",
    n_bytes=177_734,
    loaders=("load_tir_library",),
)
"""The data set's declaration: the paper's code repository at a fixed commit serves the file."""


def load_tir_library(data_dir=None):
    """Load the TIR library.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The data folder; None: $KSSC_DATA_DIR, else `data/` at the repository root.

    Returns
    -------
    spectra : ndarray of shape (120, 321)
        One spectrum per row, values in [0, 1].
    wavelengths : ndarray of shape (321,)
        In micrometres (6.0 to 14.0).

    Raises
    ------
    DataNotFoundError
        If `tir/TIRlib.mat` is missing from the data folder.

    See Also
    --------
    make_tir : The paper's semi-synthetic data built from this library.

    Examples
    --------
    >>> from kssc.datasets import load_tir_library
    >>> spectra, wavelengths = load_tir_library()  # doctest: +SKIP
    >>> spectra.shape  # doctest: +SKIP
    (120, 321)
    """
    path, = require_files("tir", [TIR_FILE], data_dir)
    mat = scipy.io.loadmat(path, variable_names=["A", "wv"])
    spectra = np.ascontiguousarray(mat["A"].T, dtype=np.float64)
    return spectra, mat["wv"].ravel().astype(np.float64)


def make_tir(library, n_subspaces=5, n_spectra=5, n_per_subspace=20, noise=0.0, random_state=None):
    """Semi-synthetic TIR data of docs/protocol.md 3.4 (`test_tir.m`).

    For each subspace, `n_spectra` library spectra are drawn uniformly WITH replacement
    (so a subspace can have lower rank), and its `n_per_subspace` points are combinations
    of them with coefficients from `dependent_coefficients(0.1, 0.001, n_spectra,
    n_per_subspace)`: rows ~ N(0.1, tridiagonal covariance 0.001 / 0.0005), so consecutive
    points are correlated. Noise `noise * N(0, 1)` is added to the UN-normalised points,
    whose entries are at most about 0.5. The paper normalises the noisy points afterwards;
    that is left to the caller, who also computes the PSNR of X against X_clean.

    Parameters
    ----------
    library : array-like of shape (n_library, n_bands)
        Spectra as rows (`load_tir_library()[0]`).
    n_subspaces : int, default=5
        Number of subspaces (clusters).
    n_spectra : int, default=5
        Library spectra drawn for each subspace.
    n_per_subspace : int, default=20
        Points per subspace.
    noise : float, default=0.0
        Standard deviation of the noise added to the un-normalised points.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    X : ndarray of shape (n_subspaces * n_per_subspace, n_bands)
        Noisy points, not normalised.
    y : ndarray of shape (n_subspaces * n_per_subspace,)
        Subspace of each point (0-based, grouped).
    X_clean : ndarray of shape (n_subspaces * n_per_subspace, n_bands)
        The points without noise.

    See Also
    --------
    load_tir_library : The library.
    make_tir_large : The large-scale variant.

    Examples
    --------
    >>> import numpy as np
    >>> from kssc.datasets import make_tir
    >>> library = np.random.default_rng(0).uniform(size=(120, 321))  # or load_tir_library()[0]
    >>> X, y, X_clean = make_tir(library, noise=0.04, random_state=0)
    >>> X.shape
    (100, 321)
    """
    library = np.asarray(library, dtype=np.float64)
    if library.ndim != 2 or library.shape[0] < 1:
        raise ValueError(
            f"library must be a 2-D array of spectra as rows; got shape {library.shape}.")
    n_subspaces = _check_int("n_subspaces", n_subspaces, 1)
    n_spectra = _check_int("n_spectra", n_spectra, 1)
    n_per_subspace = _check_int("n_per_subspace", n_per_subspace, 1)
    noise = _check_nonnegative("noise", noise)
    rng = check_generator(random_state)
    blocks = []
    for _ in range(n_subspaces):
        chosen = rng.integers(0, library.shape[0], size=n_spectra)
        coef = dependent_coefficients(0.1, 0.001, n_spectra, n_per_subspace, rng)
        blocks.append(coef.T @ library[chosen])
    X_clean = np.vstack(blocks)
    X = X_clean + noise * rng.standard_normal(X_clean.shape) if noise else X_clean.copy()
    return X, _labels(n_subspaces, n_per_subspace), X_clean


def make_tir_large(library, n_per_subspace, n_spectra=3, n_subspaces=5, random_state=None):
    """Large-scale TIR data of docs/protocol.md 3.5 (`test_largescale.m`).

    Three spectra per subspace, no noise. Same construction as `make_tir`; the paper uses
    n_per_subspace = 100, 200, ..., 4000.

    Parameters
    ----------
    library : array-like of shape (n_library, n_bands)
        Spectra as rows (`load_tir_library()[0]`).
    n_per_subspace : int
        Points per subspace.
    n_spectra : int, default=3
        Library spectra drawn for each subspace.
    n_subspaces : int, default=5
        Number of subspaces.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of every random draw.

    Returns
    -------
    X : ndarray of shape (n_subspaces * n_per_subspace, n_bands)
        The points, not normalised.
    y : ndarray of shape (n_subspaces * n_per_subspace,)
        Subspace of each point.

    See Also
    --------
    make_tir : The construction, with noise.

    Examples
    --------
    >>> import numpy as np
    >>> from kssc.datasets import make_tir_large
    >>> library = np.random.default_rng(0).uniform(size=(120, 321))
    >>> X, y = make_tir_large(library, 100, random_state=0)
    >>> X.shape
    (500, 321)
    """
    X, y, _ = make_tir(library, n_subspaces=n_subspaces, n_spectra=n_spectra,
                       n_per_subspace=n_per_subspace, noise=0.0, random_state=random_state)
    return X, y
