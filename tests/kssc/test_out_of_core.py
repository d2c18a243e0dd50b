"""KSSC.fit on a memory-mapped .npy: the labels of the array in memory, no float64 copy."""

import tracemalloc

import numpy as np
import pytest

from kssc import KSSC, clustering_error
from kssc.datasets import make_union_of_subspaces


def _data(n, dim, noise=0.01, seed=0):
    X, y = make_union_of_subspaces(n, ambient_dim=dim, n_subspaces=3, subspace_dims=[4],
                                   noise=noise, random_state=seed)
    return X.astype(np.float32), y


def test_memory_mapped_float32_gives_the_labels_of_the_array_in_memory(tmp_path):
    X, y = _data(600, 20)
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    model = KSSC(3, n_neighbors=10, random_state=0)
    labels = model.fit(mapped).labels_
    np.testing.assert_array_equal(labels, KSSC(3, n_neighbors=10, random_state=0).fit(X).labels_)
    assert clustering_error(y, labels) == 0.0
    # The float32 path agrees with float64 data.
    float64 = KSSC(3, n_neighbors=10, random_state=0).fit(X.astype(float)).labels_
    assert clustering_error(float64, labels) == 0.0
    assert not mapped.flags.writeable  # read only: the fit never writes into the file


@pytest.mark.filterwarnings("ignore::kssc.DegenerateFitWarning")
@pytest.mark.slow  # about 10 s idle, 40 s on a loaded machine
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fit_on_a_memory_map_allocates_less_than_a_float64_copy(tmp_path):
    # 1,000 points in 8,000 dimensions: 32 MB as float32, 64 MB as float64. The fit keeps
    # one float32 copy of the unit rows and bounded chunks.
    X, _ = _data(1000, 8000, noise=0.001)
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    tracemalloc.start()  # numpy's allocations from here on (the memory map is not one)
    try:
        KSSC(3, n_neighbors=10, chunk_size=10, max_iter=20, random_state=0).fit(mapped)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    float64_copy = X.size * 8
    # Measured: 40 MiB for the 61 MiB float64 copy (before: a float64 copy and float64 unit
    # rows, 122 MiB at least); 53-57 MiB since the mixed-units check (kssc.utils._suitability)
    # runs its column statistics (12 MiB) while the unit rows are held. A float64 copy of X
    # alone would reach the bound.
    assert peak < float64_copy, f"peak {peak / 2**20:.0f} MiB"
