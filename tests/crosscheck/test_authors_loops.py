"""crosscheck.authors_loops: the settings, the seeds, the row schema and a tiny Octave run."""

import numpy as np
import pandas as pd
import pytest

from crosscheck import authors_loops as loops
from crosscheck.environment import missing_requirements
from crosscheck.inputs import union_of_subspaces

COLUMNS = ["experiment", "variant", "ambient_dim", "n_per_subspace", "subspace_dim", "mean",
           "var", "noise", "trial", "seed", "k", "error_kssc_theirs", "kssc_failed_theirs",
           "error_kssc_theirs_scored", "error_ssc_theirs", "error_kssc_ours", "error_ssc_ours",
           "cross_neighbours_theirs", "cross_neighbours_ours", "seconds_octave"]


@pytest.mark.parametrize(("n", "d", "D", "code", "paper"), [
    (150, 18, 30, 27, 45),   # code: 1.5 d = 27 < 75; paper: 1.5 D = 45 < 75
    (15, 3, 30, 5, 8),       # MATLAB rounding: 4.5 -> 5, 7.5 -> 8
    (60, 24, 100, 30, 30),   # both capped by N_i / 2
])
def test_dvsn_neighbours_code_and_paper_text(n, d, D, code, paper):
    assert loops.dvsn_neighbours(n, d, D) == {"code": code, "paper": paper}


def test_trial_specs_share_dvsn_data_and_redraw_mv_data():
    dvsn = loops.trial_specs("dvsn", [(30, 30, 9), (50, 60, 24)], 2)
    assert len(dvsn) == 4 and all(set(s["ks"]) == {"code", "paper"} for s in dvsn)
    mv = loops.trial_specs("mv", [(0.05, 0.1, 5.0)], 2)
    assert [(s["trial"], *s["ks"]) for s in mv] == [(0, "code"), (0, "paper"), (1, "code"),
                                                   (1, "paper")]
    assert [(s["subspace_dim"], s["n_per_subspace"]) for s in mv[:2]] == [(10, 20), (5, 50)]
    seeds = [s["seed"] for s in dvsn + mv]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2**31 for s in seeds)


def test_cross_share_hand_computed():
    y = np.array([0, 0, 1, 1])
    neighbours = np.array([[1, 2], [0, 3], [3, 0], [2, 1]])  # 4 of the 8 entries cross
    assert loops.cross_share(neighbours, y) == 0.5


def fake_octave_output(X, y, k, kssc_error, ssc_error=0.1):
    """What the driver saves: X as columns, 1-based truth, exact neighbours, errors (fractions)."""
    dist = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(dist, -np.inf)
    return {"X": X.T, "truth": (y + 1)[:, None].astype(float),
            "knn": np.argsort(dist, axis=0, kind="stable")[: k + 1] + 1.0,
            "kssc_error": np.array([[kssc_error]]), "ssc_error": np.array([[ssc_error]])}


@pytest.mark.parametrize("failed", [False, True])
def test_trial_rows_schema_and_the_authors_scoring(failed):
    X, y = union_of_subspaces(n_subspaces=5, subspace_dim=3, n_per_subspace=12, ambient_dim=20,
                              noise=0.01, seed=3)
    spec = loops.trial_specs("mv", [(0.0, 0.5, 1.0)], 1)[0]
    out = fake_octave_output(X, y, 10, np.nan if failed else 0.25)
    (row,) = loops.trial_rows(spec, out, seconds=1.5)
    assert list(row) == COLUMNS
    assert row["kssc_failed_theirs"] is failed
    assert row["error_kssc_theirs_scored"] == (0.0 if failed else 25.0)
    assert np.isnan(row["error_kssc_theirs"]) == failed
    assert row["error_ssc_theirs"] == pytest.approx(10.0)
    # Both searches are exact, so their neighbour table and ours agree.
    assert row["cross_neighbours_theirs"] == pytest.approx(row["cross_neighbours_ours"])
    assert 0.0 <= row["error_kssc_ours"] <= 100.0 and 0.0 <= row["error_ssc_ours"] <= 100.0


@pytest.mark.slow
@pytest.mark.skipif(bool(missing_requirements()), reason="needs Octave and the authors' code")
def test_their_mv_loop_runs_in_octave_beside_ours(tmp_path):
    specs = [s for s in loops.trial_specs("mv", [(0.0, 1.0, 0.5)], 1) if "code" in s["ks"]]
    table = loops.run(specs, tmp_path / "loops.csv", tmp_path, tmp_path / "data")
    assert list(pd.read_csv(tmp_path / "loops.csv").columns) == COLUMNS
    row = table.iloc[0]
    assert row["n_per_subspace"] == 20 and row["k"] == 10
    assert 0.0 <= row["error_kssc_theirs"] <= 100.0 and 0.0 <= row["error_ssc_theirs"] <= 100.0
    # The stand-in's exact neighbours are ours (up to ties).
    assert abs(row["cross_neighbours_theirs"] - row["cross_neighbours_ours"]) < 0.01
    assert len(list((tmp_path / "data").glob("mv_*.mat"))) == 1
