"""Each worker's share of the cores, its allocator and the tasks' placement during a fit."""

import ctypes
import os
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("dask", reason="needs the optional extra: pip install '.[distributed]'")
distributed = pytest.importorskip(
    "distributed", reason="needs the optional extra: pip install '.[distributed]'")

import dask.array as da  # noqa: E402
from joblib import cpu_count  # noqa: E402

from kssc import distributed as kd  # noqa: E402
from kssc.datasets import make_union_of_subspaces  # noqa: E402
from kssc.distributed import _coefficients, _worker_tuning  # noqa: E402
from kssc.distributed import _neighbors as kd_neighbors  # noqa: E402
from kssc.distributed._blocks import placements  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        yield client


def _cores_variable():
    return os.environ.get(_worker_tuning.CORES_VARIABLE)


def _heap_mappings_for_one_mebibyte():
    """How many new mmapped chunks a 1 MiB array takes (glibc's mallinfo2)."""
    class Mallinfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
            "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Mallinfo2
    before = libc.mallinfo2().hblks
    buffer = np.ones(2**20 // 8)
    return int(libc.mallinfo2().hblks - before + 0 * buffer[0])


def test_each_worker_process_gets_its_hosts_cores_over_its_task_threads(client):
    cores = client.run(cpu_count)
    before = client.run(_cores_variable)
    with _worker_tuning.tuned_workers(client) as shares:
        # Two one-thread workers on one host: half the host's cores each (at least one).
        assert shares == {address: max(1, n // 2) for address, n in cores.items()}
        assert client.run(_cores_variable) == {a: str(s) for a, s in shares.items()}
        # A task sees the share as joblib's core count, which sizes the kernels' threads.
        seen = client.gather([client.submit(cpu_count, pure=False, workers=[a])
                              for a in shares])
        assert seen == list(shares.values())
    assert client.run(_cores_variable) == before


def test_workers_in_one_process_are_tuned_once():
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=False,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        with _worker_tuning.tuned_workers(client) as shares:
            assert len(shares) == 1
            assert list(shares.values()) == [max(1, cpu_count() // 4)]
        assert _cores_variable() is None


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="glibc >= 2.33 only")
def test_a_fit_keeps_mebibyte_buffers_on_the_heap_and_restores_dasks_allocator(client):
    # dask's nanny sets MALLOC_TRIM_THRESHOLD_, which pins glibc's mmap threshold at 128 KiB:
    # every 1 MiB buffer is a fresh mapping (its pages faulted in at each use).
    assert client.run(lambda: "MALLOC_TRIM_THRESHOLD_" in os.environ) == dict.fromkeys(
        client.nthreads(), True)
    assert set(client.run(_heap_mappings_for_one_mebibyte).values()) == {1}
    with _worker_tuning.tuned_workers(client):
        assert set(client.run(_heap_mappings_for_one_mebibyte).values()) == {0}
    assert set(client.run(_heap_mappings_for_one_mebibyte).values()) == {1}


def test_placements_go_round_the_worker_threads():
    fake = SimpleNamespace(nthreads=lambda: {"tcp://b": 1, "tcp://a": 2})
    assert [p["workers"] for p in placements(fake, 4)] == [
        ["tcp://a"], ["tcp://a"], ["tcp://b"], ["tcp://a"]]
    assert all(p["allow_other_workers"] for p in placements(fake, 4))


@pytest.mark.parametrize(("share", "tasks"), [
    (0.0, ("join_partition", "solve_block")),  # split by list
    (None, ("Replica", "replica_join", "solve_block"))])  # replicated (the data fit)
def test_each_partitions_joins_and_each_blocks_solve_run_on_its_home_worker(client, monkeypatch,
                                                                            share, tasks):
    from dask.utils import key_split

    if share is not None:
        monkeypatch.setattr(kd_neighbors, "_REPLICA_SHARE", share)
    X, _ = make_union_of_subspaces(2000, ambient_dim=12, n_subspaces=3, subspace_dims=[2, 3, 3],
                                   noise=0.01, random_state=0)
    with distributed.get_task_stream(client) as stream:
        kd.fit(da.from_array(X, chunks=(500, -1)), 3, n_neighbors=8,
               neighbor_algorithm="approximate", random_state=0, client=client)
    workers = sorted(client.nthreads())
    ran = {}
    for task in stream.data:
        ran.setdefault(key_split(task["key"]), []).append(task["worker"])
    # Two partitions (one per worker thread), or one replica per worker, and four blocks,
    # each on its worker in turn: both workers join and solve, each the same number of tasks.
    for prefix in tasks:
        assert sorted(set(ran[prefix])) == workers, prefix
        assert ran[prefix].count(workers[0]) == ran[prefix].count(workers[1]), prefix
    assert ("join_partition" in ran) == (share == 0.0)
    if share is None:
        assert len(ran["Replica"]) == 2  # built once on each worker, not fetched from one


def test_a_blocks_problem_holds_its_rows_then_the_neighbours_it_asked_for():
    rng = np.random.default_rng(0)
    U = rng.standard_normal((50, 4))
    bounds = np.array([0, 20, 35, 50])
    start, stop = 20, 35
    indices = rng.integers(0, 50, size=(stop - start, 6))
    wanted = _coefficients._request(indices, bounds, slice(start, stop))
    # Ascending, distinct, from their owner only, never the block's own rows.
    for (a, b), ids in zip(zip(bounds[:-1], bounds[1:], strict=True), wanted, strict=True):
        assert np.all(np.diff(ids) > 0) and np.all((ids >= a) & (ids < b))
        assert not np.any((ids >= start) & (ids < stop))
    asked = np.concatenate(wanted)
    expected = np.setdiff1d(indices, np.arange(start, stop))
    np.testing.assert_array_equal(asked, expected)
    gathered = [(ids, U[ids]) for ids in wanted if ids.size]
    rows, local = _coefficients.local_problem(U[start:stop], slice(start, stop), indices,
                                                *gathered)
    np.testing.assert_array_equal(rows[:stop - start], U[start:stop])
    np.testing.assert_array_equal(rows[local], U[indices])


def test_blocks_are_grouped_per_thread_only_when_no_problem_grows():
    # 4 blocks of 250 rows, k = 20: every block's problem may hold all 1,000 rows already.
    bounds = np.array([0, 250, 500, 750, 1000])
    groups = _coefficients.coefficient_groups(bounds, 20, 2)
    assert [g.tolist() for g in groups] == [[0, 1], [2, 3]]
    # k = 2: a block's problem holds at most 750 rows, a pair's all 1,000: not grouped.
    groups = _coefficients.coefficient_groups(bounds, 2, 2)
    assert [g.tolist() for g in groups] == [[0], [1], [2], [3]]
    assert len(_coefficients.coefficient_groups(bounds, 20, 8)) == 4


def test_a_groups_points_are_coded_in_their_lists_order_to_the_same_codes(monkeypatch):
    # The own lists of the group's two blocks give the coding order (as KSSC codes the
    # IVF's lists); the codes are those of the points coded as they come.
    X, _ = make_union_of_subspaces(120, ambient_dim=8, n_subspaces=2, subspace_dims=[3],
                                   noise=0.01, random_state=0)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    indices = np.argsort(-np.abs(U @ U.T), axis=1)[:, 1:7]
    lists = [np.arange(70) % 3, np.arange(50) % 4]
    options = {"lam": 0.1, "solver": "relaxed", "positive": True, "lam_mode": "absolute",
               "l1_ratio": 1.0, "tol": 1e-8, "max_iter": 500}
    orders, code = [], _coefficients.kssc_coefficients

    def recorded(*args, order=None, **kwargs):
        orders.append(order)
        return code(*args, order=order, **kwargs)

    monkeypatch.setattr(_coefficients, "kssc_coefficients", recorded)
    as_they_come = _coefficients.solve_block((U, indices), options)
    in_lists = _coefficients.solve_block((U, indices), options, None, *lists)
    assert orders[0] is None
    np.testing.assert_array_equal(orders[1], np.argsort(np.concatenate(lists), kind="stable"))
    for got, expected in zip(in_lists, as_they_come, strict=True):
        np.testing.assert_array_equal(got, expected)
