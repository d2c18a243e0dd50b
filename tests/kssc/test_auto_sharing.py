"""kssc.auto: what AutoKSSC's candidates share (one neighbour search), the screening that
skips a candidate which trails on a subsample, and the compile notice of every kernel family."""

import numpy as np
import pytest

from kssc import KSSC
from kssc.auto import AutoKSSC, shared_neighbors
from kssc.coding import _kernels
from kssc.datasets import make_subspaces


def _same_partition(a, b):
    pairs = np.unique(np.stack([a, b]), axis=1).shape[1]
    return pairs == np.unique(a).size == np.unique(b).size


def test_one_shared_search_gives_every_candidate_its_own_fit():
    X, _, _ = make_subspaces(3, 3, 40, 15, noise=0.05, random_state=2)
    candidates = ({"n_neighbors": 8}, {"n_neighbors": 12, "lam": 0.01},
                  {"n_neighbors": 10, "n_random": 5, "assign_labels": "kmeans"},
                  {"n_neighbors": 6, "metric": "l2", "normalize": False},
                  {"n_neighbors": 9, "metric": "l2", "normalize": False, "positive": True})
    auto = AutoKSSC(3, candidates=candidates, random_state=4)
    models = auto._models(auto._candidate_params(), 4)
    shared = shared_neighbors(X, models)
    assert set(shared) == set(models)  # two groups: absolute cosine, L2 of the points as given
    assert shared[0][0].shape == (120, 8) and shared[3][0].shape == (120, 6)
    fitted, failures, _, _ = auto._fit_each(X, models)
    assert not failures
    for key, params in enumerate(candidates):
        alone = KSSC(3, random_state=4, **params).fit(X)
        np.testing.assert_array_equal(fitted[key].neighbors_, alone.neighbors_)
        assert _same_partition(fitted[key].labels_, alone.labels_)
        assert fitted[key].neighbor_search_["algorithm"] == alone.neighbor_search_["algorithm"]
    fit = auto.fit(X)
    alone = KSSC(3, random_state=4, **candidates[fit.best_candidate_]).fit(X)
    assert _same_partition(fit.labels_, alone.labels_)


def test_searches_that_differ_are_not_shared():
    X, _, _ = make_subspaces(3, 3, 40, 15, random_state=2)
    auto = AutoKSSC(3, random_state=0)  # generic, faces, motion: three different searches
    assert shared_neighbors(X, auto._models(auto._candidate_params(), 0)) == {}


@pytest.mark.filterwarnings("ignore::kssc.DegenerateFitWarning")  # the losing candidate
def test_a_candidate_trailing_on_the_subsample_is_skipped_and_recorded():
    X, _, _ = make_subspaces(3, 3, 60, 15, noise=0.02, random_state=1)
    loser = {"n_neighbors": 2, "lam": 0.9, "lam_mode": "absolute"}
    failing = {"n_neighbors": 70}  # more than the subsample holds, fewer than X
    auto = AutoKSSC(3, candidates=("generic", loser, failing), screen_size=60,
                    random_state=0).fit(X)
    assert auto.best_candidate_ == "generic"
    kept, skipped, failed = auto.selection_["generic"], auto.selection_[1], auto.selection_[2]
    assert kept["skipped"] is None and np.isfinite(kept["silhouette"])
    assert kept["screen"] > skipped["screen"]
    assert skipped["skipped"].startswith("screened out: silhouette")
    assert "60-point subsample" in skipped["skipped"] and "'generic'" in skipped["skipped"]
    assert np.isnan(skipped["silhouette"]) and skipped["failure"] is None
    assert skipped["time_s"] > 0
    assert failed["skipped"].startswith("screened out: its fit failed on a 60-point subsample")
    full = AutoKSSC(3, candidates=("generic", loser, failing), screen_size=None,
                    random_state=0).fit(X)
    assert full.best_candidate_ == "generic"
    np.testing.assert_array_equal(full.labels_, auto.labels_)
    assert all(entry["skipped"] is None for entry in full.selection_.values())


@pytest.mark.filterwarnings("ignore::kssc.DegenerateFitWarning")  # the losing candidate
def test_without_n_clusters_the_screening_ranks_by_the_criterion():
    # AutoKSSC(None): each candidate chooses its own k, the criterion chooses among them; the
    # subsample ranks them by it too.
    X, _, _ = make_subspaces(3, 3, 60, 15, noise=0.02, random_state=1)
    loser = {"n_neighbors": 2, "lam": 0.9, "lam_mode": "absolute"}
    auto = AutoKSSC(None, candidates=("generic", loser), screen_size=60,
                    random_state=0).fit(X)
    kept = auto.selection_[auto.best_candidate_]
    (skipped,) = [entry for key, entry in auto.selection_.items()
                  if key != auto.best_candidate_]
    assert skipped["skipped"].startswith("screened out: silhouette")
    assert kept["skipped"] is None and kept["screen"] > skipped["screen"]
    full = AutoKSSC(None, candidates=("generic", loser), screen_size=None,
                    random_state=0).fit(X)
    assert full.best_candidate_ == auto.best_candidate_
    silhouettes = {key: entry["silhouette"] for key, entry in full.selection_.items()}
    assert full.best_candidate_ == max(silhouettes, key=silhouettes.get)
    assert auto.n_clusters_confidence_ == auto.best_estimator_.n_clusters_confidence_
    assert kept["n_clusters"] == auto.n_clusters_
    assert kept["n_clusters_confidence"] == auto.n_clusters_confidence_


@pytest.mark.parametrize("criterion", ["consensus", "common_ncut"])
def test_criteria_that_need_every_fit_screen_nothing(criterion):
    X, _, _ = make_subspaces(3, 3, 60, 15, noise=0.02, random_state=1)
    auto = AutoKSSC(3, candidates=("generic", "paper"), criterion=criterion, screen_size=60,
                    random_state=0).fit(X)
    assert all(entry["skipped"] is None and np.isnan(entry["screen"])
               for entry in auto.selection_.values())


def test_every_kernel_family_the_candidates_use_is_noticed_once(monkeypatch, capsys):
    X, _, _ = make_subspaces(2, 2, 40, 10, random_state=0)
    monkeypatch.setattr(_kernels, "_compile_noticed", False)
    monkeypatch.setattr(_kernels, "_FAMILIES_NOTICED", set())
    monkeypatch.setattr(_kernels, "is_cached", lambda dispatcher: False)
    monkeypatch.setenv(_kernels.NO_FILL, "1")  # a first import here does not fill the cache
    AutoKSSC(2, candidates=("generic", "faces"), random_state=0).fit(X)
    err = capsys.readouterr().err
    assert err.count("kssc: compiling") == 1
    for family in ("the neighbour search kernels", "the coefficient kernels",
                   "the ADMM kernels"):
        assert family in err
    # Once per process: a kernel this data never compiles leaves its family "uncached".
    AutoKSSC(2, candidates=("generic", "faces"), random_state=0).fit(X)
    assert "compiling" not in capsys.readouterr().err
    monkeypatch.setattr(_kernels, "_FAMILIES_NOTICED", set())
    monkeypatch.setattr(_kernels, "is_cached", lambda dispatcher: True)
    AutoKSSC(2, candidates=("generic", "faces"), random_state=0).fit(X)
    assert "compiling" not in capsys.readouterr().err
