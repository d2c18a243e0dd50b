"""Degenerate fits say so (issue 13.3): empty or isolating codes, lam >= lambda_max,
overflowing norms, duplicated points, disconnected graphs, fewer clusters than asked, and
the eigen-gap estimate of n_clusters=None."""

import warnings
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import eigh
from scipy.sparse.csgraph import laplacian

from kssc import KSSC
from kssc.baselines import BASELINES, GFS, GSC, SSC, SSSC
from kssc.datasets.synthetic import make_subspaces
from kssc.metrics import clustering_error
from kssc.spectral._clustering import (
    CLEAR_GAP,
    _normalized_adjacency,
    estimate_n_clusters,
    spectral_clustering,
)
from kssc.utils._validation import DegenerateFitWarning, normalize_rows

ESTIMATORS = {"KSSC": partial(KSSC, n_neighbors=5),
              **{cls.__name__: partial(cls, **small) for cls, small in BASELINES.values()}}


def _subspaces(seed=0, n_per_subspace=20):
    X, y, _ = make_subspaces(3, 3, n_per_subspace, 10, random_state=seed)
    return X, y


def _degenerate_messages(record):
    return [str(w.message) for w in record if issubclass(w.category, DegenerateFitWarning)]


@pytest.mark.parametrize("make", [lambda: KSSC(3, lam=2.0, lam_mode="absolute", solver="relaxed"),
                                  lambda: SSC(3, lam=2.0),
                                  lambda: SSSC(3, lam=2.0, n_in_sample=20, random_state=0)],
                         ids=["KSSC", "SSC", "SSSC"])
def test_lam_above_lambda_max_is_reported_with_both_values(make):
    X, _ = _subspaces()
    expected = r"no affinity above 1e-06\).*lam=2 >= lambda_max.*lambda_max=(1|0\.\d+) at most"
    with pytest.warns(DegenerateFitWarning, match=expected):
        labels = make().fit_predict(X)
    assert labels.shape == (60,)


def test_lam_between_points_lambda_max_names_the_isolated_points():
    X, _ = _subspaces()
    expected = r"\d+ of 60 point\(s\) are isolated.*lam=0.9 >= lambda_max"
    with pytest.warns(DegenerateFitWarning, match=expected):
        KSSC(3, lam=0.9, lam_mode="absolute", solver="relaxed").fit(X)


def test_relative_lam_of_one_or_more_is_reported():
    X, _ = _subspaces()
    with pytest.warns(DegenerateFitWarning, match="lam=1 >= 1 with lam_mode='relative'"):
        KSSC(3, lam=1.0, lam_mode="relative").fit(X)


def test_warning_points_at_the_callers_line():
    X, _ = _subspaces()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        KSSC(3, lam=2.0).fit_predict(X)
    assert record and all(w.filename == __file__ for w in record
                          if issubclass(w.category, DegenerateFitWarning))


@pytest.mark.parametrize("scale", [1e160, 1e-160])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_extreme_row_norms_are_normalised_safely(scale, dtype):
    # Squaring 1e160 overflows (and 1e-160 underflows): the rows used to become zero.
    X, _ = _subspaces()
    if dtype == np.float32:
        scale = 1e30 if scale > 1 else 1e-30  # squares out of float32's range
    X_unit, zero = normalize_rows((X * scale).astype(dtype))
    np.testing.assert_allclose(X_unit, X / np.linalg.norm(X, axis=1, keepdims=True), rtol=1e-5)
    assert not zero.any()


