"""REPORT.md's cross-check section (experiments/publish/crosscheck_section.py), on hand-made
CSVs."""

import pandas as pd

from experiments.publish import crosscheck_section as report

PAPER = {"gsc": {"error_pct_mean": 37.2, "error_pct_median": 36.5, "error_pct_min": 20.3,
                 "error_pct_max": 60.0, "error_pct_std": 10.0}}


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
    text = "\n".join(report.section(tmp_path, PAPER))
    assert "| kSSC relaxed | 1e-14 | 1 | 100 | 0 | 0 | 0 |" in text
    noise0 = [line for line in text.splitlines() if "synthetic_mv, noise 0 " in line][0]
    # gap (8 + 8 + 0 + 0) / 4 = +4.00, all carried by the two impure cells; oracle -1.00.
    assert "mean gap k-SSC - SSC +4.00 points" in noise0
    assert "the 2 cells with more than 20 % such neighbours carry +4.00" in noise0
    assert "the gap is -1.00 points" in noise0
    # the disconnected cell already scores 2 %: scoring it 0 % explains 0.50 points.
    assert "mean gap +3.50 points (explains 0.50 points)" in noise0
    assert report.section(tmp_path / "none", PAPER) == []


def loop_rows():
    """The authors' mv loop at two noise levels: at the code's settings a 4-point gap; at the
    paper text's both at 0 % (noise 0) or both well above the floor and equal (noise 0.1)."""
    rows = []
    for noise, paper in ((0.0, (0.0, 0.0)), (0.1, (20.0, 20.0))):
        for variant, (kssc, ssc) in (("code", (6.0, 2.0)), ("paper", paper)):
            for trial in range(3):
                rows.append({"experiment": "mv", "variant": variant, "ambient_dim": 50,
                             "n_per_subspace": 20, "subspace_dim": 10, "mean": 0.1, "var": 5.0,
                             "noise": noise, "trial": trial, "error_kssc_theirs": kssc,
                             "kssc_failed_theirs": False, "error_kssc_theirs_scored": kssc,
                             "error_ssc_theirs": ssc, "error_kssc_ours": kssc,
                             "error_ssc_ours": ssc, "cross_neighbours_theirs": 0.3})
    return pd.DataFrame(rows)


def reconcile_rows():
    rows = []
    for group in ("noise 0", "noise 0.1"):
        for term, points in (("settings", 4.0), ("unreconciled", 0.0)):
            rows.append({"experiment": "mv", "group": group, "term": term, "points": points,
                         "low": points - 0.5, "high": points + 0.5, "in_sum": True,
                         "gap_grid": 4.0, "n_cells": 1, "n_trials": 3, "gap_ours_paper": 0.0,
                         "kssc_failed_theirs": 0, "ssc_failed_theirs": 0,
                         "cross_neighbours_ours": 0.3, "cross_neighbours_theirs": 0.3})
    return pd.DataFrame(rows)


def test_reconciled_only_where_the_two_methods_are_not_both_at_the_floor(tmp_path):
    loop_rows().to_csv(tmp_path / "crosscheck_authors_loops_mv.csv", index=False)
    reconcile_rows().to_csv(tmp_path / "crosscheck_reconcile.csv", index=False)
    text = "\n".join(report.section(tmp_path, PAPER))
    readings = [line for line in text.splitlines() if line.startswith("_Reading")]
    assert readings[0].startswith("_Reading: no reconciliation shown") and "floor" in readings[0]
    assert readings[1].startswith("_Reading: reconciled:")
    assert "| synthetic_mv, noise 0 | their code's | 1 | 3 | 6.00 | 2.00 | +4.00" in text
    assert "brackets" not in text and "whole cause" not in text
