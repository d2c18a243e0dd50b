"""The command line: `kssc cluster FILE` on .npy, .csv and .parquet files, and its errors."""

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from kssc import clustering_error
from kssc.cli import main


def _subspaces(n_per=40, dim=3, ambient=30, n_subspaces=3, seed=0):
    """Noise-free points on random `dim`-dimensional subspaces, grouped by subspace."""
    rng = np.random.RandomState(seed)
    parts = []
    for _ in range(n_subspaces):
        basis = np.linalg.qr(rng.randn(ambient, dim))[0]
        parts.append(rng.randn(n_per, dim) @ basis.T)
    return np.vstack(parts), np.repeat(np.arange(n_subspaces), n_per)


@pytest.fixture
def points(tmp_path):
    X, y = _subspaces()
    path = tmp_path / "points.npy"
    np.save(path, X)
    return path, X, y


def _labels(path):
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=int)
    assert path.read_text().splitlines()[0] == "row,label"
    np.testing.assert_array_equal(table[:, 0], np.arange(len(table)))
    return table[:, 1]


def _fails(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in argv])
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_npy_clustered_with_labels_z_and_timings(points, tmp_path):
    path, X, y = points
    z_path, timings_path = tmp_path / "z.npz", tmp_path / "t.json"
    assert main(["cluster", str(path), "-k", "3", "--n-neighbors", "7",
                 "--save-z", str(z_path), "--timings", str(timings_path)]) == 0
    labels = _labels(tmp_path / "points.labels.csv")
    assert clustering_error(y, labels) == 0
    Z = sp.load_npz(z_path)
    assert Z.shape == (120, 120)
    assert np.diff(Z.indptr).max() <= 7  # every point coded over its 7 neighbours at most
    record = json.loads(timings_path.read_text())
    assert record["n_samples"] == 120 and record["n_clusters"] == 3
    assert {"neighbours", "coefficients", "spectral", "total"} <= set(record["seconds"])


def test_eigen_gap_when_k_omitted(points, tmp_path):
    path, _, y = points
    out = tmp_path / "labels.csv"
    main(["cluster", str(path), "--n-neighbors", "10", "-o", str(out)])
    assert clustering_error(y, _labels(out)) == 0


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_signed_option_reaches_the_estimator(points, tmp_path):
    path, _, _ = points
    z_path = tmp_path / "z.npz"
    main(["cluster", str(path), "-k", "3", "--no-positive", "--lam", "0.01",
          "--save-z", str(z_path)])
    assert sp.load_npz(z_path).data.min() < 0
    main(["cluster", str(path), "-k", "3", "--positive", "--lam", "0.01", "--save-z", str(z_path)])
    assert sp.load_npz(z_path).data.min() >= 0


@pytest.mark.parametrize("header", [True, False], ids=["header", "no-header"])
def test_csv_gives_the_labels_of_npy(points, tmp_path, header):
    path, X, _ = points
    csv_path = tmp_path / "points.csv"
    np.savetxt(csv_path, X, delimiter=",", fmt="%.17g",
               header=",".join(f"f{j}" for j in range(X.shape[1])) if header else "",
               comments="")
    main(["cluster", str(path), "-k", "3", "-o", str(tmp_path / "a.csv")])
    main(["cluster", str(csv_path), "-k", "3", "-o", str(tmp_path / "b.csv")])
    np.testing.assert_array_equal(_labels(tmp_path / "a.csv"), _labels(tmp_path / "b.csv"))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("method", ["ssc", "gfs", "gsc", "sssc", "tsc"])
def test_baseline_methods(points, tmp_path, method):
    path, _, y = points
    out = tmp_path / "labels.csv"
    main(["cluster", str(path), "-k", "3", "--method", method, "-o", str(out)])
    labels = _labels(out)
    assert labels.shape == y.shape and set(labels) <= {0, 1, 2}


def test_python_dash_m(points):
    path, _, _ = points
    done = subprocess.run([sys.executable, "-m", "kssc", "cluster", str(path), "-k", "3"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "3 clusters" in done.stderr
    assert path.with_suffix(".labels.csv").is_file()


def test_option_of_another_method_is_refused(points, capsys):
    path, _, _ = points
    err = _fails(["cluster", path, "--method", "ssc", "--n-neighbors", "5"], capsys)
    assert "--n-neighbors does not apply to --method ssc" in err
    err = _fails(["cluster", path, "--method", "sssc", "--save-z", "z.npz"], capsys)
    assert "no representation matrix" in err


def _write_bad(tmp_path, kind):
    if kind == "missing":
        return tmp_path / "absent.npy"
    if kind == "extension":
        path = tmp_path / "points.txt"
        path.write_text("1,2\n3,4\n")
    elif kind == "text":
        path = tmp_path / "points.csv"
        path.write_text("a,b\n1,2\n3,x\n")
    elif kind == "strings":
        path = tmp_path / "points.npy"
        np.save(path, np.array([["a", "b"], ["c", "d"]]))
    elif kind == "nan":
        path = tmp_path / "points.npy"
        X = np.ones((10, 3))
        X[4, 1] = np.nan
        np.save(path, X)
    else:
        path = tmp_path / "points.npy"
        np.save(path, np.arange(10.0))
    return path


@pytest.mark.parametrize("kind, message", [
    ("missing", "no such file"),
    ("extension", "unsupported extension '.txt'"),
    ("text", "not a numeric table"),
    ("strings", "not numbers"),
    ("nan", "1 row(s) hold NaN or infinite values (rows [4])"),
    ("one-d", "shape (10,); expected a 2-D table"),
])
def test_bad_files_get_a_clear_error(tmp_path, capsys, kind, message):
    path = _write_bad(tmp_path, kind)
    err = _fails(["cluster", path, "-k", "2"], capsys)
    assert str(path) in err and message in err


def test_bad_parameter_is_reported_not_raised(points, capsys):
    path, _, _ = points
    err = _fails(["cluster", path, "-k", "0"], capsys)
    assert "n_clusters" in err


_HAS_PARQUET = all(importlib.util.find_spec(m) for m in ("pandas", "pyarrow"))


@pytest.mark.skipif(not _HAS_PARQUET, reason="needs pandas and pyarrow")
def test_parquet(points, tmp_path):
    import pandas as pd

    path, X, y = points
    parquet = tmp_path / "points.parquet"
    pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).to_parquet(parquet)
    main(["cluster", str(parquet), "-k", "3"])
    assert clustering_error(y, _labels(tmp_path / "points.labels.csv")) == 0


@pytest.mark.skipif(_HAS_PARQUET, reason="pandas and pyarrow are installed")
def test_parquet_without_pyarrow_says_what_to_install(tmp_path, capsys):
    path = tmp_path / "points.parquet"
    path.write_bytes(b"PAR1")
    err = _fails(["cluster", path, "-k", "2"], capsys)
    assert "pip install 'kssc[parquet]'" in err
