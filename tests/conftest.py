"""Fixtures shared by the test folders (tests/<package>/ mirror the packages): test modules
take what they share from here, never from each other."""

import os

import numpy as np
import pytest
import scipy.sparse as sp

from kssc.datasets import get_data_dir
from kssc.datasets._paths import missing_files


def _real_data(name, relpaths=None):
    """The data folder, if it holds `relpaths` (default: every file) of data set `name`.

    Otherwise the test is skipped with the first missing file named, or fails when
    $KSSC_DATA_DIR is set (CI points it at a complete copy, so absence there is an error).
    """
    missing = missing_files(name, relpaths)
    if missing:
        path = get_data_dir() / name / missing[0]
        message = (f"{path} is missing ({len(missing)} file(s) of {name} absent): "
                   "run `make data` or set KSSC_DATA_DIR")
        if os.environ.get("KSSC_DATA_DIR"):
            pytest.fail(message)
        pytest.skip(message)
    return get_data_dir()


def _block_graph(n_blocks, size, seed=0, per_row=3):
    """n_blocks dense-ish random blocks of `size` points and a few edges between blocks."""
    rng = np.random.default_rng(seed)
    n = n_blocks * size
    base = np.repeat(np.arange(n_blocks) * size, per_row * size)
    rows = rng.integers(0, size, per_row * n) + base
    cols = rng.integers(0, size, per_row * n) + base
    noise = rng.integers(0, n, (2, n // 10))
    rows, cols = np.concatenate([rows, noise[0]]), np.concatenate([cols, noise[1]])
    W = sp.csr_matrix((rng.uniform(0.1, 1.0, rows.size), (rows, cols)), shape=(n, n))
    W = W + W.T
    W.setdiag(0)
    W.eliminate_zeros()
    return W, np.repeat(np.arange(n_blocks), size)


@pytest.fixture(scope="session")
def real_data():
    """`real_data(name, relpaths=None)`: the data folder holding those files of data set
    `name`, else the test is skipped (or fails when $KSSC_DATA_DIR is set)."""
    return _real_data


@pytest.fixture(scope="session")
def block_graph():
    """`block_graph(n_blocks, size, seed=0, per_row=3)`: a graph of random blocks and its
    block labels."""
    return _block_graph


@pytest.fixture(scope="module")
def tir_dir():
    """The real data folder, holding every file of TIR (else skip, naming a missing file)."""
    return _real_data("tir")


@pytest.fixture(scope="module")
def hopkins_dir():
    """The real data folder, holding every file of Hopkins 155 (else skip, naming one)."""
    return _real_data("hopkins155")


@pytest.fixture(scope="module")
def yaleb_dir():
    """The real data folder, holding every file of Extended Yale B (else skip, naming one)."""
    return _real_data("yaleb")
