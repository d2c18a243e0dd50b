"""The command line: `kssc cluster FILE`, its options and outputs (reading files:
test_cli_reading.py; errors and output safety: test_cli_errors.py)."""

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from kssc import KSSC, AutoKSSC, clustering_error
from kssc.baselines import BASELINES
from kssc.cli import main
from kssc.presets import PRESETS, preset_params


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
@pytest.mark.parametrize("method", list(BASELINES))
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


def _fit_params(argv, monkeypatch):
    """The parameters of the estimator `kssc cluster argv` fits (the fit itself skipped)."""
    seen = {}

    class Fitted(Exception):
        pass

    def record(self, X, y=None):
        seen.update(self.get_params(deep=False))
        raise Fitted

    monkeypatch.setattr(KSSC, "fit", record)
    with pytest.raises(Fitted):
        main([str(a) for a in argv])
    return seen


@pytest.mark.parametrize("preset", PRESETS)
def test_preset_sets_its_parameters(points, monkeypatch, preset):
    path, _, _ = points
    params = _fit_params(["cluster", path, "-k", "3", "--preset", preset], monkeypatch)
    expected = {**KSSC().get_params(deep=False), **preset_params(preset), "n_clusters": 3,
                "random_state": 0, "verbose": 0}
    assert params == expected  # an ADMM solver is a frozen dataclass: compared by value


def test_flags_override_the_preset(points, monkeypatch):
    path, _, _ = points
    params = _fit_params(["cluster", path, "--preset", "faces", "--n-neighbors", "12",
                          "--lam", "0.2", "--metric", "euclidean", "--assign-labels", "kmeans",
                          "--neighbor-algorithm", "exact", "--random-state", "7",
                          "--n-jobs", "2", "-v"], monkeypatch)
    faces = preset_params("faces")
    assert params["n_neighbors"] == 12 and params["lam"] == 0.2
    assert params["metric"] == "euclidean" and params["assign_labels"] == "kmeans"
    assert params["neighbor_algorithm"] == "exact" and params["random_state"] == 7
    assert params["n_jobs"] == 2 and params["verbose"] == 1 and params["n_clusters"] is None
    assert params["n_random"] == faces["n_random"] and params["threshold"] == faces["threshold"]
    assert params["solver"] == faces["solver"]


def test_preset_gives_the_labels_of_the_estimator(points, tmp_path):
    path, X, _ = points
    out = tmp_path / "labels.csv"
    main(["cluster", str(path), "-k", "3", "--preset", "paper", "--n-neighbors", "10",
          "-o", str(out)])
    model = KSSC(3, **{**preset_params("paper"), "n_neighbors": 10}, random_state=0).fit(X)
    np.testing.assert_array_equal(_labels(out), model.labels_)


@pytest.mark.e2e  # the CLI's --preset auto end to end (14 s)
def test_auto_preset_gives_autokssc_and_its_chosen_candidate(points, tmp_path, capsys):
    path, X, y = points
    out, z_path, timings_path = tmp_path / "l.csv", tmp_path / "z.npz", tmp_path / "t.json"
    assert main(["cluster", str(path), "-k", "3", "--preset", "auto", "-o", str(out),
                 "--save-z", str(z_path), "--timings", str(timings_path)]) == 0
    auto = AutoKSSC(3, random_state=0).fit(X)
    np.testing.assert_array_equal(_labels(out), auto.labels_)
    assert clustering_error(y, auto.labels_) == 0
    chosen = auto.best_estimator_
    # The file's points reach the fit by another path: equal up to rounding.
    np.testing.assert_allclose(sp.load_npz(z_path).toarray(),
                               chosen.representation_matrix_.toarray(), atol=1e-10)
    record = json.loads(timings_path.read_text())
    assert record["auto"]["chosen"] == auto.best_candidate_
    assert set(record["auto"]["candidate_seconds"]) == {"generic", "faces", "motion"}
    assert set(record["seconds"]) == set(chosen.timings_)
    assert f"kssc (auto: {auto.best_candidate_}): 120 points -> 3 clusters" in (
        capsys.readouterr().err)


def test_auto_preset_refuses_options_and_baselines(points, capsys):
    path, _, _ = points
    err = _fails(["cluster", path, "--preset", "auto", "--n-neighbors", "5"], capsys)
    assert "--n-neighbors does not apply to --preset auto" in err
    err = _fails(["cluster", path, "--method", "tsc", "--preset", "auto"], capsys)
    assert "--preset applies to --method kssc, not tsc" in err


def test_preset_of_a_baseline_is_refused(points, capsys):
    path, _, _ = points
    err = _fails(["cluster", path, "--method", "ssc", "--preset", "paper"], capsys)
    assert "--preset applies to --method kssc, not ssc" in err


def test_help_lists_the_presets_and_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["cluster", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "{" + ",".join((*PRESETS, "auto")) + "}" in text
    for option in ("--columns", "--id-column", "--delimiter", "--no-header", "--n-neighbors",
                   "--lam", "--metric", "--assign-labels", "--neighbor-algorithm",
                   "--random-state", "--n-jobs", "--verbose", "--method", "--timings"):
        assert option in text
