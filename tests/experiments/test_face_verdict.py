"""The face table's verdict (experiments/publish/faces.py): the paper's figure carries its own
sampling error, and "not reproducible" needs the two intervals apart."""

import numpy as np
import pandas as pd
import pytest

from experiments.publish import faces

PAPER = {"ssc": {"error_pct_mean": 28.1, "error_pct_std": 24.5}}


def frame(theirs, ours, subjects=None):
    rows = []
    for trial, (t, o) in enumerate(zip(theirs, ours, strict=True)):
        drawn = subjects[trial] if subjects else f"{trial + 1}-20-30"
        for name in faces.METHODS:
            common = {"trial": trial, "method": name, "subjects": drawn}
            rows += [{**common, "matrix": "octave_load", "error_paper_code": t, "error_ours": o},
                     {**common, "matrix": "python_load", "error_paper_code": np.nan,
                      "error_ours": o},
                     {**common, "matrix": "python_load_48x42", "error_paper_code": np.nan,
                      "error_ours": o + 1.0}]
    return pd.DataFrame(rows)


def test_paper_interval_is_its_mean_with_its_own_standard_error():
    interval = faces.paper_interval(28.1, 24.5)
    assert interval["low"] == pytest.approx(28.1 - 1.959964 * 24.5 / np.sqrt(50))
    assert interval["high"] == pytest.approx(28.1 + 1.959964 * 24.5 / np.sqrt(50))


def test_summary_arithmetic():
    ours = [10.0, 12.0, 14.0, 16.0]
    row = faces.summarise(frame(ours, ours), PAPER).set_index("method").loc["ssc"]
    assert row["theirs_mean"] == row["ours_mean"] == 13.0 and row["theirs_n"] == 4
    assert row["diff_mean"] == 0.0 and row["diff_low"] == row["diff_high"] == 0.0
    assert row["ours_48x42_mean"] == 14.0 and row["paired_n"] == 4
    table = faces.markdown_table(faces.summarise(frame(ours, ours), PAPER))
    assert table.count("\n") == 1 + len(faces.METHODS)
    assert "| ssc | 28.1 [21.3, 34.9] | 13.0 [" in table


def result(mean, half, n=50):
    return {"n": n, "mean": mean, "low": mean - half, "high": mean + half}


def test_not_reproducible_only_when_the_intervals_are_apart():
    paper = faces.paper_interval(58.1, 7.3)                       # TSC: [56.1, 60.1]
    same = result(0.0, 0.2)
    apart = faces.verdict(paper, result(63.5, 0.9), result(63.5, 0.8), same)
    assert apart.startswith("the released code gives our numbers (paired difference over 50")
    assert "not reproducible from the released code" in apart and "are apart" in apart
    # SSC's case: 17.4 [11.7, 23.5] against 28.1 +- 6.8: overlapping, p about 0.02.
    marginal = faces.verdict(faces.paper_interval(28.1, 24.5), result(17.4, 5.9),
                             result(14.1, 4.8), result(3.3, 3.1))
    assert "differs from ours by +3.3" in marginal and "not reproducible" not in marginal
    assert "a marginal gap" in marginal and "p = 0.02" in marginal
    # SSSC's: 54.3 [50.2, 58.8] against 59.5 +- 4.8: no gap shown.
    shown = faces.verdict(faces.paper_interval(59.5, 17.2), result(54.3, 4.3),
                          result(49.9, 2.3), result(4.5, 3.6))
    assert "no gap shown" in shown and "not reproducible" not in shown


def test_few_draws_of_their_code_are_read_through_ours():
    # GSC: their code on 4 draws, identical to ours there; the verdict uses our 50 draws.
    paper = faces.paper_interval(30.6, 15.6)
    text = faces.verdict(paper, result(63.0, 1.8, n=4), result(62.0, 1.0), result(0.1, 0.2, n=4))
    assert "read through ours over 50 draws (its own rests on 4 <" in text
    assert "not reproducible" in text
    empty = {"n": 0, "mean": np.nan, "low": np.nan, "high": np.nan}
    assert faces.verdict(paper, empty, empty, empty) == "not run"


def test_zero_image_draws_carry_the_authors_kssc_minus_ssc():
    # Their SSC at 64 % on the draws holding yaleB15, kSSC = SSC elsewhere.
    n = 12
    subjects = [("15-2-3" if t in (2, 7) else f"{t + 1}-20-30") for t in range(n)]
    rows = frame([10.0] * n, [10.0] * n, subjects)
    zero = rows["trial"].isin([2, 7]) & (rows["method"] == "ssc") & (
        rows["matrix"] == "octave_load")
    rows.loc[zero, "error_paper_code"] = 64.0
    every, rest, draws = faces.kssc_minus_ssc(rows)
    assert draws == [2, 7] and rest["mean"] == 0.0 and rest["n"] == 10
    assert every["mean"] == pytest.approx(-2 * 54.0 / n) and every["n"] == n
    assert "trials 2, 7" in faces.zero_image_finding(rows)


def test_rerun_agreement_counts_both_committed_versions():
    rows = frame([10.0, 12.0, 14.0], [10.0, 12.0, 14.0])
    rows["error_committed"] = rows["error_ours"]
    ours = rows["matrix"] == "python_load"
    rows.loc[ours & (rows["trial"] == 1) & (rows["method"] == "ssc"), "error_committed"] = 13.0
    yale = rows[ours][["trial", "method", "error_ours"]].rename(columns={"error_ours": "error_pct"})
    text = faces.rerun_agreement(rows, yale.assign(variant="faithful"))
    assert "errors on 15 of the 15 (draw, method) pairs" in text
    assert "on 14 of 15, the others differing by at most 1.00 points" in text
