"""KSSC on a real dask.distributed cluster through joblib's dask backend: configuration only."""

import numpy as np
import pytest

pytest.importorskip("dask", reason="needs the optional extra: pip install 'dask[distributed]'")
distributed = pytest.importorskip(
    "distributed", reason="needs the optional extra: pip install 'dask[distributed]'")

import joblib  # noqa: E402

from kssc import KSSC  # noqa: E402


def _union_of_lines_and_planes(seed=0):
    rng = np.random.default_rng(seed)
    blocks, labels = [], []
    for label, dim in enumerate((2, 3, 3)):
        basis = np.linalg.qr(rng.standard_normal((12, dim)))[0]
        blocks.append(rng.standard_normal((120, dim)) @ basis.T)
        labels.append(np.full(120, label))
    X = np.vstack(blocks) + 0.01 * rng.standard_normal((360, 12))
    return X, np.concatenate(labels)


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_dask_backend_gives_the_serial_result(client):
    X, _ = _union_of_lines_and_planes()
    params = {"n_clusters": 3, "n_neighbors": 8, "chunk_size": 40, "random_state": 0}
    serial = KSSC(**params).fit(X)
    with distributed.get_task_stream(client) as stream, joblib.parallel_config(backend="dask"):
        spread = KSSC(n_jobs=-1, **params).fit(X)
    # The 9 coefficient chunks really ran on the cluster's workers.
    assert len({task["worker"] for task in stream.data}) == 2
    np.testing.assert_array_equal(spread.labels_, serial.labels_)
    np.testing.assert_array_equal(spread.neighbors_, serial.neighbors_)
    np.testing.assert_array_equal(spread.n_iter_, serial.n_iter_)
    Z, Z_serial = spread.representation_matrix_, serial.representation_matrix_
    np.testing.assert_array_equal(Z.indptr, Z_serial.indptr)
    np.testing.assert_array_equal(Z.indices, Z_serial.indices)
    np.testing.assert_array_equal(Z.data, Z_serial.data)


def test_trials_run_on_the_cluster(client):
    X, y = _union_of_lines_and_planes(seed=1)

    def trial(seed):
        return KSSC(n_clusters=3, n_neighbors=8, random_state=seed).fit(X).labels_

    with joblib.parallel_config(backend="dask"):
        spread = joblib.Parallel(n_jobs=-1)(joblib.delayed(trial)(seed) for seed in range(3))
    for seed, labels in enumerate(spread):
        np.testing.assert_array_equal(labels, trial(seed))
