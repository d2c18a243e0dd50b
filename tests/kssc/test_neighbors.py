import tracemalloc

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from kssc import IVF as _IVF
from kssc.neighbors import _exact, nearest_neighbors


def _brute_force(X, k, metric):
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = U @ U.T
    if metric == "abs_cosine":
        S = np.abs(S)
    np.fill_diagonal(S, -np.inf)
    return -np.sort(-S, axis=1)[:, :k]


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine"])
@pytest.mark.parametrize("block_size", [None, 37])
def test_exact_search_matches_brute_force(metric, block_size):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((700, 12))
    indices, sims = nearest_neighbors(X, 9, metric=metric, block_size=block_size)
    assert indices.shape == sims.shape == (700, 9)
    np.testing.assert_allclose(sims, _brute_force(X, 9, metric), atol=1e-6)
    assert not (indices == np.arange(700)[:, None]).any()
    assert (np.diff(sims, axis=1) <= 1e-12).all()


def test_duplicates_are_neighbours_but_never_self():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 5))
    X[10] = X[20]
    X[30] = -X[40]
    indices, sims = nearest_neighbors(X, 3)
    assert indices[10, 0] == 20 and indices[20, 0] == 10
    assert not (indices == np.arange(50)[:, None]).any()
    abs_indices, _ = nearest_neighbors(X, 3, metric="abs_cosine")
    assert abs_indices[30, 0] == 40 and abs_indices[40, 0] == 30


def test_k_equal_n_minus_one_returns_every_other_point():
    X = np.random.default_rng(2).standard_normal((6, 3))
    indices, _ = nearest_neighbors(X, 5)
    for i in range(6):
        assert sorted(indices[i]) == [j for j in range(6) if j != i]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_neighbors": 10}, "n_neighbors=10 must be < n_samples=10"),
        ({"n_neighbors": 0}, "n_neighbors == 0, must be >= 1"),
        ({"n_neighbors": 3, "metric": "manhattan"}, "metric must be one of"),
        ({"n_neighbors": 3, "algorithm": "magic"}, "algorithm must be"),
    ],
)
def test_bad_arguments(kwargs, message):
    X = np.random.default_rng(3).standard_normal((10, 4))
    with pytest.raises(ValueError, match=message):
        nearest_neighbors(X, **kwargs)


def test_non_finite_input_named():
    X = np.ones((5, 3))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinity in 1 row\(s\), first at row\(s\) \[2\]"):
        nearest_neighbors(X, 2)


def test_exact_search_memory_does_not_grow_with_n_features_times_k():
    # Issue 13.2: re-scoring the candidates gathered a float64 (n, k, D) array, 2.6 GB here
    # for 0.13 GB of data. tracemalloc sees numpy's allocations.
    X = np.random.default_rng(0).standard_normal((800, 20_000))
    tracemalloc.start()
    try:
        indices, _ = nearest_neighbors(X, 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * X.nbytes, \
        f"peak {peak / 2**20:.0f} MiB for {X.nbytes / 2**20:.0f} MiB of data"
    assert indices.shape == (800, 20)


@pytest.mark.parametrize("budget", [1, 3 * 5_000 * 8, 10**9])
def test_chunked_rescoring_matches_scikit_learn(monkeypatch, budget):
    # Whatever the gathering budget (one vector, part of a row's neighbours, everything at
    # once), the neighbours and their order are scikit-learn's brute-force ones.
    monkeypatch.setattr(_exact, "_RESCORE_BYTES", budget)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 5_000))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    indices, sims = nearest_neighbors(X, 7)
    reference = NearestNeighbors(n_neighbors=8, algorithm="brute").fit(X).kneighbors(X)[1][:, 1:]
    np.testing.assert_array_equal(indices, reference)
    np.testing.assert_allclose(sims, np.einsum("ij,ikj->ik", X, X[indices]), rtol=1e-12)


def test_british_spelling_is_a_deprecated_alias():
    # Public names are spelt as scikit-learn's; the old name works for one release.
    import kssc

    X = np.random.default_rng(3).standard_normal((30, 4))
    with pytest.warns(FutureWarning, match="nearest_neighbors"):
        old = kssc.nearest_neighbours(X, 3, metric="abs_cosine")
    new = kssc.nearest_neighbors(X, 3, metric="abs_cosine")
    np.testing.assert_array_equal(old[0], new[0])
    np.testing.assert_array_equal(old[1], new[1])
    assert "nearest_neighbors" in kssc.__all__ and "nearest_neighbours" not in kssc.__all__


