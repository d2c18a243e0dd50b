"""What several test modules share: the repository's folders (defined in
`experiments/_checkout.py`), a hash, and the rule for tests that need real data files (skip
when absent; fail instead when $KSSC_DATA_DIR is set)."""

import hashlib
import os

import numpy as np
import pytest
import scipy.sparse as sp

from experiments._checkout import CONF_DIR as CONF_DIR
from experiments._checkout import REPO_ROOT as REPO_ROOT
from kssc.datasets import get_data_dir
from kssc.datasets._paths import missing_files


def sha256(data):
    """The hex SHA-256 of `data` (bytes)."""
    return hashlib.sha256(data).hexdigest()


def real_data(name, relpaths=None):
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


def block_graph(n_blocks, size, seed=0, per_row=3):
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
