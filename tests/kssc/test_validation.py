"""kssc.utils._validation's integer checks: scikit-learn's check_scalar, then the
data-dependent bound."""

import numpy as np
import pytest

from kssc.utils._validation import check_n_clusters, check_n_neighbors


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
