"""The face table through the authors' code, read from results/crosscheck_faces.csv: per
method the paper's figure with its own sampling error, the released code's, ours, and a
verdict that claims no more than the intervals give (docs/crosscheck.md and REPORT.md both
render it from here; `crosscheck.faces` writes the CSV).

The paper reports each method's mean and standard deviation over its 50 draws
(Table:face_results), so its mean has a standard error std / sqrt(50): its 95 % interval is
mean +- 1.96 std / sqrt(50). "Not reproducible from the released code" is said only where
that interval and the released code's are apart; where they overlap, the two-sided p of the
difference of the means (normal approximation, each standard error read from its interval)
says whether a gap is marginal or not shown.
"""

import math

import numpy as np
import pandas as pd
from scipy.stats import norm

from .._bootstrap import CONFIDENCE, bootstrap_mean, bootstrap_paired_difference
from ..claims import MIN_UNITS
from . import feeds

METHODS = ("ssc", "gsc", "tsc", "sssc", "kssc")  # Table:face_results's row order
PAPER_DRAWS = 50        # "This test was repeated 50 times with new random subjects each time."
ZERO_IMAGE_SUBJECT = 15  # yaleB15 holds an all-zero image (docs/crosscheck.md, the face table)
_Z = norm.ppf(0.5 + CONFIDENCE / 2)


def paper_rows():
    """{method: the paper's row of Table:face_results} from conf/experiment/yale.yaml."""
    return {row["method"]: row for row in feeds.feeds("yale")["table"]["paper"]}


def paper_interval(mean, std, n=PAPER_DRAWS):
    """The paper's mean with its 95 % interval from its own spread over its n draws."""
    half = _Z * std / math.sqrt(n)
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": n}


def _apart(a, b):
    return a["high"] < b["low"] or b["high"] < a["low"]


def _p_value(a, b):
    """Two-sided p of mean(a) = mean(b) from the two intervals (normal approximation)."""
    se = math.hypot((a["high"] - a["low"]) / (2 * _Z), (b["high"] - b["low"]) / (2 * _Z))
    return 2 * norm.sf(abs(a["mean"] - b["mean"]) / se) if se > 0 else 0.0


def _bracket(r):
    return f"[{r['low']:.1f}, {r['high']:.1f}]"


def verdict(paper, theirs, ours, diff):
    """The row's reading. `paper`: `paper_interval`; `theirs`, `ours`: bootstrap means over
    draws of the released code's errors and ours; `diff`: their paired difference."""
    if diff["n"] < 2:
        return "not run"
    where = f"paired difference over {diff['n']} draws"
    same = diff["low"] <= 0.0 <= diff["high"]
    code = (f"the released code gives our numbers ({where})" if same else
            f"the released code differs from ours by {diff['mean']:+.1f} points ({where})")
    released, whose = theirs, "its interval"
    if theirs["n"] < MIN_UNITS and same:
        released = ours
        whose = (f"its interval read through ours over {ours['n']} draws (its own rests on "
                 f"{theirs['n']} < MIN_UNITS = {MIN_UNITS})")
    intervals = (f"{whose} {_bracket(released)}, the paper's {_bracket(paper)} "
                 f"(mean +- {_Z:.2f} std / sqrt({paper['n']}))")
    if _apart(released, paper):
        return f"{code}; not reproducible from the released code: {intervals} are apart"
    p = _p_value(released, paper)
    reading = "a marginal gap" if p < 1 - CONFIDENCE else "no gap shown"
    return f"{code}; {reading} to the paper: {intervals} overlap, p = {p:.2f}"


def summarise(frame, paper=None):
    """Per method: the paper's interval, their code on their loading (`theirs`), ours on the
    same draws (`paired`) and on every draw (`ours`), at 48 x 42, the paired difference
    theirs - ours, and the verdict. `paper`: {method: row with error_pct_mean, _std}
    (default: conf/experiment/yale.yaml's)."""
    paper = paper_rows() if paper is None else paper
    rows = []
    for name in METHODS:
        theirs = frame[(frame["matrix"] == "octave_load") & (frame["method"] == name)]
        theirs = theirs.set_index("trial")["error_paper_code"].dropna()
        ours = frame[(frame["matrix"] == "python_load") & (frame["method"] == name)]
        ours = ours.set_index("trial")["error_ours"]
        small = frame[(frame["matrix"] == "python_load_48x42") & (frame["method"] == name)]
        common = theirs.index.intersection(ours.index)
        stated = paper.get(name, {})
        p = paper_interval(stated.get("error_pct_mean", np.nan),
                           stated.get("error_pct_std", np.nan))
        parts = {"paper": p, "theirs": bootstrap_mean(theirs), "ours": bootstrap_mean(ours),
                 "paired": bootstrap_mean(ours[common]),
                 "diff": bootstrap_paired_difference(theirs[common].to_numpy(),
                                                     ours[common].to_numpy()),
                 "ours_48x42": bootstrap_mean(small["error_ours"])}
        row = {"method": name}
        for side, r in parts.items():
            row.update({f"{side}_{key}": r[key] for key in ("n", "mean", "low", "high")})
        row["verdict"] = verdict(p, parts["theirs"], parts["ours"], parts["diff"])
        rows.append(row)
    return pd.DataFrame(rows)


