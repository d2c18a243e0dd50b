"""The cross-check's Python side (no Octave needed), its skip, and one slow run with Octave."""

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from crosscheck.compare import label_agreement, max_abs_dz
from crosscheck.environment import find_reference, missing_requirements
from crosscheck.inputs import (
    kdtree_stand_in,
    random_labelings,
    union_of_subspaces,
    write_inputs,
)
from crosscheck.run import main
from experiments._checkout import REPO_ROOT
from experiments._produce import traced_main


def test_inputs_are_unit_points_with_balanced_labels():
    X, y = union_of_subspaces(n_subspaces=3, n_per_subspace=10, ambient_dim=12, seed=1)
    assert X.shape == (30, 12)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.bincount(y).tolist() == [10, 10, 10]


def test_write_inputs_uses_the_authors_layout(tmp_path):
    X, y = union_of_subspaces(n_subspaces=2, n_per_subspace=5, ambient_dim=6, seed=0)
    W = sp.random(10, 10, density=0.3, random_state=0, format="csr")
    write_inputs(tmp_path / "in.mat", X, y, ncut_W=W, kssc_k=3, sssc_in=np.array([1, 4]))
    saved = scipy.io.loadmat(tmp_path / "in.mat")
    np.testing.assert_array_equal(saved["X"], X.T)  # points as columns (D x N)
    np.testing.assert_array_equal(saved["truth"].ravel(), y + 1)  # 1-based labels
    assert saved["truth"].shape == (10, 1)
    assert sp.issparse(saved["ncut_W"]) and (saved["ncut_W"] != W).nnz == 0
    assert saved["kssc_k"].dtype == np.float64 and saved["kssc_k"].item() == 3
    assert saved["sssc_in"].ravel().tolist() == [1.0, 4.0]


def test_kdtree_stand_in_is_exact_neighbours_with_self_first():
    X, _ = union_of_subspaces(n_subspaces=2, n_per_subspace=15, ambient_dim=8, seed=2)
    table = kdtree_stand_in(X, 4)
    assert table.shape == (5, 30)
    np.testing.assert_array_equal(table[0], np.arange(1, 31))
    # Independent reference: scikit-learn's brute-force Euclidean search (self first).
    _, expected = NearestNeighbors(n_neighbors=5, algorithm="brute").fit(X).kneighbors(X)
    np.testing.assert_array_equal(table[1:].T - 1, expected[:, 1:])


def test_max_abs_dz_transposes_the_authors_columns():
    ours = np.array([[0.0, 0.5, 0.0], [0.2, 0.0, 0.0], [0.0, 0.1, 0.0]])  # row i codes point i
    theirs = ours.T.copy()  # column i codes point i
    assert max_abs_dz(ours, theirs) == 0.0
    theirs[1, 0] += 0.25  # their column 0 (point 0) now uses point 1 with 0.75
    assert max_abs_dz(sp.csr_matrix(ours), sp.csc_matrix(theirs)) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="differ in shape"):
        max_abs_dz(ours, theirs[:2])


def test_label_agreement_hand_computed():
    assert label_agreement([0, 0, 1, 1, 2, 2], [5, 5, 3, 3, 4, 4]) == (1.0, 100.0)
    ari, identical = label_agreement([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1])
    assert identical == pytest.approx(100 * 5 / 6)
    assert 0.0 < ari < 1.0


def test_random_labelings_span_from_a_relabelling_to_noise():
    y = np.repeat(np.arange(3), 50)
    labelings = random_labelings(y, 5, seed=0)
    assert labelings.shape == (150, 5)
    assert label_agreement(y, labelings[:, 0]) == (1.0, 100.0)
    assert label_agreement(y, labelings[:, -1])[0] < 0.1
    assert set(np.unique(labelings)) <= {0, 1, 2}


