"""kssc.auto: the label-free choice between settings, its criteria and its API."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from kssc import KSSC, UnsuitableSettingWarning, clustering_error
from kssc import auto as auto_module
from kssc.auto import (
    CRITERIA,
    SUBSPACE_CRITERIA,
    AutoKSSC,
    at_best,
    candidate_criteria,
    eigengap,
    normalized_cut,
    relative_residual,
    subspace_residual,
    subspace_silhouette,
)
from kssc.datasets import make_subspaces
from kssc.presets import PAPER_SETTING, preset_params


def test_subspace_residual_by_hand():
    # Cluster 0 lies on a line (nothing left); cluster 1 spans two axes: one unit left.
    X = np.array([[1.0, 0, 0], [2, 0, 0], [0, 1, 0], [0, 0, 3]])
    assert subspace_residual(X, np.array([0, 0, 1, 1]), 1) == pytest.approx(0.25)
    assert subspace_residual(X, np.array([0, 0, 1, 1]), 2) == pytest.approx(0.0)
    assert subspace_residual(X, np.array([0, 1, 0, 1]), 1) == pytest.approx(0.5)


def test_subspace_silhouette_by_hand():
    # Two clusters of two unit vectors, d = 1. Cluster 0's line is (3, 1)/sqrt(10): each of
    # its points keeps a = 0.1 of its energy off it, with leverage 1/2, so a = 0.1 / 0.5^2 =
    # 0.4 left out; cluster 1 is its mirror image, 0.9 off for them: (0.9 - 0.4) / 0.9.
    X = np.array([[1.0, 0], [0.8, 0.6], [0, 1], [-0.6, 0.8]])
    assert subspace_silhouette(X, np.array([0, 0, 1, 1]), 1) == pytest.approx(5 / 9)
    # Points on two axes: nothing off their own line, everything off the other.
    lines = np.array([[1.0, 0], [2, 0], [-3, 0], [0, 1], [0, 2], [0, -1]])
    assert subspace_silhouette(lines, np.array([0, 0, 0, 1, 1, 1]), 1) == pytest.approx(1.0)
    assert subspace_silhouette(lines, np.zeros(6, dtype=int), 1) == -1.0


def _silhouette_by_svd(X, labels, dim):
    """The subspace silhouette from an SVD of every cluster (the definition, term by term)."""
    P = X / np.linalg.norm(X, axis=1, keepdims=True)
    clusters = np.unique(labels)
    fits = {c: np.linalg.svd(P[labels == c], full_matrices=False) for c in clusters}
    scores = []
    for i, point in enumerate(P):
        own = labels[i]
        u, _, vt = fits[own]
        h = np.sum(u[np.flatnonzero(labels == own) == i][0, :dim] ** 2)
        a = min(1.0, (1 - np.sum((vt[:dim] @ point) ** 2)) / (1 - h) ** 2)
        b = min(1 - np.sum((fits[c][2][:dim] @ point) ** 2) for c in clusters if c != own)
        scores.append((b - a) / max(a, b))
    return np.mean(scores)


@pytest.mark.parametrize("n_features", [40, 8])  # clusters of fewer, then more points than D
def test_criteria_from_the_gram_matrix_match_an_svd(n_features):
    X, y, _ = make_subspaces(3, 3, 20, n_features, noise=0.2, random_state=2)
    wrong = y.copy()
    wrong[::4] = (wrong[::4] + 1) % 3
    for labels in (y, wrong):
        P = X / np.linalg.norm(X, axis=1, keepdims=True)
        by_svd = sum(np.sum(np.linalg.svd(P[labels == c], compute_uv=False)[2:] ** 2)
                     for c in range(3)) / len(X)
        assert subspace_residual(X, labels, 2) == pytest.approx(by_svd, rel=1e-10)
        assert subspace_silhouette(X, labels, 2) == pytest.approx(
            _silhouette_by_svd(X, labels, 2), rel=1e-8)


def test_silhouette_leaves_out_directions_beyond_a_clusters_rank():
    # Two exact 2-dim subspaces scored at 4 dimensions: every point's own residual is 0
    # (no direction beyond the rank counts), and each cluster's basis has 2 non-zero rows.
    from kssc.auto import _bases

    X, y, _ = make_subspaces(2, 2, 15, 10, random_state=1)
    P = X / np.linalg.norm(X, axis=1, keepdims=True)
    basis, _, _ = _bases(P, y, 4)
    assert [int(np.sum(np.linalg.norm(b, axis=1) > 0)) for b in basis] == [2, 2]
    np.testing.assert_allclose(np.einsum("cdf,cef->cde", basis[:, :2], basis[:, :2]),
                               np.stack([np.eye(2)] * 2), atol=1e-10)
    assert subspace_silhouette(X, y, 4) > 0.9


def test_silhouette_does_not_reward_clusters_that_fit_their_own_points():
    # A cluster of at most d points spans them exactly: left out, its points score a = 1.
    X, y, _ = make_subspaces(2, 2, 30, 6, noise=0.1, random_state=0)
    split = y.copy()
    split[:2] = 2  # two points of subspace 0 in a cluster of their own (d = 2)
    assert subspace_residual(X, split, 2) < subspace_residual(X, y, 2)  # the residual rewards it
    assert subspace_silhouette(X, split, 2) < subspace_silhouette(X, y, 2)


@pytest.mark.parametrize("criterion", ["silhouette", "relative_residual", "residual"])
def test_criteria_prefer_the_true_union_of_subspaces(criterion):
    X, y, _ = make_subspaces(3, 3, 40, 15, noise=0.05, random_state=2)
    wrong = y.copy()
    wrong[::4] = (wrong[::4] + 1) % 3  # a quarter of the points in the next subspace's cluster
    values = candidate_criteria(X, {"true": (y, _graph(y)), "wrong": (wrong, _graph(wrong))},
                                3, random_state=0)
    sign = 1 if CRITERIA[criterion] == "min" else -1
    assert sign * values["true"][criterion] < sign * values["wrong"][criterion]


def test_silhouette_fails_when_the_clusters_differ_by_norm_alone():
    # Two groups on the same line, at norms 1 and 5: on unit-norm points they coincide, and
    # splitting by the sign of the small second coordinate looks like two better subspaces.
    rng = np.random.default_rng(0)
    X = np.vstack([[1.0, 0], [5.0, 0]]).repeat(30, axis=0)
    X[:, 1] = 0.05 * rng.standard_normal(60)
    y = np.repeat([0, 1], 30)
    by_sign = (X[:, 1] > 0).astype(int)
    assert subspace_silhouette(X, by_sign, 1) > subspace_silhouette(X, y, 1)


def test_relative_residual_is_over_the_shuffled_mean():
    X, y, _ = make_subspaces(2, 2, 20, 6, noise=0.1, random_state=1)
    rng = np.random.RandomState(5)
    shuffled = np.mean([subspace_residual(X, rng.permutation(y), 2) for _ in range(3)])
    assert relative_residual(X, y, 2, random_state=5) == pytest.approx(
        subspace_residual(X, y, 2) / shuffled)


def test_normalized_cut_against_a_dense_computation():
    rng = np.random.default_rng(3)
    W = rng.random((12, 12))
    W = W + W.T
    labels = rng.integers(0, 3, 12)
    expected = np.mean([W[labels == c][:, labels != c].sum() / W[labels == c].sum()
                        for c in range(3)])
    assert normalized_cut(W, labels) == pytest.approx(expected)


def _graph(labels):
    """A block affinity of `labels`: 1 within a cluster."""
    return (labels[:, None] == labels[None, :]).astype(float) - np.eye(len(labels))


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
    auto = AutoKSSC(4, candidates=candidates, criterion="residual", subspace_dim=4,
                    random_state=3).fit(X)
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
    for criterion, best in CRITERIA.items():
        other = AutoKSSC(4, candidates=candidates, criterion=criterion, random_state=3).fit(X)
        assert set(other.selection_[2]) == {*CRITERIA, "n_clusters", "n_clusters_confidence",
                                            "time_s", "failure", "screen", "skipped"}
        values = {key: value[criterion] for key, value in other.selection_.items()}
        assert other.best_candidate_ == (min if best == "min" else max)(values, key=values.get)


def test_criteria_at_several_dimensions_equal_each_dimension_alone():
    X, y, _ = make_subspaces(3, 3, 30, 10, noise=0.1, random_state=4)
    wrong = y.copy()
    wrong[::3] = (wrong[::3] + 1) % 3
    fits = {"true": (y, _graph(y)), "wrong": (wrong, _graph(wrong))}
    together = candidate_criteria(X, fits, (2, 5, 12), random_state=1)
    assert list(together) == [2, 5, 12]
    for dim in (2, 5, 12):
        alone = candidate_criteria(X, fits, dim, random_state=1)
        for key in fits:
            assert together[dim][key] == pytest.approx(alone[key])
    for criterion in CRITERIA:  # SUBSPACE_CRITERIA: the ones that depend on the dimension
        moved = together[2]["wrong"][criterion] != pytest.approx(together[5]["wrong"][criterion])
        assert moved == (criterion in SUBSPACE_CRITERIA)
    # 5 and 12 are above n_features // n_clusters = 10 // 3: both scored at 3 (three
    # independent subspaces of more than 3 dimensions do not fit in 10).
    for dim in (5, 12):
        assert together[dim]["true"]["residual"] == pytest.approx(subspace_residual(X, y, 3))
    assert subspace_residual(X, y, 3) != pytest.approx(subspace_residual(X, y, 5))
    assert together[2]["true"]["residual"] > together[5]["true"]["residual"]


def test_verbose_reports_every_candidate_and_the_criteria(capsys):
    X, _, _ = make_subspaces(2, 2, 20, 6, noise=0.1, random_state=0)  # no silhouette of 1
    AutoKSSC(2, candidates=("generic", "paper"), random_state=0, verbose=1).fit(X)
    err = capsys.readouterr().err
    for stage in ("candidate 'generic' (1 of 2)", "candidate 'paper' (2 of 2)", "criteria"):
        assert f"[AutoKSSC] {stage}" in err
    assert "[KSSC]" in err  # the candidates report their own stages
    AutoKSSC(2, candidates=("generic",), random_state=0).fit(X)
    assert capsys.readouterr().err == ""


def test_criteria_of_no_candidate_are_refused():
    with pytest.raises(ValueError, match="fits is empty"):
        candidate_criteria(np.eye(3), {}, 1)


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


def test_the_experiments_automatic_choice_is_autokssc_with_its_defaults():
    # conf/method/kssc_auto.yaml states every setting; they must be AutoKSSC's defaults,
    # which the panel chose (docs/presets.md).
    from omegaconf import OmegaConf

    from experiments._checkout import CONF_DIR

    conf = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "method" / "kssc_auto.yaml"))
    assert conf.pop("_target_") == "kssc.AutoKSSC"
    defaults = AutoKSSC().get_params()
    assert {key: defaults[key] for key in conf} == {**conf, "candidates": tuple(conf["candidates"])}


def test_predict_is_the_chosen_candidates():
    X, _, _ = make_subspaces(3, 3, 40, 20, noise=0.02, random_state=5)
    new, _, _ = make_subspaces(3, 3, 5, 20, random_state=6)
    auto = AutoKSSC(3, candidates=("generic", "paper"), random_state=0).fit(X)
    np.testing.assert_array_equal(auto.predict(new), auto.best_estimator_.predict(new))
    np.testing.assert_array_equal(auto.predict(X[:10]), auto.best_estimator_.predict(X[:10]))
    with pytest.raises(ValueError, match="AutoKSSC is expecting 20 features"):
        auto.predict(new[:, :5])


def test_a_failing_candidate_is_recorded_and_the_others_compete():
    """30 points: faces' 30 neighbours cannot be found, and the whole fit used to fail."""
    X, y, _ = make_subspaces(3, 3, 10, 20, random_state=0)
    with pytest.warns(UnsuitableSettingWarning, match=r"1 of 2 candidates failed .*'faces': "
                      r"ValueError: n_neighbors=30 must be < n_samples=30"):
        auto = AutoKSSC(3, candidates=("faces", "generic"), random_state=0).fit(X)
    assert auto.best_candidate_ == "generic"
    assert auto.selection_["faces"]["failure"] == (
        "ValueError: n_neighbors=30 must be < n_samples=30: each point needs that many other "
        "points.")
    assert auto.selection_["generic"]["failure"] is None
    assert np.isnan(auto.selection_["faces"]["silhouette"])
    assert auto.selection_["faces"]["time_s"] >= 0
    np.testing.assert_array_equal(
        auto.labels_, KSSC(3, random_state=0, **preset_params("generic")).fit(X).labels_)