def markdown_table(summary):
    """The side-by-side table from `summarise`'s frame."""
    def interval(row, side):
        n, mean = row[f"{side}_n"], row[f"{side}_mean"]
        if n == 0:
            return "not run"
        return f"{mean:.1f} [{row[f'{side}_low']:.1f}, {row[f'{side}_high']:.1f}] (n={n})"

    lines = ["| method | paper [mean +- 1.96 std/sqrt(50)] | authors' code in Octave | ours, "
             "the same draws | ours, every draw | theirs - ours (paired) | ours at 48 x 42 | "
             "verdict |", "|---|---|---|---|---|---|---|---|"]
    for row in summary.to_dict("records"):
        lines.append(f"| {row['method']} | {row['paper_mean']:.1f} "
                     f"[{row['paper_low']:.1f}, {row['paper_high']:.1f}] | "
                     f"{interval(row, 'theirs')} | {interval(row, 'paired')} | "
                     f"{interval(row, 'ours')} | {interval(row, 'diff')} | "
                     f"{interval(row, 'ours_48x42')} | {row['verdict']} |")
    return "\n".join(lines)


def zero_image_draws(frame):
    """The draws whose subjects include yaleB15 (its all-zero image)."""
    subjects = frame.groupby("trial")["subjects"].first().astype(str).str.split("-")
    return sorted(t for t, s in subjects.items() if str(ZERO_IMAGE_SUBJECT) in s)


def kssc_minus_ssc(frame):
    """With the authors' code (their loading), k-SSC minus SSC paired over the draws both ran:
    over all of them, and without the draws holding yaleB15's all-zero image.
    Returns (all, without, the zero-image draws)."""
    theirs = frame[frame["matrix"] == "octave_load"].pivot_table(
        index="trial", columns="method", values="error_paper_code")[["kssc", "ssc"]].dropna()
    zero = [t for t in zero_image_draws(frame) if t in theirs.index]
    rest = theirs.drop(index=zero)
    return (bootstrap_paired_difference(theirs["kssc"], theirs["ssc"]),
            bootstrap_paired_difference(rest["kssc"], rest["ssc"]), zero)


def _span(values):
    low, high = f"{values.min():.1f}", f"{values.max():.1f}"
    return low if low == high else f"{low} to {high}"


def zero_image_finding(frame):
    """One sentence: the authors' k-SSC minus their SSC, with and without yaleB15's draws."""
    every, rest, zero = kssc_minus_ssc(frame)
    ssc = frame[(frame["matrix"] == "octave_load") & (frame["method"] == "ssc")
                & frame["trial"].isin(zero)]["error_paper_code"]
    return (f"With the authors' code on our {every['n']} draws, k-SSC minus SSC is "
            f"{every['mean']:+.2f} [{every['low']:+.2f}, {every['high']:+.2f}] points (paired "
            f"over draws); the {len(zero)} draws holding yaleB{ZERO_IMAGE_SUBJECT}'s all-zero "
            f"image (trials {', '.join(map(str, zero))}), where their `normalize` makes a NaN "
            f"column and their SSC scores {_span(ssc)} %, carry it: "
            f"without them it is {rest['mean']:+.2f} [{rest['low']:+.2f}, {rest['high']:+.2f}] "
            f"over {rest['n']} draws.")


def rerun_agreement(frame, yale):
    """One sentence: our rerun on our matrix (python_load) against the committed yale.csv
    (`yale`, its faithful rows) and against the yale.csv of the time of the run (the CSV's
    `error_committed`)."""
    ours = frame[frame["matrix"] == "python_load"]
    committed = yale[yale["variant"] == "faithful"][["trial", "method", "error_pct"]]
    now = ours.merge(committed, on=["trial", "method"])
    same_now = int(((now["error_ours"] - now["error_pct"]).abs() < 1e-9).sum())
    then = (ours["error_ours"] - ours["error_committed"]).abs()
    same_then = int((then < 1e-9).sum())
    return (f"Our rerun on our matrix gives the committed `yale.csv`'s errors on {same_now} of "
            f"the {len(now)} (draw, method) pairs; against the `yale.csv` of the time of the run "
            f"(column `error_committed`) on {same_then} of {len(ours)}, the others differing by "
            f"at most {then.max():.2f} points.")