def test_fit_on_overflowing_values_matches_the_fit_on_the_data():
    X, y = _subspaces()
    labels = KSSC(3, random_state=0).fit_predict(X * 1e160)
    np.testing.assert_array_equal(labels, KSSC(3, random_state=0).fit_predict(X))
    assert clustering_error(y, labels) == 0.0


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("n_distinct", [1, 2])
def test_identical_points_give_labels(name, n_distinct):
    X = np.repeat(np.random.default_rng(0).standard_normal((n_distinct, 5)), 14, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = ESTIMATORS[name](n_clusters=3, random_state=0).fit_predict(X)
    assert labels.shape == (14 * n_distinct,)


@pytest.mark.parametrize("make", [lambda: GFS(3, k_max=1), lambda: SSC(3)], ids=["GFS", "SSC"])
def test_duplicated_points_do_not_crash_the_eigensolver(make):
    # LAPACK's subset eigensolver returned no eigenvector for these affinities, and the
    # spectral step failed with "IndexError: index 0 is out of bounds for axis 1 with size 0".
    X = np.repeat(np.random.default_rng(5).standard_normal((2, 5)), 14, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        labels = make().fit_predict(X)
    assert labels.shape == (28,)


def test_fewer_clusters_than_asked_are_reported():
    # GSC on 10 distinct points each repeated 6 times: its binary graph has 10 cliques.
    X, _ = _subspaces()
    X = np.repeat(X[:10], 6, axis=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        gsc = GSC(3, n_neighbors=3, random_state=0).fit(X)
    messages = _degenerate_messages(record)
    assert gsc.n_clusters_ < 3
    assert any(f"{gsc.n_clusters_} cluster(s) came out" in m and "n_clusters=3" in m
               for m in messages)


def test_more_components_than_clusters_warns_like_scikit_learn():
    blocks = sp.block_diag([np.ones((5, 5)) - np.eye(5)] * 4).tocsr()
    with pytest.warns(DegenerateFitWarning, match="graph is not fully connected: .* 4 connected"):
        labels = spectral_clustering(blocks, 2, random_state=0)
    assert labels.shape == (20,)


def test_components_matching_the_clusters_do_not_warn():
    blocks = sp.block_diag([np.ones((5, 5)) - np.eye(5)] * 4).tocsr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        labels = spectral_clustering(blocks, 4, random_state=0)
    assert clustering_error(np.repeat(np.arange(4), 5), labels) == 0.0


def test_eigen_gap_of_one_cluster_is_reported():
    # One Gaussian cloud: the relative eigen-gap never picks 1 cluster, so the choice it
    # makes has no clear gap and says so.
    X = np.random.default_rng(0).standard_normal((60, 10))
    with pytest.warns(DegenerateFitWarning, match="without a clear gap"):
        model = KSSC(None, random_state=0).fit(X)
    assert model.n_clusters_confidence_ < CLEAR_GAP
    with pytest.warns(DegenerateFitWarning, match="eigen-gap picked 1 cluster"):
        KSSC(None, max_clusters=1, random_state=0).fit(X)


def test_normalised_adjacency_is_identity_minus_scipy_laplacian():
    rng = np.random.default_rng(0)
    W = sp.random(40, 40, density=0.1, random_state=1)
    W = W + W.T + sp.diags(rng.random(40))  # a diagonal (GSC's) is ignored, as by scipy
    W = sp.csr_matrix(W)
    W[7, :] = 0
    W[:, 7] = 0  # an isolated point: eigenvalue 0 of the Laplacian, its own component
    W.eliminate_zeros()
    off = W - sp.diags(W.diagonal())
    expected = np.sort(eigh(laplacian(off.toarray(), normed=True), eigvals_only=True))
    ours = np.sort(1.0 - eigh(_normalized_adjacency(W).toarray(), eigvals_only=True))
    np.testing.assert_allclose(ours, expected, atol=1e-10)


def test_eigen_gap_estimate_does_not_depend_on_the_scale_of_the_affinity():
    # The N-Cut matrix drops entries <= 1e-6: weak affinities looked like one cluster.
    X, _ = _subspaces()
    W = KSSC(3, random_state=0).fit(X).affinity_matrix_
    assert [estimate_n_clusters(W * s) for s in (1.0, 1e-3, 1e-7)] == [3, 3, 3]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("make", [lambda: KSSC(None, random_state=0),
                                  lambda: SSC(None, random_state=0)], ids=["KSSC", "SSC"])
def test_n_clusters_none_finds_the_subspaces(make, seed):
    X, y = make_subspaces(3, 5, 60, 30, noise=0.05, random_state=seed)[:2]
    est = make().fit(X)
    assert est.n_clusters_ == 3
    assert clustering_error(y, est.labels_) < 5.0


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_max_clusters_caps_the_estimate(name):
    X, _ = _subspaces(n_per_subspace=30)
    est = ESTIMATORS[name](n_clusters=None, max_clusters=2, random_state=0)
    assert est.get_params()["max_clusters"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        assert est.fit(X).n_clusters_ <= 2


@pytest.mark.parametrize("make", [
    lambda: KSSC(3, n_neighbors=10, random_state=0),
    lambda: KSSC(3, n_neighbors=10, lam=0.1, lam_mode="absolute", random_state=0),
    lambda: KSSC(3, n_neighbors=10, normalize=False, random_state=0),
    lambda: SSC(3, random_state=0),
], ids=["KSSC", "KSSC-absolute", "KSSC-raw", "SSC"])
def test_one_zero_row_gives_one_warning(make):
    X, _ = _subspaces()
    X[5] = 0.0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        labels = make().fit(X).labels_
    messages = [str(w.message) for w in record]
    assert len(messages) == 1, messages
    assert messages[0].startswith("1 point(s) have zero norm (rows [5])")
    assert "no affinity, and they are left out of the spectral step and given the largest " \
        "cluster's label" in messages[0]
    assert labels[5] == np.bincount(np.delete(labels, 5)).argmax()


def test_isolated_nonzero_points_get_one_warning_with_their_cause():
    X, _ = _subspaces()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        KSSC(3, n_neighbors=5, lam=0.9, lam_mode="absolute", positive=True,
             random_state=0).fit(X)
    isolated = [str(w.message) for w in record if "isolated" in str(w.message)]
    assert len(isolated) == 1 and "lam=0.9 >= lambda_max" in isolated[0]
    assert not any("not fully connected" in str(w.message) and "isolated" in str(w.message)
                   for w in record)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_fewer_distinct_points_than_clusters_are_reported(name):
    # Two distinct points, each repeated 14 times, split into 3 clusters: some cluster holds
    # copies of a point another cluster also holds (issue 29.5: no warning before).
    X = np.repeat(np.random.default_rng(5).standard_normal((2, 5)), 14, axis=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ESTIMATORS[name](n_clusters=3, random_state=0).fit(X)
    assert any("2 distinct point(s) for n_clusters=3" in m for m in _degenerate_messages(record))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_enough_distinct_points_give_no_duplicate_warning(name):
    X, _ = _subspaces()
    X = np.repeat(X[:3], 10, axis=0)  # exactly 3 distinct points for 3 clusters
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ESTIMATORS[name](n_clusters=3, random_state=0).fit(X)
    assert not any("distinct point" in m for m in _degenerate_messages(record))


def test_distinct_count_reads_past_the_first_chunk(monkeypatch):
    # A chunk of one row at a time: the count must still cover every chunk.
    from kssc.utils import _validation

    monkeypatch.setattr(_validation, "ROW_CHUNK_BYTES", 1)
    X = np.repeat(np.eye(3), 4, axis=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _validation.warn_few_distinct(X, 3)
        _validation.warn_few_distinct(X, 4)
    assert _degenerate_messages(record) == [
        m for m in _degenerate_messages(record) if "3 distinct point(s) for n_clusters=4" in m]
    assert len(_degenerate_messages(record)) == 1
