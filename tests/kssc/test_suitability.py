"""kssc.utils._suitability: the standardised-data warning fires once on standardised data, the
mixed-units warning on features in different units, the scale warning on data far from scale
1 coded as given, and none on data as measured; every preprocessing warning ends with the
one rule."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.preprocessing import StandardScaler

from kssc import KSSC, UnsuitableSettingWarning
from kssc.datasets import make_subspaces
from kssc.presets import preset_params
from kssc.utils._suitability import PREPROCESSING_RULE, effective_features


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
    assert PREPROCESSING_RULE in str(caught[0].message)
    # float32 standardised data too
    assert len(_unsuitable(X.astype(np.float32))) == 1


@pytest.mark.parametrize("X", [SUBSPACES, load_digits().data[:300],
                               StandardScaler(with_mean=False).fit_transform(SUBSPACES),
                               StandardScaler(with_mean=False).fit_transform(load_wine().data),
                               SUBSPACES - SUBSPACES.mean(axis=0)],
                         ids=["subspaces", "digits", "scaled-only", "wine-scaled-only",
                              "centred-only"])
def test_data_as_measured_do_not_warn(X):
    assert _unsuitable(X) == []


@pytest.mark.parametrize("X", [load_wine().data, load_breast_cancer().data,
                               SUBSPACES * np.r_[1e3, np.ones(19)]],
                         ids=["wine", "breast_cancer", "one-feature-in-mm"])
def test_features_in_different_units_warn_with_the_rule(X):
    """Wine raw (33.7 % error; 4.5 % scaled without centring) used to fit without a word."""
    caught = _unsuitable(X)
    assert len(caught) == 1
    assert "features look like different units" in str(caught[0].message)
    assert PREPROCESSING_RULE in str(caught[0].message)


def test_effective_features_by_hand_and_at_any_scale():
    X = np.array([[3.0, 1, 0], [3, -1, 0]])  # mean squares 9, 1, 0
    assert effective_features(X) == pytest.approx((100 / 82, 0.9))
    assert effective_features(X * 1e300) == pytest.approx((100 / 82, 0.9))


@pytest.mark.parametrize("preset", ["faces", "motion"])
@pytest.mark.parametrize("scale", [1e-100, 1e50])
def test_presets_that_code_points_as_given_warn_far_from_scale_1(preset, scale):
    """faces at 1e-100 (66 % error) and motion at 1e50 (62 %) used to fail silently."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        KSSC(3, random_state=0, **preset_params(preset)).fit(SUBSPACES * scale)
    messages = [str(w.message) for w in caught if issubclass(w.category, UnsuitableSettingWarning)]
    assert any("X's scale (median largest |entry| per point" in m and "lies outside" in m
               for m in messages)


def test_unit_rows_do_not_warn_far_from_scale_1():
    assert _unsuitable(SUBSPACES * 1e-100) == []


def test_the_user_guide_quotes_the_one_preprocessing_rule():
    """The guide said to avoid per-feature scaling while the warning said it was fine."""
    from experiments._checkout import REPO_ROOT

    guide = " ".join((REPO_ROOT / "docs" / "user_guide.rst").read_text().split())
    assert PREPROCESSING_RULE in guide


def test_centroid_check_fits_k_means_on_a_sample_of_large_data(monkeypatch):
    from sklearn.cluster import KMeans

    from kssc.utils import _suitability

    X, y, _ = make_subspaces(3, 2, 30, 5, random_state=0)
    monkeypatch.setattr(_suitability, "CENTROID_SAMPLE", 40)
    check = _suitability.centroid_check(X, y, 0.5, random_state=0)
    rng = np.random.RandomState(0)
    sample = np.sort(rng.choice(90, 40, replace=False))
    kmeans = KMeans(3, n_init=10, random_state=rng).fit(X[sample]).labels_
    assert check["kmeans_silhouette"] == pytest.approx(
        _suitability.centroid_silhouette(X[sample], kmeans))
