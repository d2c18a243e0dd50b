"""kssc.auto: the label-free choice between settings, its criteria and its API."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from kssc import KSSC, clustering_error
from kssc.auto import AutoKSSC, eigengap, subspace_residual
from kssc.datasets import make_subspaces
from kssc.presets import PAPER_SETTING, preset_params


def test_subspace_residual_by_hand():
    # Cluster 0 lies on a line (nothing left); cluster 1 spans two axes: one unit left.
    X = np.array([[1.0, 0, 0], [2, 0, 0], [0, 1, 0], [0, 0, 3]])
    assert subspace_residual(X, np.array([0, 0, 1, 1]), 1) == pytest.approx(0.25)
    assert subspace_residual(X, np.array([0, 0, 1, 1]), 2) == pytest.approx(0.0)
    assert subspace_residual(X, np.array([0, 1, 0, 1]), 1) == pytest.approx(0.5)


def test_eigengap_of_blocks_against_scipy():
    import scipy.sparse as sp

    block = np.ones((5, 5)) - np.eye(5)
    W = sp.block_diag([block, block, 0.1 * block]).tolil()
    W[0, 5] = W[5, 0] = 0.5
    W = W.tocsr()
    d = np.asarray(W.sum(axis=1)).ravel()
    values = np.sort(np.linalg.eigvalsh((W / np.sqrt(np.outer(d, d))).toarray()))[::-1]
    assert eigengap(W, 2, 0) == pytest.approx(values[1] - values[2])


def test_choice_is_the_lowest_residual_among_the_candidates_own_fits():
    X, y, _ = make_subspaces(4, 4, 50, 30, random_state=1)
    X = X + 0.05 * np.random.default_rng(0).standard_normal(X.shape)
    candidates = ("generic", "paper", {"n_neighbors": 4, "lam": 0.5, "lam_mode": "absolute"})
    auto = AutoKSSC(4, candidates=candidates, subspace_dim=4, random_state=3).fit(X)
    assert set(auto.selection_) == {"generic", "paper", 2}
    residuals = {}
    for key, params in zip(("generic", "paper", 2), (preset_params("generic"),
                                                     preset_params("paper"), candidates[2]),
                           strict=True):
        model = KSSC(4, random_state=3, **params).fit(X)
        residuals[key] = subspace_residual(X, model.labels_, 4)
        assert auto.selection_[key]["residual"] == pytest.approx(residuals[key])
    assert auto.best_candidate_ == min(residuals, key=residuals.get)
    np.testing.assert_array_equal(auto.labels_, auto.best_estimator_.labels_)
    assert clustering_error(y, auto.labels_) <= 2.0
    assert clone(auto).get_params() == auto.get_params()
    by_gap = AutoKSSC(4, candidates=candidates, criterion="eigengap", random_state=3).fit(X)
    gaps = {key: value["eigengap"] for key, value in by_gap.selection_.items()}
    assert by_gap.best_candidate_ == max(gaps, key=gaps.get)


def test_bad_candidates_are_named():
    X, _, _ = make_subspaces(2, 2, 20, 5, random_state=0)
    with pytest.raises(ValueError, match="Unknown preset 'face' in candidates"):
        AutoKSSC(2, candidates=("face",)).fit(X)
    with pytest.raises(ValueError, match=r"candidates\[0\]=3 is neither"):
        AutoKSSC(2, candidates=(3,)).fit(X)
    with pytest.raises(ValueError, match="candidates is empty"):
        AutoKSSC(2, candidates=()).fit(X)


@parametrize_with_checks([AutoKSSC(candidates=({"n_neighbors": 5},
                                               {"n_neighbors": 5, **PAPER_SETTING}))])
def test_auto_is_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