def test_every_candidate_failing_names_each():
    X, _, _ = make_subspaces(2, 2, 6, 8, random_state=0)
    with pytest.raises(ValueError, match=r"every candidate failed: 'generic': ValueError: "
                       r"n_neighbors=20 must be < n_samples=12.*; 'faces': ValueError: "
                       r"n_neighbors=30"):
        AutoKSSC(2, candidates=("generic", "faces"), random_state=0).fit(X)


def test_invalid_candidate_parameters_are_raised_not_recorded():
    X, _, _ = make_subspaces(2, 2, 20, 5, random_state=0)
    with pytest.raises(ValueError, match="'lam' parameter of KSSC must be"):
        AutoKSSC(2, candidates=("generic", {"lam": -1.0}), random_state=0).fit(X)


@pytest.mark.parametrize("scale", [1e300, 1e-150])
def test_data_far_from_scale_1_fit_as_at_scale_1(scale):
    """At 1e300 faces and motion raised LinAlgError (the whole fit failed); at 1e-150 faces
    gave 66 % error. A power of two brings X to scale 1 for every candidate."""
    X, y, _ = make_subspaces(3, 3, 40, 20, noise=0.05, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsuitableSettingWarning)
        auto = AutoKSSC(3, random_state=0).fit(X * scale)
    assert auto.scale_ == 2.0 ** -round(np.log2(scale * np.median(np.abs(X).max(axis=1))))
    for key, value in auto.selection_.items():
        assert value["failure"] is None, key
    assert clustering_error(y, auto.labels_) == 0.0
    np.testing.assert_array_equal(auto.predict(X[:9] * scale), auto.labels_[:9])