def test_skips_without_octave(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("KSSC_OCTAVE", str(tmp_path / "no-octave"))
    out = tmp_path / "crosscheck.csv"
    assert main(["--output", str(out)]) == 0
    assert "crosscheck skipped: GNU Octave was not found" in capsys.readouterr().out
    assert not out.exists()


def test_skips_without_the_reference_code(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("KSSC_REFERENCE_DIR", str(tmp_path))
    assert main(["--output", str(tmp_path / "crosscheck.csv")]) == 0
    assert "the authors' code was not found" in capsys.readouterr().out


@pytest.mark.e2e
def test_entry_point_skips_when_octave_is_not_on_the_path(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KSSC_OCTAVE"}
    env.update(PATH=str(tmp_path), PYTHONPATH=str(REPO_ROOT))  # an empty PATH: no octave
    done = subprocess.run([sys.executable, "-m", "crosscheck", "--output", str(tmp_path / "x.csv")],
                          check=False, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "crosscheck skipped" in done.stdout
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.slow
@pytest.mark.skipif(bool(missing_requirements()), reason="needs Octave and the authors' code")
def test_crosscheck_matches_the_authors_code(tmp_path):
    out = tmp_path / "crosscheck.csv"
    assert traced_main(main, ["--output", str(out), "--keep", str(tmp_path / "work"),
                              "--inputs", "clean", "noisy"]) == 0
    table = pd.read_csv(out)
    assert sorted(table["input"].unique()) == ["clean", "noisy"]
    clean = table[table["input"] == "clean"].set_index("method")
    for method in ["kSSC relaxed", "SSC relaxed", "SSC relaxed (per point)", "SSC exact",
                   "SSC exact (per point)", "GSC", "TSC", "GFS"]:
        assert clean.loc[method, "max_abs_dZ"] < 1e-8, method
    assert (table.loc[table["method"] == "misclassification metric", "max_abs_d_error"]
            < 1e-9).all()
    noisy = table[(table["input"] == "noisy") & table["error_theirs"].notna()]
    assert (noisy["error_theirs"] > 0).any()  # the hard input is hard for their code too
    assert (tmp_path / "crosscheck.meta.json").exists()
    assert main(["--check", "--output", str(out), "--inputs", "clean", "noisy"]) == 0
    assert find_reference() is not None


def test_cell_graph_stats_hand_computed():
    from types import SimpleNamespace

    from crosscheck.dvsn import cell_graph_stats

    # Two subspaces of three points; point 2 picks a neighbour (3) of the other subspace.
    # Subspace 1 (points 3, 4, 5) has point 5 linked only across, so its graph is split.
    y = np.array([0, 0, 0, 1, 1, 1])
    neighbours = np.array([[1], [0], [3], [4], [3], [2]])
    Z = sp.csr_matrix((np.ones(6), (np.arange(6), neighbours[:, 0])), shape=(6, 6))
    model = SimpleNamespace(neighbors_=neighbours, representation_matrix_=Z,
                            affinity_matrix_=abs(Z) + abs(Z).T)
    stats = cell_graph_stats(model, y)
    assert stats["cross_neighbours"] == pytest.approx(2 / 6)
    assert stats["cross_coefficients"] == pytest.approx(2 / 6)
    assert stats["connected_subspaces"] == 0  # {0,1} | {2} and {3,4} | {5}
    assert stats["components"] == 2  # {0, 1} and {2, 3, 4, 5}


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning",
                            "ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")   # one cell: no correlation
def test_gap_mv_reruns_committed_cells_and_summarises():
    from crosscheck.gap_mv import run_cells, summarise

    exp = {"ambient_dim": 20, "subspace_dim": 3, "n_per_subspace": 12, "n_subspaces": 3,
           "n_neighbors": 4}
    frame = pd.DataFrame({"method": ["kssc", "ssc"], "noise": [0.0, 0.0], "mean": [0.5, 0.5],
                          "var": [1.0, 1.0], "trial": [0, 0], "seed": [7, 7],
                          "error_pct": [np.nan, 5.0]})
    table = run_cells(frame, exp)
    # The committed error (NaN here) is carried, the rerun computed beside it.
    assert np.isnan(table["error_kssc"].iloc[0])
    assert 0.0 <= table["error_kssc_rerun"].iloc[0] <= 100.0
    table["error_kssc"] = [20.0]
    table["error_kssc_oracle"] = [0.0]
    ssc = frame[frame.method == "ssc"][["noise", "mean", "var", "trial", "error_pct"]].rename(
        columns={"error_pct": "error_ssc"})
    merged, lines = summarise(table, ssc, n_subspaces=3)
    assert merged["gap"].iloc[0] == 15.0 and merged["gap_oracle"].iloc[0] == -5.0
    assert "noise 0: gap +15.00 points" in lines[1]
