"""kssc.utils._validation's integer checks: scikit-learn's check_scalar, then the data-dependent
bound; integer data that float64 rounds."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import DataConversionWarning

from kssc import KSSC
from kssc.datasets import make_subspaces
from kssc.utils._validation import check_n_clusters, check_n_neighbors, warn_inexact_integers


def test_n_neighbors_must_be_an_int_below_n_samples():
    assert check_n_neighbors(np.int64(3), 10) == 3
    with pytest.raises(ValueError, match="n_neighbors=10 must be < n_samples=10"):
        check_n_neighbors(10, 10)
    with pytest.raises(ValueError, match="n_neighbors == 0, must be >= 1"):
        check_n_neighbors(0, 10)
    with pytest.raises(TypeError, match="n_neighbors must be an instance of int"):
        check_n_neighbors(2.0, 10)


def test_n_clusters_may_be_none_or_an_int_up_to_n_samples():
    assert check_n_clusters(None, 5) is None
    assert check_n_clusters(5, 5) == 5
    with pytest.raises(ValueError, match="n_clusters=6 must be <= n_samples=5"):
        check_n_clusters(6, 5)
    with pytest.raises(ValueError, match="n_clusters == 0, must be >= 1"):
        check_n_clusters(0, 5)


def test_integers_that_float64_rounds_warn_with_their_count():
    """int64 beyond 2**53 used to be rounded silently (64 % error near a large offset)."""
    near_offset = 2**60 + np.arange(12, dtype=np.int64).reshape(4, 3)  # float64 steps by 256
    with pytest.warns(DataConversionWarning, match=r"X holds 11 integer entries beyond 2\*\*53 "
                      r"\(up to 1\.153e\+18\)"):
        warn_inexact_integers(near_offset)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_inexact_integers(np.arange(12, dtype=np.int64).reshape(4, 3))
        warn_inexact_integers(2**60 * np.arange(12, dtype=np.int64).reshape(4, 3))  # exact
        warn_inexact_integers(np.arange(12, dtype=np.uint64).reshape(4, 3))


def test_kssc_warns_about_rounded_integers():
    X, _, _ = make_subspaces(2, 2, 15, 6, random_state=0)
    X = 2**60 + np.round(X * 1e3).astype(np.int64)
    with pytest.warns(DataConversionWarning, match="beyond 2\\*\\*53"):
        KSSC(2, n_neighbors=5, random_state=0).fit(X)
