"""A missing data folder is named with both ways to fix it: download, or point elsewhere."""

import pytest

from kssc.datasets import DataNotFoundError, load_tir_library


@pytest.mark.parametrize("source", ["environment", "argument", "default"])
def test_message_names_make_data_and_the_variable(source, tmp_path, monkeypatch):
    monkeypatch.delenv("KSSC_DATA_DIR", raising=False)
    if source == "environment":
        monkeypatch.setenv("KSSC_DATA_DIR", str(tmp_path))
    kwargs = {"data_dir": tmp_path} if source == "argument" else {}
    if source == "default":
        # an installed package's default folder, made empty
        monkeypatch.setattr("kssc.datasets._paths._checkout_root", lambda: None)
        monkeypatch.setattr("pooch.os_cache", lambda name: tmp_path)
    with pytest.raises(DataNotFoundError) as info:
        load_tir_library(**kwargs)
    message = str(info.value)
    assert f"missing from {tmp_path / 'tir'}" in message
    assert "`make data`" in message and "`export KSSC_DATA_DIR=" in message
    assert f"python -m kssc.datasets.fetch --data-dir {tmp_path} tir" in message


def test_the_experiments_folder_from_the_variable_is_named_as_such(tmp_path, monkeypatch):
    # The experiments pass the folder they resolved from $KSSC_DATA_DIR as data_dir.
    monkeypatch.setenv("KSSC_DATA_DIR", str(tmp_path))
    with pytest.raises(DataNotFoundError, match=r"\(from \$KSSC_DATA_DIR\)"):
        load_tir_library(data_dir=tmp_path)
