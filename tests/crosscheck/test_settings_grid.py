"""crosscheck.settings_grid: our k-SSC at both dvsn k on re-created committed cells."""

import pandas as pd

from crosscheck.settings_grid import grid_rows, main
from experiments import _io
from experiments._produce import traced_main
from experiments._staleness import other_status


def test_grid_rows_fit_both_k_on_the_committed_cell():
    cell = {"ambient_dim": 30, "n_per_subspace": 15, "subspace_dim": 3, "trial": 0, "seed": 7}
    frame = pd.DataFrame([{**cell, "method": "ssc", "error_pct": 4.0},
                          {**cell, "method": "kssc", "error_pct": 12.0}])
    (row,) = grid_rows(frame).to_dict("records")
    assert (row["k_code"], row["k_paper"]) == (5, 8)  # min(4.5 -> 5, 7.5 -> 8), min(8, 45)
    assert row["error_ssc"] == 4.0 and row["error_kssc_committed"] == 12.0
    assert 0.0 <= row["error_kssc_code"] <= 100.0 and 0.0 <= row["error_kssc_paper"] <= 100.0


def test_main_writes_the_table_and_its_sidecar_through_the_harness(tmp_path):
    cell = {"ambient_dim": 30, "n_per_subspace": 15, "subspace_dim": 3, "trial": 0, "seed": 7}
    committed = tmp_path / "synthetic_dvsn.csv"
    pd.DataFrame([{**cell, "method": "ssc", "error_pct": 4.0},
                  {**cell, "method": "kssc", "error_pct": 12.0}]).to_csv(committed, index=False)
    output = tmp_path / "crosscheck_settings_grid.csv"
    assert traced_main(main, ["--results", str(committed), "--output", str(output)]) == 0
    meta = _io.read_meta(tmp_path, "crosscheck_settings_grid")
    assert meta["config"]["experiment"]["input_files"] == {
        committed.as_posix(): _io.sha256_file(committed)}
    assert "crosscheck.settings_grid:grid_rows" in meta["executed"]["functions"]
    assert other_status(tmp_path, "crosscheck_settings_grid") == "current"
