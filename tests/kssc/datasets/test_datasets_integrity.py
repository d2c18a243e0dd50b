"""Where the data folder is, and loaders that refuse corrupt, truncated or wrong files by name."""

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from experiments._checkout import REPO_ROOT
from kssc.datasets import (
    DataCorruptError,
    _integrity,
    _paths,
    load_hopkins_sequence,
    load_tir_library,
    load_yaleb,
)
from kssc.datasets._paths import read_checksums, read_sizes
from kssc.datasets.yaleb import list_yaleb_images, read_pgm

FIRST_FACE = list_yaleb_images([1], n_per_subject=1)[0][0]


def sha(data):
    return hashlib.sha256(data).hexdigest()


def place(data_dir, name, rel, data):
    path = Path(data_dir, name, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def pgm(height, width, fill=128):
    return f"P5\n{width} {height}\n255\n".encode() + bytes([fill]) * (height * width)


def check_corrupt_error(error, data_dir, name, rel, data):
    """The error names the file, the recorded SHA-256 and the repair command, and either the
    sizes (a file of the wrong size is refused unhashed) or the actual SHA-256."""
    expected = read_checksums(name)[rel]
    recorded_size = read_sizes(name)[rel]
    path = str(Path(data_dir, name, rel))
    message = str(error)
    assert (error.path, error.expected) == (path, expected)
    assert path in message and expected in message
    if len(data) != recorded_size:
        assert (error.actual, error.size, error.recorded_size) == (None, len(data), recorded_size)
        assert f"it has {len(data)} bytes, the recorded size is {recorded_size}" in message
    else:
        assert (error.actual, error.size) == (sha(data), None) and sha(data) in message
    assert f"python -m kssc.datasets.fetch --data-dir {data_dir} {name}" in message


def test_data_folder_of_an_installed_package_is_the_user_cache(tmp_path):
    """Outside a checkout the data go to pooch.os_cache("kssc").

    Outside a checkout: no pyproject.toml above the package.
    """
    site = tmp_path / "site-packages"
    shutil.copytree(REPO_ROOT / "kssc", site / "kssc", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("KSSC_DATA_DIR", "PYTHONPATH")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "cache"))
    out = subprocess.run(
        [sys.executable, "-c",
         "import kssc.datasets as d; print(d.__file__); print(d.get_data_dir())"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    assert out[0].startswith(str(site))
    assert Path(out[1]) == tmp_path / "cache" / "kssc"


def test_data_folder_of_a_checkout_is_its_data_folder(monkeypatch):
    monkeypatch.delenv("KSSC_DATA_DIR", raising=False)
    assert _paths.get_data_dir() == REPO_ROOT / "data"


def test_garbage_tir_file(tmp_path):
    data = b"MATLAB 5.0 MAT-file" + b"\0" * 100
    place(tmp_path, "tir", "TIRlib.mat", data)
    with pytest.raises(DataCorruptError) as info:
        load_tir_library(tmp_path)
    check_corrupt_error(info.value, tmp_path, "tir", "TIRlib.mat", data)


def test_tir_file_without_the_library_variable(tmp_path):
    """A valid .mat without `A` used to end in `KeyError: 'A'`."""
    path = tmp_path / "tir" / "TIRlib.mat"
    path.parent.mkdir()
    scipy.io.savemat(path, {"wv": np.arange(3.0)})
    with pytest.raises(DataCorruptError) as info:
        load_tir_library(tmp_path)
    check_corrupt_error(info.value, tmp_path, "tir", "TIRlib.mat", path.read_bytes())


def test_truncated_hopkins_file(tmp_path):
    rel = "cars1/cars1_truth.mat"
    path = tmp_path / "hopkins155" / rel
    path.parent.mkdir(parents=True)
    scipy.io.savemat(path, {"x": np.ones((3, 50, 10)), "s": np.ones((50, 1))})
    data = path.read_bytes()[:-200]
    path.write_bytes(data)
    with pytest.raises(DataCorruptError) as info:
        load_hopkins_sequence("cars1", tmp_path)
    check_corrupt_error(info.value, tmp_path, "hopkins155", rel, data)


@pytest.mark.parametrize("size", [(48, 42), None])
def test_face_of_the_wrong_size_is_not_resized(tmp_path, size):
    """A 48 x 42 file where a 192 x 168 face belongs used to be accepted (and resized)."""
    data = pgm(48, 42)
    place(tmp_path, "yaleb", FIRST_FACE, data)
    with pytest.raises(DataCorruptError) as info:
        load_yaleb([1], n_per_subject=1, size=size, data_dir=tmp_path)
    check_corrupt_error(info.value, tmp_path, "yaleb", FIRST_FACE, data)


def test_truncated_face(tmp_path):
    data = pgm(192, 168)[:-1000]
    place(tmp_path, "yaleb", FIRST_FACE, data)
    with pytest.raises(DataCorruptError) as info:
        load_yaleb([1], n_per_subject=1, data_dir=tmp_path)
    check_corrupt_error(info.value, tmp_path, "yaleb", FIRST_FACE, data)


def test_read_pgm_names_truncated_and_wrong_shape_files(tmp_path):
    path = tmp_path / "face.pgm"
    path.write_bytes(pgm(192, 168)[:-1000])
    with pytest.raises(ValueError,
                       match=rf"{path} is truncated: 31256 pixel bytes for the 192 x 168 image"):
        read_pgm(path)
    path.write_bytes(pgm(48, 42, fill=7))
    with pytest.raises(ValueError, match=rf"{path} is 48 x 42 pixels; expected 192 x 168"):
        read_pgm(path, shape=(192, 168))
    image = read_pgm(path, shape=(48, 42))
    assert image.shape == (48, 42) and (image == 7).all()


def test_a_huge_file_of_the_wrong_size_is_refused_without_reading_it(tmp_path, monkeypatch):
    """A 20 GB sparse file in TIRlib.mat's place used to be hashed (33 s) before the refusal."""
    path = tmp_path / "tir" / "TIRlib.mat"
    path.parent.mkdir()
    with open(path, "wb") as fh:
        fh.truncate(20 * 10**9)  # sparse: no block is written
    monkeypatch.setattr(_integrity, "sha256_file", lambda path: pytest.fail(f"{path} hashed"))
    with pytest.raises(DataCorruptError, match="it has 20000000000 bytes, the recorded size is "
                       f"{read_sizes('tir')['TIRlib.mat']}") as info:
        load_tir_library(tmp_path)
    assert info.value.actual is None


def test_same_size_edit_is_refused_by_its_sum(tmp_path, real_data):
    data = bytearray((real_data("tir") / "tir" / "TIRlib.mat").read_bytes())
    data[-1] ^= 0xFF
    place(tmp_path, "tir", "TIRlib.mat", bytes(data))
    with pytest.raises(DataCorruptError) as info:
        load_tir_library(tmp_path)
    check_corrupt_error(info.value, tmp_path, "tir", "TIRlib.mat", bytes(data))


def test_a_same_size_edit_with_its_mtime_restored_is_hashed_again(tmp_path):
    """The cache was keyed on (path, size, mtime): such an edit kept the old sum."""
    path = tmp_path / "f.bin"
    path.write_bytes(b"one")
    mtime = path.stat().st_mtime_ns
    assert _integrity.cached_sha256(path) == sha(b"one")
    time.sleep(0.05)  # past the file system's time granularity, so the status time moves
    path.write_bytes(b"two")
    os.utime(path, ns=(mtime, mtime))
    assert path.stat().st_mtime_ns == mtime
    assert _integrity.cached_sha256(path) == sha(b"two")


def test_sums_are_computed_once_per_path_size_and_mtime(tmp_path, monkeypatch):
    calls = []
    real = _integrity.sha256_file
    monkeypatch.setattr(_integrity, "sha256_file", lambda path: calls.append(path) or real(path))
    path = tmp_path / "f.bin"
    path.write_bytes(b"one")
    os.utime(path, ns=(10**18, 10**18))
    assert _integrity.cached_sha256(path) == sha(b"one")
    assert _integrity.cached_sha256(path) == sha(b"one") and len(calls) == 1
    path.write_bytes(b"four")
    os.utime(path, ns=(10**18, 10**18))
    assert _integrity.cached_sha256(path) == sha(b"four") and len(calls) == 2  # size changed
    path.write_bytes(b"five")
    os.utime(path, ns=(2 * 10**18, 2 * 10**18))
    assert _integrity.cached_sha256(path) == sha(b"five") and len(calls) == 3  # mtime changed


def test_repeated_loads_hash_nothing(monkeypatch, real_data):
    data_dir = real_data("tir")
    load_tir_library(data_dir)
    monkeypatch.setattr(_integrity, "sha256_file", lambda path: pytest.fail(f"{path} hashed again"))
    spectra, _ = load_tir_library(data_dir)
    assert spectra.shape == (120, 321)


def test_corrupt_copy_of_the_real_file(tmp_path, real_data):
    data = (real_data("tir") / "tir" / "TIRlib.mat").read_bytes()[:-1]
    place(tmp_path, "tir", "TIRlib.mat", data)
    with pytest.raises(DataCorruptError) as info:
        load_tir_library(tmp_path)
    check_corrupt_error(info.value, tmp_path, "tir", "TIRlib.mat", data)


def test_tests_skip_on_a_missing_file_not_a_missing_folder(tmp_path, monkeypatch, real_data):
    """An empty data/tir/ (what a failed `make data` used to leave) skips, naming the file."""
    (tmp_path / "data" / "tir").mkdir(parents=True)
    monkeypatch.delenv("KSSC_DATA_DIR", raising=False)
    monkeypatch.setattr(_paths, "_checkout_root", lambda: tmp_path)
    with pytest.raises(pytest.skip.Exception, match=r"data/tir/TIRlib\.mat is missing"):
        real_data("tir")
    monkeypatch.setenv("KSSC_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(pytest.fail.Exception, match=r"TIRlib\.mat is missing"):
        real_data("tir")
