"""`experiments.summarise` rewrites a summary table from committed trial rows."""

import json

import pandas as pd

from experiments import summarise


def test_summarise_rewrites_a_table_from_trial_rows(tmp_path):
    rows = [{"experiment": "synthetic_intersection", "method": m, "trial": t, "seed": t,
             "error_pct": float(t + (m == "kssc")), "failed": False,
             "time_representation_s": 0.1, "time_fit_s": 0.1, "failure": "",
             "intersection_dim": 1} for m in ("ssc", "kssc") for t in range(4)]
    pd.DataFrame(rows).to_csv(tmp_path / "synthetic_intersection.csv", index=False)
    (tmp_path / "synthetic_intersection.meta.json").write_text(
        json.dumps({"config": {"experiment": {"name": "synthetic_intersection"}}}))
    assert summarise.resummarise(tmp_path, "synthetic_intersection")
    assert not summarise.resummarise(tmp_path, "tir")             # no CSV
    table = pd.read_csv(tmp_path / "synthetic_intersection_table.csv").set_index("method")
    assert table.loc["kssc", "error_pct_vs_ssc_mean"] == 1.0
    assert table.loc["kssc", "error_pct_vs_ssc_low"] == table.loc["kssc", "error_pct_vs_ssc_high"]
    assert table.loc["ssc", "error_pct_ci_low"] < 1.5 < table.loc["ssc", "error_pct_ci_high"]
