import warnings

import numpy as np
import pytest

from kssc import IVF, KSSC, NeighborRecallWarning
from kssc.datasets import make_union_of_subspaces
from kssc.neighbors import _ann as ann
from kssc.neighbors import _centroids, _ivf_join, nearest_neighbors
from kssc.neighbors._ann import approximate_search, neighbor_recall
from kssc.utils._validation import normalize_rows


def _clustered(n=3000, dim=32, n_subspaces=6, sub_dim=4, seed=0):
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(n_subspaces):
        basis = np.linalg.qr(rng.standard_normal((dim, sub_dim)))[0]
        blocks.append(rng.standard_normal((n // n_subspaces, sub_dim)) @ basis.T)
    X = np.vstack(blocks)
    X += 0.01 * rng.standard_normal(X.shape)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _recall(found, exact):
    return np.mean([np.intersect1d(f, e).size / e.size for f, e in zip(found, exact, strict=True)])


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine"])
def test_recall_against_exact_search(metric):
    X = _clustered()
    k = 10
    indices, sims = approximate_search(X, k, metric, random_state=0)[:2]
    exact, _ = nearest_neighbors(X, k, metric=metric, algorithm="exact")
    sample = np.random.default_rng(1).choice(len(X), 500, replace=False)
    assert indices.shape == sims.shape == (len(X), k) and indices.dtype == np.int64
    assert _recall(indices[sample], exact[sample]) >= 0.9
    assert not (indices == np.arange(len(X))[:, None]).any()
    assert (np.diff(sims, axis=1) <= 1e-12).all()
    expected = np.einsum("id,ikd->ik", X, X[indices])
    np.testing.assert_allclose(sims, np.abs(expected) if metric == "abs_cosine" else expected,
                               atol=1e-10)


def test_abs_cosine_finds_antipodal_points():
    X = _clustered(n=1200, seed=2)
    X[600:] = -X[:600]
    indices, sims = approximate_search(X, 5, "abs_cosine", random_state=0)[:2]
    assert (indices[:600, 0] == np.arange(600, 1200)).mean() >= 0.99
    np.testing.assert_allclose(sims[:, 0], 1.0, atol=1e-12)
    signed, _ = approximate_search(X, 5, "euclidean", random_state=0)[:2]
    assert not (signed[:600] == np.arange(600, 1200)[:, None]).any()


def test_duplicates_never_return_self():
    X = _clustered(n=1002, seed=3)
    X[:400] = X[0]  # 400 copies of one point: more than k + 1 of them tie
    for metric in ("euclidean", "abs_cosine"):
        indices, _ = approximate_search(X, 8, metric, random_state=0)[:2]
        assert not (indices == np.arange(len(X))[:, None]).any()
        assert all(np.unique(row).size == 8 for row in indices)


def test_deterministic_given_random_state():
    X = _clustered(n=2000, seed=4)
    first = approximate_search(X, 10, "euclidean", random_state=7)[:2]
    second = approximate_search(X, 10, "euclidean", random_state=7)[:2]
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_tiny_data_falls_back_to_exact_rows():
    X = _clustered(n=60, dim=8, n_subspaces=2, sub_dim=3, seed=5)
    indices, sims = approximate_search(X, 59, "euclidean", random_state=0)[:2]
    for i in range(60):
        assert sorted(indices[i]) == [j for j in range(60) if j != i]


def test_the_self_join_needs_no_faiss(monkeypatch):
    # The IVF self-join trains its lists and searches with numpy GEMMs and the compiled
    # top-k only: the approximate search runs where faiss is not installed.
    import builtins

    real_import = builtins.__import__

    def no_faiss(name, *args, **kwargs):
        if name == "faiss":
            raise ImportError("No module named 'faiss'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_faiss)
    X = _clustered(n=600)
    indices, _, info = approximate_search(X, 5, random_state=0)
    assert indices.shape == (600, 5) and info["algorithm"] in ("ivf", "exact")


def _high_dimensional(n=4000, seed=0):
    # Two 25-dimensional subspaces of R^30: inverted lists hardly separate neighbours.
    X, _ = make_union_of_subspaces(n, ambient_dim=30, n_subspaces=2, subspace_dims=[25],
                                   noise=0.01, random_state=seed)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _exact_similarities(X, k):
    S = X @ X.T
    np.fill_diagonal(S, -np.inf)
    return -np.sort(-S, axis=1)[:, :k]


def test_recall_counts_found_neighbours_as_similar_as_the_exact_kth():
    # Row 0 finds 2 of 3 (0.5 < 0.7); row 1 finds other points tied with its exact ones.
    found = np.array([[0.9, 0.8, 0.5], [1.0, 1.0, 1.0]])
    exact = np.array([[0.9, 0.8, 0.7], [1.0, 1.0, 1.0]])
    assert neighbor_recall(found, exact) == pytest.approx(5 / 6)
    assert neighbor_recall(exact, exact) == 1.0


def test_low_recall_warns_and_the_sampled_recall_is_the_true_one():
    X = _high_dimensional()
    k = 10
    with pytest.warns(NeighborRecallWarning, match=r"nprobe=1\).*below min_recall=0.9"):
        _, sims, info = approximate_search(X, k, index=IVF(nprobe=1), random_state=0)
    true_recall = neighbor_recall(sims, _exact_similarities(X, k))
    assert info["nprobe"] == 1 and info["recall_sample"] == 1000
    assert info["recall"] < 0.9
    assert abs(info["recall"] - true_recall) < 0.03


def test_adapted_nprobe_reaches_the_target_recall_without_warning(monkeypatch):
    monkeypatch.setattr(ann, "_EXACT_FROM_SHARE", 1.0)  # never switch to the exact search
    X = _high_dimensional()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NeighborRecallWarning)
        _, sims, info = approximate_search(X, 10, random_state=0)
    assert info["algorithm"] == "ivf" and info["recall"] >= 0.99 and info["nprobe"] > 16
    assert neighbor_recall(sims, _exact_similarities(X, 10)) >= 0.98


def test_an_adapted_nprobe_scanning_many_lists_switches_to_the_exact_search():
    X = _high_dimensional()
    indices, sims, info = approximate_search(X, 10, random_state=0)
    assert info["algorithm"] == "exact" and info["recall"] == 1.0
    np.testing.assert_array_equal(indices, nearest_neighbors(X, 10, normalize=False)[0])


@pytest.mark.filterwarnings("ignore::kssc.DegenerateFitWarning")
def test_kssc_reports_the_recall_and_warns_through_its_ivf():
    X = _high_dimensional(n=2000)
    with pytest.warns(NeighborRecallWarning):
        model = KSSC(2, neighbor_algorithm=IVF(nprobe=1, recall_sample=300),
                     random_state=0).fit(X)
    assert model.neighbor_recall_ < 0.9
    assert model.neighbor_search_["algorithm"] == "ivf"
    assert model.neighbor_search_["nprobe"] == 1
    assert KSSC(2, neighbor_algorithm="exact").fit(X[:300]).neighbor_recall_ == 1.0
    unmeasured = KSSC(2, neighbor_algorithm=IVF(recall_sample=0), random_state=0).fit(X)
    assert np.isnan(unmeasured.neighbor_recall_)


@pytest.mark.parametrize("settings, message", [
    ({"nlist": 0}, "IVF nlist must be an integer >= 1 or None; got 0"),
    ({"nprobe": 2.5}, "IVF nprobe must be an integer >= 1 or None; got 2.5"),
    ({"target_recall": 0}, r"IVF target_recall must be in \(0, 1\]"),
    ({"min_recall": 1.5}, r"IVF min_recall must be in \[0, 1\]"),
    ({"recall_sample": -1}, "IVF recall_sample must be an integer >= 0"),
])
def test_bad_ivf_settings_raise_clear_errors(settings, message):
    X = _clustered(n=300)
    with pytest.raises(ValueError, match=message):
        nearest_neighbors(X, 5, algorithm=IVF(**settings))
    with pytest.raises(ValueError, match=message):
        KSSC(2, n_neighbors=5, neighbor_algorithm=IVF(**settings)).fit(X)


def test_l2_has_no_approximate_search():
    X = _clustered(n=300)
    with pytest.raises(ValueError, match="metric='l2' has an exact search only"):
        nearest_neighbors(X, 5, metric="l2", algorithm="approximate")
    with pytest.raises(ValueError, match="metric='l2' has an exact search only"):
        KSSC(2, n_neighbors=5, metric="l2", neighbor_algorithm=IVF()).fit(X)


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine"])
def test_self_join_keeps_the_exact_best_among_the_probed_lists(metric):
    # Every row's k found are the k most similar other points among the points of its
    # n_probe lists (brute force over the same candidates), also with duplicates.

    X = _clustered(n=900, seed=6).astype(np.float32)
    X[100:110] = X[0]
    rng = np.random.RandomState(0)
    centroids = _centroids.spherical_kmeans(X, 12, metric, 5, rng)
    probes = _centroids.nearest_lists(X, centroids, metric, 3)
    index = _ivf_join.InvertedLists(probes[:, 0], 12)
    found = _ivf_join.join(X, index, np.arange(900), probes, 7, metric)
    S = X.astype(float) @ X.T.astype(float)
    if metric == "abs_cosine":
        S = np.abs(S)
    lists = probes[:, 0]
    for i in range(900):
        allowed = np.flatnonzero(np.isin(lists, probes[i]) & (np.arange(900) != i))
        best = np.sort(S[i, allowed])[::-1][:7]
        np.testing.assert_allclose(np.sort(S[i, found[i]])[::-1], best, atol=1e-5)
        assert i not in found[i] and np.unique(found[i]).size == 7


def test_self_join_gives_the_same_neighbours_whatever_its_row_chunks(monkeypatch):
    # The join's rows are processed in chunks of bounded (row, list) pairs: a row's lists are
    # visited in the same order whatever the chunks, so tiny chunks give the same result.

    X = _clustered(n=900, seed=7).astype(np.float32)
    rng = np.random.RandomState(0)
    centroids = _centroids.spherical_kmeans(X, 12, "euclidean", 5, rng)
    probes = _centroids.nearest_lists(X, centroids, "euclidean", 4)
    index = _ivf_join.InvertedLists(probes[:, 0], 12)
    whole = _ivf_join.join(X, index, np.arange(900), probes, 7, "euclidean")
    monkeypatch.setattr(_ivf_join, "_JOIN_SLOT_BYTES", 16 * 3 * 50)  # 50 rows per chunk
    calls = []
    chunked = _ivf_join.join(X, index, np.arange(900), probes, 7, "euclidean",
                             progress=lambda done, total: calls.append((done, total)))
    np.testing.assert_array_equal(np.sort(whole, axis=1), np.sort(chunked, axis=1))
    assert calls[-1][0] == calls[-1][1] and calls[-1][1] > 2 * 12 * 2


def _held(sample_lists, neighbour_lists):
    """The share of the neighbours whose list is among their point's probed lists (sets)."""
    return np.mean([np.isin(mine, list(probed)).mean()
                    for probed, mine in zip(sample_lists, neighbour_lists, strict=True)])


def test_adapted_nprobe_is_the_smallest_holding_the_target_share():
    # Two sampled points of 160 lists (at most 20 probed: 1/8 of them), k = 4, their 20 most
    # similar lists ranked: point 0's neighbours lie in its lists of rank 0, 0, 8 and 11,
    # point 1's in 0, 1, 9 and one beyond 20. Held at nprobe p: (ranks below p) / 8.
    ranked = np.array([np.arange(20), np.arange(3, 23)])
    neighbours = np.array([[0, 0, 8, 11], [3, 4, 12, 100]])
    assert ann.most_adapted(IVF(), 160) == 20 and ann.most_adapted(IVF(), 16) == 8
    for target, expected in [(0.3, 8), (0.5, 8), (0.6, 9), (0.7, 10), (0.8, 12), (0.9, None)]:
        assert ann.adapted_nprobe(ranked, neighbours, IVF(target_recall=target), 160) \
            == expected
    # 16 lists allow only the first nprobe, 8 (4 / 8 held); 8 lists are all probed.
    assert ann.adapted_nprobe(ranked[:, :8], neighbours, IVF(target_recall=0.6), 16) is None
    assert ann.adapted_nprobe(ranked[:, :8] % 8, neighbours % 8, IVF(), 8) == 8
    assert ann.adapted_nprobe(ranked, neighbours, IVF(nprobe=5), 160) == 5


@pytest.mark.parametrize("target", [0.9, 0.97, 0.99])
def test_the_adapted_search_equals_the_fixed_one_at_its_nprobe(target):
    # The adapted nprobe is the smallest from 8 whose probed lists hold the target share of
    # the sampled points' exact neighbours (checked here by sets, on the search's own lists
    # and sample), and the search is the one fixed at that nprobe.
    X, _ = make_union_of_subspaces(20000, ambient_dim=32, n_subspaces=5,
                                   subspace_dims=[6, 8, 10], noise=0.01, random_state=0)
    P = normalize_rows(X)[0]
    indices, sims, info = approximate_search(P, 10, index=IVF(target_recall=target),
                                             random_state=0)
    assert info["algorithm"] == "ivf" and info["recall"] >= target
    rng = np.random.RandomState(0)
    P32 = P.astype(np.float32)
    centroids = ann._train(P32, info["nlist"], "euclidean", rng)
    sample = np.sort(rng.choice(len(P), 1000, replace=False))
    own = _centroids.nearest_lists(P32, centroids, "euclidean", 1)[:, 0]
    exact_ids = ann.exact_search(P32, 10, "euclidean", rows=sample)[0]
    held = {p: _held(_centroids.nearest_lists(P32[sample], centroids, "euclidean", p),
                     own[exact_ids]) for p in (info["nprobe"] - 1, info["nprobe"])}
    assert held[info["nprobe"]] >= target
    assert info["nprobe"] == 8 or held[info["nprobe"] - 1] < target
    fixed = approximate_search(P, 10, index=IVF(nprobe=info["nprobe"]), random_state=0)
    np.testing.assert_array_equal(indices, fixed[0])
    np.testing.assert_array_equal(sims, fixed[1])


def test_kssc_codes_in_the_ivf_lists_order_and_reports_no_order(monkeypatch):
    import kssc.estimator

    seen = []
    original = kssc.estimator.kssc_coefficients

    def spy(*args, order=None, **kwargs):
        seen.append(order)
        return original(*args, order=order, **kwargs)

    monkeypatch.setattr(kssc.estimator, "kssc_coefficients", spy)
    X, _ = make_union_of_subspaces(1200, ambient_dim=20, n_subspaces=3, subspace_dims=[4],
                                   noise=0.01, random_state=0)
    model = KSSC(3, neighbor_algorithm=IVF(nlist=20, recall_sample=100), random_state=0).fit(X)
    assert "order" not in model.neighbor_search_
    assert np.array_equal(np.sort(seen[0]), np.arange(1200))
    assert not np.array_equal(seen[0], np.arange(1200))
    exact = KSSC(3, neighbor_algorithm="exact", random_state=0).fit(X)
    assert seen[1] is None
    assert exact.neighbor_search_["algorithm"] == "exact"


def test_list_shares_follow_group_sizes_by_largest_remainders():
    # Hand-computed: 4 lists over groups of 5, 3 and 2 rows are shares 2, 1.2 and 0.8:
    # floors 2, 1, 0 and the one left to the largest remainder (0.8); a group never gets
    # more lists than rows (shares 0.5 and 4.5 of 5 lists: the tie goes to the first).
    np.testing.assert_array_equal(_centroids._shares(np.array([5, 3, 2]), 4), [2, 1, 1])
    np.testing.assert_array_equal(_centroids._shares(np.array([1, 9]), 5), [1, 4])
    np.testing.assert_array_equal(_centroids._shares(np.array([1, 9]), 20), [1, 9])


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine"])
def test_two_level_centroids_are_unit_lists_the_join_reaches_its_recall_with(monkeypatch,
                                                                             metric):
    # Two-level training from 16 lists on (the default switches at 1,024): 4 coarse groups,
    # each split into its share; the self-join on those lists reaches its target recall,
    # deterministically given the seed.
    monkeypatch.setattr(_centroids, "_TWO_LEVEL_FROM", 16)
    X, _ = make_union_of_subspaces(6000, ambient_dim=20, n_subspaces=4, subspace_dims=[4],
                                   noise=0.01, random_state=3)
    P32 = normalize_rows(X)[0].astype(np.float32)
    centroids = _centroids.fit_centroids(P32, 16, metric, 5, np.random.RandomState(0))
    assert centroids.shape == (16, 20) and centroids.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(centroids, axis=1), 1, rtol=1e-5)
    first = approximate_search(P32, 8, metric, IVF(nlist=64), random_state=0)
    again = approximate_search(P32, 8, metric, IVF(nlist=64), random_state=0)
    assert first[2]["algorithm"] == "ivf" and first[2]["nlist"] == 64
    assert first[2]["recall"] >= 0.99
    np.testing.assert_array_equal(first[0], again[0])