@pytest.mark.parametrize("metric", ["euclidean", "abs_cosine", "l2"])
@pytest.mark.parametrize("block_size", [None, 1, 37, 200])
def test_symmetric_blocks_give_the_row_by_row_neighbours(metric, block_size):
    # The all-rows search computes each block pair of X X^T once and selects by rows and by
    # columns; the search of given rows runs row blocks against all. With exact duplicates
    # (ties), the float32 products of the two block layouts may round a tie either way (the
    # BLAS kernel depends on the block's shape), so a tie at the k-th place may keep either
    # twin: the similarities agree entry for entry, the indices wherever there is no tie.
    rng = np.random.default_rng(4)
    X = rng.standard_normal((301, 9))
    X[150:170] = X[:20]
    if metric != "l2":
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    whole = _exact.exact_search(X, 8, metric, block_size=block_size)
    by_rows = _exact.exact_search(X, 8, metric, rows=np.arange(301))
    np.testing.assert_allclose(whole[1], by_rows[1], rtol=0, atol=1e-12)
    differ = whole[0] != by_rows[0]
    twins = np.abs(whole[0] - by_rows[0]) == 150  # X[150:170] = X[:20]
    assert (twins[differ]).all() and (np.minimum(whole[0], by_rows[0])[differ] < 20).all()
    assert differ.sum() <= 20
    assert not (whole[0] == np.arange(301)[:, None]).any()
    if metric != "abs_cosine":
        distances = NearestNeighbors(n_neighbors=9, algorithm="brute").fit(X).kneighbors(X)[0]
        found = np.linalg.norm(X[whole[0]] - X[:, None], axis=2)
        # scikit-learn's brute distances come from |x|^2 + |y|^2 - 2 x.y: near zero (the
        # duplicates) their error is about sqrt(eps) |x|, so the tolerance is 1e-7, not 1e-9.
        np.testing.assert_allclose(found, distances[:, 1:], atol=1e-7)


def _no_search(*args, **kwargs):
    raise AssertionError("the search started although the memory check should have stopped it")


@pytest.mark.parametrize("algorithm", ["exact", "approximate"])
def test_memory_check_raises_before_any_work(monkeypatch, algorithm):
    # With a small available-memory figure the search stops first, with what it needs,
    # what is available and what to change; neither search kernel is entered.
    import kssc.neighbors._memory
    from kssc import KSSC
    from kssc.neighbors import _search as neighbours
    from kssc.neighbors._memory import NeighborMemoryError

    monkeypatch.setattr(kssc.neighbors._memory, "available_memory", lambda: 2**20)
    monkeypatch.setattr(neighbours, "exact_search", _no_search)
    monkeypatch.setattr(neighbours, "approximate_search", _no_search)
    X = np.random.default_rng(0).standard_normal((500, 8))
    with pytest.raises(NeighborMemoryError, match=r"needs about .* GiB of memory and 0.00 GiB "
                       r"is available: pass float32 data .*lower n_neighbors"):
        nearest_neighbors(X, 5, algorithm=algorithm)
    # The fit checks its whole estimate first, before its first copy.
    with pytest.raises(MemoryError, match="not enough memory: KSSC.fit of 500 x 8"):
        KSSC(2, n_neighbors=5, neighbor_algorithm=algorithm).fit(X)


def test_memory_check_passes_with_enough_memory(monkeypatch):
    import kssc.neighbors._memory
    from kssc.neighbors._search import check_search_memory

    monkeypatch.setattr(kssc.neighbors._memory, "available_memory", lambda: 2**40)
    check_search_memory((10**6, 64), np.float32, 20, "euclidean", "exact")
    # unknown: no check
    monkeypatch.setattr(kssc.neighbors._memory, "available_memory", lambda: None)
    check_search_memory((10**9, 64), np.float64, 20, "euclidean", "exact")


