"""The data sets' registry: every registered data set (one per checksum list) has one complete
declaration in its loader module, from which fetching, loading and the tests' fixtures derive
everything (docs/developing.md: what a new data set takes)."""

import contextlib
import re
import urllib.parse
from pathlib import Path

import pytest

import kssc.datasets
from kssc.datasets import DATASETS
from kssc.datasets._paths import parse_checksums, read_checksums, read_sizes
from kssc.datasets._registry import (
    CHECKSUM_LISTS,
    LAYOUTS,
    Dataset,
    declarations,
    declaring_module,
    registered_names,
)
from kssc.datasets.fetch import DatasetSpec, download_cap, get_spec

REPO = Path(__file__).resolve().parents[3]
API_PAGE = REPO / "docs" / "api.rst"


def test_the_first_three_keep_their_order():
    """Results recorded `DATASETS` (through the loaders' name check): its value is theirs."""
    assert DATASETS[:3] == ("tir", "hopkins155", "yaleb")
    assert registered_names() == DATASETS


@pytest.mark.parametrize("name", DATASETS)
def test_each_declaration_is_complete(name, request):
    declared = declarations()[name]
    assert isinstance(declared, Dataset) and declared.name == name
    assert declared.title and declared.layout in LAYOUTS
    files = read_checksums(name)
    assert files and (CHECKSUM_LISTS.parent / declared.checksum_list).is_file()
    assert parse_checksums((CHECKSUM_LISTS / f"{name}.sha256").read_text()) == files
    if declared.layout == "file":
        assert len(files) == 1, "a one-file layout serves one file"
    for url in declared.sources:
        assert urllib.parse.urlparse(url).scheme in ("http", "https", "ftp", "file"), url
    assert isinstance(declared.n_bytes, int) and declared.n_bytes > 0
    sizes = read_sizes(name)
    if sizes:  # the recorded per-file sizes (metadata/sizes.csv) agree with the declaration
        assert list(sizes) == list(files) and sum(sizes.values()) == declared.n_bytes
    spec = get_spec(name)
    assert isinstance(spec, DatasetSpec) and spec.sources == declared.sources
    assert download_cap(spec) >= declared.n_bytes
    module = declaring_module(name)
    api = API_PAGE.read_text()
    for loader in declared.loaders:
        assert loader in kssc.datasets.__all__, f"{module}.{loader} is not exported"
        assert callable(getattr(kssc.datasets, loader))
        assert re.search(rf"^\s+{loader}$", api, re.M), f"{loader} is not on {API_PAGE.name}"
    # Its real-data fixture exists (tests/conftest.py derives one per data set); a skip says
    # the fixture exists and the data is absent here.
    with contextlib.suppress(pytest.skip.Exception):
        request.getfixturevalue(f"{name}_dir")


def test_every_declaration_has_a_checksum_list(tmp_path):
    assert set(declarations()) == set(DATASETS)
    for name in ("b", "a", "c"):
        (tmp_path / f"{name}.sha256").write_text(f"{'0' * 64}  x\n" * (2 if name == "c" else 1))
    assert registered_names(tmp_path) == ("a", "b", "c")


def test_a_declaration_is_checked():
    with pytest.raises(ValueError, match="layout"):
        Dataset("x", "X", ("https://x",), "folder", 1, ())
    with pytest.raises(ValueError, match="sources"):
        Dataset("x", "X", (), "file", 1, ())
