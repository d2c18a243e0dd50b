"""TIR library on the real file, and the data folder / missing-data behaviour."""


import numpy as np
import pytest

from experiments._checkout import REPO_ROOT
from kssc.datasets import DataNotFoundError, get_data_dir, load_tir_library, make_tir


def test_load_tir_library(tir_dir):
    spectra, wavelengths = load_tir_library(tir_dir)
    assert spectra.shape == (120, 321) and spectra.dtype == np.float64
    assert spectra.min() >= 0.0 and spectra.max() <= 1.0
    assert spectra.flags.c_contiguous
    np.testing.assert_allclose(wavelengths, 6.0 + 0.025 * np.arange(321), atol=1e-9)
    assert np.linalg.matrix_rank(spectra) == 120


def test_make_tir_on_the_library(tir_dir):
    spectra, _ = load_tir_library(tir_dir)
    X, y, X_clean = make_tir(spectra, noise=0.04, random_state=0)
    assert X.shape == (100, 321) and np.bincount(y).tolist() == [20] * 5
    # un-normalised: combinations of [0, 1] spectra with weights ~0.1
    assert 0 < X_clean.max() < 1.5


def test_get_data_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("KSSC_DATA_DIR", str(tmp_path / "env"))
    assert get_data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert get_data_dir() == tmp_path / "env"
    monkeypatch.delenv("KSSC_DATA_DIR")
    assert get_data_dir() == REPO_ROOT / "data"


def test_missing_data_error_says_what_where_and_how(tmp_path):
    with pytest.raises(DataNotFoundError) as info:
        load_tir_library(tmp_path)
    assert isinstance(info.value, FileNotFoundError)
    message = str(info.value)
    assert "TIRlib.mat" in message
    assert str(tmp_path / "tir") in message
    assert "make data" in message and "python -m kssc.datasets.fetch" in message


def test_missing_data_error_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("KSSC_DATA_DIR", str(tmp_path))
    with pytest.raises(DataNotFoundError, match=r"KSSC_DATA_DIR"):
        load_tir_library()