def test_memory_estimate_grows_with_the_data_it_copies():
    from kssc.neighbors._ann import memory_bytes as approximate_memory
    from kssc.neighbors._exact import memory_bytes as exact_memory

    for estimate in (exact_memory, approximate_memory):
        small, wide = estimate(10**5, 64, 20), estimate(10**5, 6400, 20)
        assert wide - small >= 4 * 10**5 * (6400 - 64)  # the float32 copy of float64 data
        assert estimate(10**5, 6400, 20, dtype=np.float32) < wide - 4 * 10**5 * 6300


def test_verbose_fit_shows_neighbour_search_progress(capsys, monkeypatch):
    import kssc.utils._progress
    from kssc import KSSC

    monkeypatch.setattr(kssc.utils._progress, "tqdm", None)
    X = np.random.default_rng(1).standard_normal((400, 6))
    KSSC(2, n_neighbors=5, neighbor_algorithm="exact", verbose=1, random_state=0).fit(X)
    monkeypatch.setattr(_exact, "_BLOCK_BYTES", 8 * 100**2)  # 100-row blocks: 10 pairs
    KSSC(2, n_neighbors=5, neighbor_algorithm="exact", verbose=1, random_state=0).fit(X)
    lines = capsys.readouterr().err.splitlines()
    assert "[KSSC] neighbours: 1/1 chunks" in lines
    assert "[KSSC] neighbours: 10/10 chunks" in lines
    assert "[KSSC] neighbours: 1/10 chunks" in lines


def test_verbose_approximate_search_reports_its_lists(capsys):
    pytest.importorskip("tqdm")
    from kssc import IVF, KSSC

    X = np.random.default_rng(2).standard_normal((600, 6))
    KSSC(2, n_neighbors=5, neighbor_algorithm=IVF(nlist=6, nprobe=2, recall_sample=50),
         verbose=1, random_state=0).fit(X)
    from kssc.neighbors._exact import _n_workers

    total = 2 * _n_workers(600) * 6  # two passes, each worker thread over the 6 lists
    err = capsys.readouterr().err
    assert "[KSSC] neighbours:" in err and f"{total}/{total}" in err


def test_approximate_buffers_follow_a_byte_budget_for_wide_data(monkeypatch):
    # Issue 29.3: the re-scoring gathered 8,192 rows' k + 1 neighbours whatever D (here it
    # would have been 400 x 6 x 20,000 float64: 384 MB for 32 MB of data). Every buffer of
    # the self-join is sized in bytes, so the peak stays a fraction of the data (here the
    # k-means sample, 80 rows, is the largest part).
    import tracemalloc

    from kssc.neighbors import _centroids, _ivf_join
    from kssc.neighbors._ann import approximate_search

    monkeypatch.setattr(_ivf_join, "_JOIN_BYTES", 2**20)
    monkeypatch.setattr(_centroids, "_KMEANS_BYTES", 2**20)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((400, 20_000)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    tracemalloc.start()
    try:
        indices, _, info = approximate_search(X, 5, index=_IVF(nlist=2, nprobe=1,
                                                              recall_sample=20),
                                              random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info["algorithm"] == "ivf" and indices.shape == (400, 5)
    assert peak < 0.75 * X.nbytes, f"peak {peak / 2**20:.0f} MiB for {X.nbytes / 2**20:.0f} MiB"


def test_memory_estimate_counts_the_lists_every_row_keeps():
    # An adapted nprobe keeps twice the first nprobe's lists per row (int32) from the first
    # assignment (`kept_probes`), a fixed one (or one never adapted: no recall sample) only
    # its own.
    from kssc import IVF
    from kssc.neighbors._ann import kept_probes, memory_bytes

    n = 10**6
    assert kept_probes(IVF(), 2000, 1000) == 16
    assert kept_probes(IVF(nprobe=8), 2000, 1000) == kept_probes(IVF(), 2000, 0) == 8
    assert kept_probes(IVF(), 10, 1000) == 10
    # float32 rows and k = 10: the join is the estimate's largest phase.
    adapted, fixed, unsampled = (memory_bytes(n, 64, 10, ivf, dtype=np.float32)
                                 for ivf in (IVF(), IVF(nprobe=8), IVF(recall_sample=0)))
    assert adapted - fixed == 4 * n * 8
    assert unsampled == fixed