def test_a_table_a_centroid_model_fits_better_warns_with_the_numbers():
    """Wine as given: k-means 29.8 % error against AutoKSSC's 32.6 %, without a word."""
    from sklearn.datasets import load_wine

    with pytest.warns(UnsuitableSettingWarning, match=r"a centroid model fits these data "
                      r"better than subspaces: k-means' silhouette 0\.841 .* subspace "
                      r"silhouette 0\.241"):
        auto = AutoKSSC(3, random_state=0).fit(load_wine().data)
    assert auto.centroid_check_["kmeans_silhouette"] == pytest.approx(0.841, abs=1e-3)
    assert auto.centroid_check_["subspace_silhouette"] == auto.selection_[
        auto.best_candidate_]["silhouette"]


def test_a_union_of_subspaces_raises_no_centroid_warning():
    X, _, _ = make_subspaces(3, 3, 40, 20, noise=0.05, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsuitableSettingWarning)
        auto = AutoKSSC(3, candidates=("generic", "paper"), random_state=0).fit(X)
    check = auto.centroid_check_
    assert check["kmeans_silhouette"] < check["subspace_silhouette"]


def test_centroid_silhouette_by_hand():
    from kssc.utils._suitability import centroid_silhouette

    # Two pairs at distance 2 apart on a line; left out, a point's own centroid is its
    # partner (distance 1), the other pair's centroid at 1.5 and 3.5 squared distances away.
    X = np.array([[0.0], [1.0], [3.0], [4.0]])
    a, b = 1.0, 2.5**2  # point 1: partner at 0 (1), the other centroid 3.5 at 2.5
    expected = np.mean([(3.5**2 - 1) / 3.5**2, (b - a) / b, (b - a) / b, (3.5**2 - 1) / 3.5**2])
    assert centroid_silhouette(X, np.array([0, 0, 1, 1])) == pytest.approx(expected)
    assert centroid_silhouette(X, np.zeros(4, dtype=int)) == -1.0


