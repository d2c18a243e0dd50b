"""crosscheck.reconcile: the telescoping decomposition, its intervals and the docs block."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from crosscheck import reconcile

CELL_A, CELL_B = (30, 30, 9), (30, 60, 15)


def committed_rows(gaps_by_cell):
    """Committed-style rows: SSC at 5 %, k-SSC at 5 % + gap, one pair per trial."""
    rows = []
    for cell, gaps in gaps_by_cell.items():
        for trial, gap in enumerate(gaps):
            cols = dict(zip(reconcile.CELLS["dvsn"], cell, strict=True), trial=trial)
            rows += [{**cols, "method": "ssc", "error_pct": 5.0},
                     {**cols, "method": "kssc", "error_pct": 5.0 + gap}]
    return pd.DataFrame(rows)


def loop_rows(cell, variant, kssc_ours, ssc_ours, kssc_theirs, ssc_theirs):
    rows = []
    for trial, values in enumerate(zip(kssc_ours, ssc_ours, kssc_theirs, ssc_theirs,
                                       strict=True)):
        ko, so, kt, st = values
        rows.append({"experiment": "dvsn", "variant": variant,
                     **dict(zip(reconcile.CELLS["dvsn"], cell, strict=True)), "trial": trial,
                     "error_kssc_ours": ko, "error_ssc_ours": so, "error_kssc_theirs": kt,
                     "error_kssc_theirs_scored": 0.0 if np.isnan(kt) else kt,
                     "kssc_failed_theirs": bool(np.isnan(kt)), "error_ssc_theirs": st,
                     "cross_neighbours_ours": 0.5, "cross_neighbours_theirs": 0.5})
    return pd.DataFrame(rows)


def hand_example():
    committed = committed_rows({CELL_A: [10, 20, 10, 20], CELL_B: [0, 0, 0, 0]})
    loops = pd.concat([
        loop_rows(CELL_A, "code", [12] * 3, [2] * 3, [8, np.nan, 8], [3] * 3),
        loop_rows(CELL_A, "paper", [6] * 3, [2] * 3, [4] * 3, [3] * 3)], ignore_index=True)
    return committed, loops


def test_terms_hand_computed_and_adding_up_to_the_grid_gap():
    committed, loops = hand_example()
    table = reconcile.reconcile(loops, {"dvsn": committed}, n_boot=200).set_index("term")
    # grid 7.5, run cells 15, ours 10, theirs unscored (ours where ncutW threw) 19/3,
    # theirs scored 7/3, theirs at the paper's k 1.
    expected = {"cells": -7.5, "generator": 5.0, "implementation": 11 / 3, "scoring": 4.0,
                "settings": 4 / 3, "unreconciled": 1.0, "implementation_kssc": 8 / 3,
                "implementation_ssc": 1.0}
    for term, value in expected.items():
        assert table.loc[term, "points"] == pytest.approx(value), term
    assert table.loc[table["in_sum"], "points"].sum() == pytest.approx(7.5)
    assert table["gap_grid"].iloc[0] == pytest.approx(7.5)
    assert (table["n_cells"] == 1).all() and (table["n_trials"] == 3).all()
    assert (table["kssc_failed_theirs"] == 1).all() and (table["ssc_failed_theirs"] == 0).all()
    # Constant columns give zero-width intervals; the others contain their point.
    assert table.loc["unreconciled", "low"] == table.loc["unreconciled", "high"] == 1.0
    assert (table["low"] <= table["points"] + 1e-12).all()
    assert (table["points"] <= table["high"] + 1e-12).all()


def test_trial_matrix_keeps_only_trials_every_cell_has():
    frame = pd.DataFrame({"a": [1, 1, 2], "trial": [0, 1, 0], "v": [1.0, 2.0, 3.0]})
    matrix = reconcile.trial_matrix(frame, ["a"], [(2,), (1,)], "v")
    np.testing.assert_array_equal(matrix, [[3.0], [1.0]])


def test_interval_matches_scipy_bootstrap_in_one_cell():
    rng = np.random.default_rng(0)
    n = 100
    gaps = rng.normal(5.0, 2.0, n)
    committed = committed_rows({CELL_A: [0.0] * n})
    loops = pd.concat([loop_rows(CELL_A, "code", [9.0] * n, [5.0] * n, [9.0] * n, [5.0] * n),
                       loop_rows(CELL_A, "paper", [9.0] * n, [5.0] * n, 5.0 + gaps, [5.0] * n)],
                      ignore_index=True)
    table = reconcile.reconcile(loops, {"dvsn": committed}, n_boot=4000).set_index("term")
    reference = stats.bootstrap((gaps,), np.mean, n_resamples=4000, method="percentile",
                                random_state=1).confidence_interval
    assert table.loc["unreconciled", "points"] == pytest.approx(gaps.mean())
    assert table.loc["unreconciled", "low"] == pytest.approx(reference.low, abs=0.1)
    assert table.loc["unreconciled", "high"] == pytest.approx(reference.high, abs=0.1)


def test_markdown_block_replaced_between_markers():
    committed, loops = hand_example()
    table = reconcile.reconcile(loops, {"dvsn": committed}, n_boot=50)
    block = reconcile.markdown(table)
    assert "| sum of the steps (= the grid gap) | +7.50 | |" in block
    text = "intro\n<!-- reconcile:begin -->\nold\n<!-- reconcile:end -->\nend\n"
    replaced = reconcile.replace_block(text, block)
    assert "old" not in replaced and block in replaced and replaced.endswith("end\n")
    with pytest.raises(ValueError, match="reconcile:begin"):
        reconcile.replace_block("no markers", block)


def test_neighbour_search_term_beside_the_sum():
    committed, loops = hand_example()
    loops["error_kssc_ours_exact"] = loops["error_kssc_ours"]
    loops["error_kssc_ours_kdtree"] = loops["error_kssc_ours"] + [1.0, 2.0, 3.0] * 2
    loops["recall_kdtree"], loops["cross_neighbours_kdtree"] = 0.9, 0.6
    table = reconcile.reconcile(loops, {"dvsn": committed}, n_boot=50).set_index("term")
    assert table.loc["neighbour_search", "points"] == pytest.approx(2.0)
    assert not table.loc["neighbour_search", "in_sum"]
    assert table.loc[table["in_sum"], "points"].sum() == pytest.approx(7.5)
    assert "VLFeat's kd-tree 60.0 %" in reconcile.markdown(table.reset_index())


def test_cells_weigh_alike_whatever_their_trial_counts():
    committed = committed_rows({CELL_A: [10, 10], CELL_B: [0, 0]})
    loops = pd.concat([
        loop_rows(CELL_A, "code", [12] * 3, [2] * 3, [12] * 3, [2] * 3),  # gap 10, 3 trials
        loop_rows(CELL_A, "paper", [2] * 3, [2] * 3, [2] * 3, [2] * 3),
        loop_rows(CELL_B, "code", [4], [2], [4], [2]),  # gap 2, 1 trial (a stopped run)
        loop_rows(CELL_B, "paper", [2], [2], [2], [2])], ignore_index=True)
    table = reconcile.reconcile(loops, {"dvsn": committed}, n_boot=50).set_index("term")
    # ours on their data: (10 + 2) / 2 = 6, not (3 * 10 + 2) / 4
    assert table.loc["generator", "points"] == pytest.approx(5.0 - 6.0)
    assert table["n_trials"].iloc[0] == 4 and table["n_cells"].iloc[0] == 2


def test_settings_grid_row_beside_the_sum():
    committed, loops = hand_example()
    grid = pd.DataFrame({"error_ssc": [0.0, 10.0, 5.0], "error_kssc_code": [20.0, 30.0, 5.0],
                         "error_kssc_paper": [10.0, 30.0, 2.0]})
    table = reconcile.reconcile(loops, {"dvsn": committed}, n_boot=200, grid=grid)
    row = table.set_index("term").loc["settings_grid"]
    assert row["points"] == pytest.approx(13 / 3) and not row["in_sum"]
    assert row["low"] <= row["points"] <= row["high"]
    assert table.loc[table["in_sum"], "points"].sum() == pytest.approx(7.5)
    assert "the gap is +13.33 at the code's k and +9.00 at the paper text's" in \
        reconcile.markdown(table)
