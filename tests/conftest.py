"""Fixtures shared by the test folders (tests/<package>/ mirror the packages; plain helpers
that tests import are in tests/support.py)."""

import pytest

from support import real_data


@pytest.fixture(scope="module")
def tir_dir():
    """The real data folder, holding every file of TIR (else skip, naming a missing file)."""
    return real_data("tir")


@pytest.fixture(scope="module")
def hopkins_dir():
    """The real data folder, holding every file of Hopkins 155 (else skip, naming one)."""
    return real_data("hopkins155")


@pytest.fixture(scope="module")
def yaleb_dir():
    """The real data folder, holding every file of Extended Yale B (else skip, naming one)."""
    return real_data("yaleb")