def test_auto_with_n_clusters_none_keeps_the_chosen_candidates_confidence():
    X, _, _ = make_subspaces(3, 3, 40, 20, noise=0.05, random_state=0)
    auto = AutoKSSC(None, candidates=("generic", "paper"), random_state=0).fit(X)
    assert auto.n_clusters_confidence_ == auto.best_estimator_.n_clusters_confidence_
    assert 0.0 <= auto.n_clusters_confidence_ <= 1.0
    # AutoSC's choice: the candidate whose own k has the largest relative eigen-gap.
    confidences = {name: KSSC(None, random_state=0, **preset_params(name)).fit(X)
                   .n_clusters_confidence_ for name in ("generic", "paper")}
    assert auto.best_candidate_ == max(confidences, key=confidences.get)
    given = AutoKSSC(3, candidates=("generic",), random_state=0).fit(X)
    assert given.n_clusters_confidence_ is None


def test_auto_warns_about_rounded_integers():
    from sklearn.exceptions import DataConversionWarning

    X, _, _ = make_subspaces(2, 2, 15, 6, random_state=0)
    with pytest.warns(DataConversionWarning, match="beyond 2\\*\\*53"):
        AutoKSSC(2, candidates=("generic",), random_state=0).fit(
            2**60 + np.round(X * 1e3).astype(np.int64))


