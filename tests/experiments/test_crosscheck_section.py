"""REPORT.md's cross-check section (experiments/publish/crosscheck_section.py), on hand-made
CSVs."""

import pandas as pd

from experiments.publish import crosscheck_section as report

PAPER_GSC = {"error_pct_mean": 37.2, "error_pct_median": 36.5, "error_pct_min": 20.3,
             "error_pct_max": 60.0}


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
    text = "\n".join(report.section(tmp_path, PAPER_GSC))
    assert "| kSSC relaxed | 1e-14 | 1 | 100 | 0 | 0 | 0 |" in text
    noise0 = [line for line in text.splitlines() if "synthetic_mv, noise 0 " in line][0]
    # gap (8 + 8 + 0 + 0) / 4 = +4.00, all carried by the two impure cells; oracle -1.00.
    assert "mean gap k-SSC - SSC +4.00 points" in noise0
    assert "the 2 cells with more than 20 % such neighbours carry +4.00" in noise0
    assert "the gap is -1.00 points" in noise0
    # the disconnected cell already scores 2 %: scoring it 0 % explains 0.50 points.
    assert "mean gap +3.50 points (explains 0.50 points)" in noise0
    assert report.section(tmp_path / "none", PAPER_GSC) == []
