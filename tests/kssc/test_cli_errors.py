"""`kssc cluster` exits 2 with one line naming the file and the problem, and never destroys one.

Bad inputs, outputs that cannot be written or would replace an input, and OSError, EOFError,
MemoryError or UnicodeDecodeError anywhere; the outputs are written all at once and
atomically, so a failure (a full disk included) leaves no labels file, truncated or not.
"""

import errno
import os

import numpy as np
import pytest

import kssc.cli._output
from kssc import KSSC
from kssc.cli import main


@pytest.fixture
def points(tmp_path):
    X = np.random.RandomState(0).randn(30, 4)
    path = tmp_path / "points.npy"
    np.save(path, X)
    return path


def _fails(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    # One error line, last; a table's read notice may come before it.
    assert err.count("error:") == 1 and err.splitlines()[-1].startswith("kssc cluster: error:")
    assert "Traceback" not in err
    return err


def _forged_npy(path):
    """A .npy header claiming a (10^9, 1000) float64 array, followed by 800 bytes."""
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(
            handle, {"descr": "<f8", "fortran_order": False, "shape": (10**9, 1000)})
        handle.write(bytes(800))


def _write_bad(tmp_path, kind):
    path = tmp_path / {"missing": "absent.npy", "folder": "folder.csv", "extension": "x.txt2",
                       "latin1": "x.csv", "empty-csv": "x.csv", "header-only": "x.csv"}.get(
                           kind, "x.npy")
    if kind == "folder":
        path.mkdir()
    elif kind == "extension":
        path.write_text("1,2\n3,4\n")
    elif kind == "latin1":
        path.write_bytes("a,b\n1,2\n3,4\n5,caf\u00e9\n".encode("latin-1"))
    elif kind == "empty-csv":
        path.write_text("")
    elif kind == "header-only":
        path.write_text("a,b\n")
    elif kind == "empty-npy":
        path.write_bytes(b"")
    elif kind == "forged":
        _forged_npy(path)
    elif kind == "truncated":
        np.save(path, np.ones((100, 5)))
        path.write_bytes(path.read_bytes()[:-8])
    elif kind == "not-npy":
        path.write_text("1,2\n3,4\n")
    elif kind == "strings":
        np.save(path, np.array([["a", "b"], ["c", "d"]]))
    elif kind == "objects":
        np.save(path, np.array([[1, None]], dtype=object), allow_pickle=True)
    elif kind == "nan":
        X = np.ones((10, 3))
        X[4, 1] = np.nan
        np.save(path, X)
    elif kind == "one-d":
        np.save(path, np.arange(10.0))
    elif kind == "no-rows":
        np.save(path, np.ones((0, 3)))
    return path


@pytest.mark.parametrize("kind, message", [
    ("missing", "no such file"),
    ("folder", "is a folder"),
    ("extension", "unsupported extension '.txt2'"),
    ("latin1", "not UTF-8 text (line 4 holds the byte 0xe9); save it as UTF-8"),
    ("empty-csv", "holds no data (an empty file"),
    ("header-only", "holds no data rows"),
    ("empty-npy", "an empty file, not a .npy array"),
    ("forged", "its header promises an array of shape (1000000000, 1000) (float64, "
               "8,000,000,000,000 bytes) but the file holds 800 bytes"),
    ("truncated", "holds 3,992 bytes after the header: truncated"),
    ("not-npy", "not a .npy array"),
    ("strings", "holds <U1 values, not numbers"),
    ("objects", "holds object values, not numbers"),
    ("nan", "1 row(s) hold NaN or infinite values (rows [4]; row 4, column 2: nan)"),
    ("one-d", "shape (10,); expected a 2-D table"),
    ("no-rows", "holds no data rows"),
])
def test_bad_files_exit_2_naming_the_file(tmp_path, capsys, kind, message):
    path = _write_bad(tmp_path, kind)
    err = _fails(["cluster", path, "-k", 2], capsys)
    assert f"kssc cluster: error: {path}: " in err and message in err
    assert not list(tmp_path.glob("*.labels.csv"))


def test_bad_parameter_is_reported_not_raised(points, capsys):
    err = _fails(["cluster", points, "-k", "0"], capsys)
    assert str(points) in err and "n_clusters" in err
    err = _fails(["cluster", points, "-k", "2", "--n-neighbors", "40"], capsys)
    assert str(points) in err and "n_neighbors" in err


@pytest.mark.parametrize("error", [MemoryError(), EOFError("ran out"),
                                   OSError(errno.EIO, "Input/output error")],
                         ids=["MemoryError", "EOFError", "OSError"])
def test_errors_while_reading_exit_2(points, capsys, monkeypatch, error):
    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(np, "load", broken)
    err = _fails(["cluster", points, "-k", 2], capsys)
    assert f"{points}: cannot read it" in err
    assert not points.with_suffix(".labels.csv").exists()


def test_memory_error_in_the_fit_exits_2(points, capsys, monkeypatch):
    def broken(self, X, y=None):
        raise MemoryError

    monkeypatch.setattr(KSSC, "fit", broken)
    err = _fails(["cluster", points, "-k", 2], capsys)
    assert f"{points}: not enough memory to cluster 30 points of 4 features" in err
    assert not points.with_suffix(".labels.csv").exists()


def test_fit_memory_check_message_is_shown(points, capsys, monkeypatch):
    import kssc.neighbors._memory

    monkeypatch.setattr(kssc.neighbors._memory, "memory_limit",
                        lambda: (2**20, "0.00 GiB is available"))
    err = _fails(["cluster", points, "-k", 2], capsys)
    assert f"{points}: not enough memory: KSSC.fit of 30 x 4 float64 points" in err
    assert "per stage: unit rows" in err and "0.00 GiB is available" in err


def test_output_that_is_the_input_is_refused_and_input_untouched(points, tmp_path, capsys,
                                                                 monkeypatch):
    before = points.read_bytes()
    (tmp_path / "link.csv").symlink_to(points)
    os.link(points, tmp_path / "hard.npy")
    monkeypatch.chdir(tmp_path)
    for output in (points, "points.npy", "./points.npy", f"../{tmp_path.name}/points.npy",
                   tmp_path / "link.csv", "hard.npy"):
        err = _fails(["cluster", "points.npy", "-k", 2, "-o", output], capsys)
        assert f"--output {output}: is the input file points.npy" in err
    err = _fails(["cluster", "points.npy", "-k", 2, "--timings", "./points.npy"], capsys)
    assert "--timings ./points.npy: is the input file" in err
    assert points.read_bytes() == before and (tmp_path / "link.csv").is_symlink()


@pytest.mark.parametrize("kind, message", [
    ("missing-folder", "the folder {tmp}/absent does not exist"),
    ("folder", "is a folder; give a file name"),
    ("trailing-slash", "is a folder; give a file name"),
    ("device", "exists and is not a regular file"),
    ("twice", "the same file as --output"),
])
def test_bad_output_paths_exit_2_before_the_fit(points, tmp_path, capsys, monkeypatch, kind,
                                                message):
    def never(self, X, y=None):
        raise AssertionError("fitted although an output cannot be written")

    monkeypatch.setattr(KSSC, "fit", never)
    output = {"missing-folder": tmp_path / "absent" / "labels.csv", "folder": tmp_path,
              "trailing-slash": f"{tmp_path}/new/", "device": "/dev/null",
              "twice": tmp_path / "same.csv"}[kind]
    extra = ["--timings", tmp_path / "same.csv"] if kind == "twice" else []
    err = _fails(["cluster", points, "-k", 2, "-o", output, *extra], capsys)
    assert f"{output}: " in err and message.format(tmp=tmp_path) in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_folder_exits_2(points, tmp_path, capsys):
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    err = _fails(["cluster", points, "-k", 2, "-o", folder / "labels.csv"], capsys)
    assert "cannot write in" in err and "Permission denied" in err


def test_unwritable_output_exits_2_before_the_fit(points, tmp_path, capsys, monkeypatch):
    def denied(*args, **kwargs):  # what a read-only folder does to a user who is not root
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(kssc.cli._output.tempfile, "mkstemp", denied)
    monkeypatch.setattr(KSSC, "fit", lambda *a: pytest.fail("fitted"))
    err = _fails(["cluster", points, "-k", 2, "-o", tmp_path / "labels.csv"], capsys)
    assert f"--output {tmp_path / 'labels.csv'}: cannot write in {tmp_path} " \
           "(Permission denied)" in err


@pytest.mark.parametrize("failing", ["labels", "z"])
def test_full_disk_leaves_no_output_and_the_old_one_intact(points, tmp_path, capsys,
                                                           monkeypatch, failing):
    labels, z = tmp_path / "labels.csv", tmp_path / "z.npz"
    labels.write_text("old labels\n")
    real_fsync = os.fsync
    calls = []

    def full_disk(descriptor):
        calls.append(descriptor)
        if len(calls) == {"labels": 1, "z": 2}[failing]:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(descriptor)

    monkeypatch.setattr(kssc.cli._output.os, "fsync", full_disk)
    err = _fails(["cluster", points, "-k", 2, "-o", labels, "--save-z", z], capsys)
    named = labels if failing == "labels" else z
    assert f"{named}: cannot write it (No space left on device); no output was written" in err
    assert labels.read_text() == "old labels\n" and not z.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv", "points.npy"]


def test_outputs_keep_permissions_of_the_file_they_replace(points, tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("old\n")
    labels.chmod(0o640)
    assert main(["cluster", str(points), "-k", "2", "--n-neighbors", "5", "-o", str(labels)]) == 0
    assert labels.stat().st_mode & 0o777 == 0o640
    assert labels.read_text().splitlines()[0] == "row,label"
    fresh = tmp_path / "fresh.csv"
    main(["cluster", str(points), "-k", "2", "--n-neighbors", "5", "-o", str(fresh)])
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