def test_candidates_after_one_at_the_bound_are_not_fitted(monkeypatch):
    # Noiseless independent subspaces: the generic preset's silhouette is 1 to rounding, which
    # no later candidate can pass; they are not fitted, and the choice is the one of fitting
    # every candidate (AT_BEST = -1 turns the rule off).
    X, _, _ = make_subspaces(3, 3, 40, 30, random_state=0)
    auto = AutoKSSC(3, random_state=0).fit(X)
    assert auto.best_candidate_ == "generic"
    assert auto.selection_["generic"]["silhouette"] == pytest.approx(1.0, abs=1e-9)
    for key in ("faces", "motion"):
        entry = auto.selection_[key]
        assert entry["skipped"].startswith("not fitted: 'generic' reached the silhouette's bound")
        assert np.isnan(entry["time_s"]) and np.isnan(entry["silhouette"])
        assert np.isnan(entry["n_clusters"])
    monkeypatch.setattr(auto_module, "AT_BEST", -1.0)
    every = AutoKSSC(3, random_state=0).fit(X)
    assert all(entry["skipped"] is None for entry in every.selection_.values())
    assert every.best_candidate_ == "generic"
    np.testing.assert_array_equal(every.labels_, auto.labels_)


@pytest.mark.filterwarnings("ignore::kssc.DegenerateFitWarning")
@pytest.mark.parametrize("case", ["n_clusters=None", "eigengap", "noisy"])
def test_no_candidate_is_left_out_short_of_the_bound(case):
    X, _, _ = make_subspaces(3, 3, 40, 30, noise=0.2 if case == "noisy" else 0.0,
                             random_state=0)
    auto = AutoKSSC(None if case == "n_clusters=None" else 3,
                    criterion="eigengap" if case == "eigengap" else "silhouette",
                    candidates=("generic", "paper"), random_state=0).fit(X)
    assert all(entry["skipped"] is None for entry in auto.selection_.values())


def test_at_best_needs_the_bound_and_every_cluster():
    X, y, _ = make_subspaces(3, 2, 30, 10, random_state=0)
    assert at_best(X, y, "residual", 2, 3) == pytest.approx(0.0, abs=1e-9)
    assert at_best(X, y, "silhouette", 2, 3) == pytest.approx(1.0, abs=1e-9)
    assert at_best(X, y, "eigengap", 2, 3) is None  # no bound a single fit can reach
    assert at_best(X, y, "silhouette", 2, 4) is None  # fewer clusters than asked for
    wrong = y.copy()
    wrong[::4] = (wrong[::4] + 1) % 3
    assert at_best(X, wrong, "silhouette", 2, 3) is None
