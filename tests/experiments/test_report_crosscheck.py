"""REPORT.md's cross-check section and `experiments.summarise`, on hand-made CSVs."""

import json

import pandas as pd

from experiments import report, summarise


def mv_rows():
    rows = []
    for noise in (0.0, 0.1):
        for cell in range(4):
            cross = 0.5 if cell < 2 else 0.0
            rows.append({"noise": noise, "mean": cell, "var": 1.0, "trial": 0,
                         "error_kssc": 10.0 if cross else 2.0, "error_ssc": 2.0,
                         "error_kssc_oracle": 1.0, "cross_neighbours": cross,
                         "connected_subspaces": 5, "components": 2 if cell == 3 else 1})
    return pd.DataFrame(rows)


def test_crosscheck_section_names_each_cause_with_its_number(tmp_path):
    pd.DataFrame([{"method": "kSSC relaxed", "max_abs_dZ": 1e-14, "ari": 1.0,
                   "identical_pct": 100.0, "error_ours": 0.0, "error_theirs": 0.0,
                   "max_abs_d_error": 0.0}]).to_csv(tmp_path / "crosscheck.csv", index=False)
    mv_rows().to_csv(tmp_path / "crosscheck_mv.csv", index=False)
    text = "\n".join(report.crosscheck_section(tmp_path))
    assert "| kSSC relaxed | 1e-14 | 1 | 100 | 0 | 0 | 0 |" in text
    noise0 = [line for line in text.splitlines() if "synthetic_mv, noise 0 " in line][0]
    # gap (8 + 8 + 0 + 0) / 4 = +4.00, all carried by the two impure cells; oracle -1.00.
    assert "mean gap k-SSC - SSC +4.00 points" in noise0
    assert "the 2 cells with more than 20 % such neighbours carry +4.00" in noise0
    assert "the gap is -1.00 points" in noise0
    # the disconnected cell already scores 2 %: scoring it 0 % explains 0.50 points.
    assert "mean gap +3.50 points (explains 0.50 points)" in noise0
    assert report.crosscheck_section(tmp_path / "none") == []


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
