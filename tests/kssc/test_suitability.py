"""kssc.utils._suitability: the standardised-data warning fires once on standardised data and not
on data as measured."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_wine
from sklearn.preprocessing import StandardScaler

from kssc import KSSC, UnsuitableSettingWarning
from kssc.datasets import make_subspaces


def _unsuitable(X, **params):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        KSSC(3, n_neighbors=10, random_state=0, **params).fit(X)
    return [w for w in caught if issubclass(w.category, UnsuitableSettingWarning)]


SUBSPACES = make_subspaces(3, 3, 40, 20, random_state=0)[0]


@pytest.mark.parametrize("X", [StandardScaler().fit_transform(SUBSPACES),
                               StandardScaler().fit_transform(load_wine().data)],
                         ids=["subspaces", "wine"])
def test_standardised_data_warn_once(X):
    caught = _unsuitable(X)
    assert len(caught) == 1
    assert "looks standardised" in str(caught[0].message)
    assert "preset 'motion'" in str(caught[0].message)
    # float32 standardised data too
    assert len(_unsuitable(X.astype(np.float32))) == 1


@pytest.mark.parametrize("X", [SUBSPACES, load_wine().data, load_digits().data[:300],
                               StandardScaler(with_mean=False).fit_transform(SUBSPACES),
                               SUBSPACES - SUBSPACES.mean(axis=0)],
                         ids=["subspaces", "wine", "digits", "scaled-only", "centred-only"])
def test_data_as_measured_do_not_warn(X):
    assert _unsuitable(X) == []
