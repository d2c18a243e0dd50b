"""What several test modules share: the repository's folders (defined in
`experiments/_checkout.py`), a hash, and the rule for tests that need real data files (skip
when absent; fail instead when $KSSC_DATA_DIR is set)."""

import hashlib
import os

import pytest

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
