"""The reconciliation of the synthetic gaps (results/crosscheck_reconcile.csv, written by
`python -m crosscheck.reconcile`), rendered for docs/crosscheck.md and REPORT.md: each step
with its interval, and a reading that calls a gap reconciled only where something is left to
reconcile.

"Reconciled" needs two things of the authors' own loop at the paper text's settings: what is
left of the gap (`unreconciled`) has its interval within `BAND` points of the paper's match,
and the two methods are not both at the floor there (mean errors <= `claims.FLOOR_PCT`): a
match of two methods that both cluster perfectly says nothing about the gap.
"""

import pandas as pd

from ..claims import FLOOR_PCT, Verdict, decide_within

BAND = (-2.0, 2.0)  # points: the tolerance of the `tracks` claims (conf/experiment/*.yaml)

TERM_TEXT = {
    "cells": "the cells run in Octave instead of the whole committed grid",
    "generator": "our generator -> their generator (our KSSC and SSC on both)",
    "implementation": "our KSSC/SSC -> their kssc_relaxed_par/ssc_relaxed + ncutW, same data",
    "implementation_kssc": "  of which k-SSC (our error - theirs)",
    "implementation_ssc": "  of which SSC (their error - ours)",
    "scoring": "their dvsn loop scores a k-SSC whose ncutW threw as 0 % (D27)",
    "settings": "their code's settings -> the paper text's",
    "unreconciled": "left: their loop at the paper text's settings vs the paper's match (0)",
    "neighbour_search": "beside the sum: VLFeat's kd-tree instead of exact neighbours (ours)",
    "settings_grid": "beside the sum: the paper text's k on the whole grid (ours, 1 trial/cell)",
}


def _header(experiment, group, first, part):
    text = (f"**synthetic_{experiment}, {group}**: committed grid gap {first.gap_grid:+.2f} "
            f"points; {int(first.n_cells)} cells, {int(first.n_trials)} trials in all "
            f"({first.n_trials / first.n_cells:.1f} per cell) run through both; our KSSC/SSC at "
            f"the paper text's settings on the same data: gap {first.gap_ours_paper:+.2f}. "
            f"Their k-SSC's ncutW threw in {first.kssc_failed_theirs} fits, their SSC's in "
            f"{first.ssc_failed_theirs}; cross-subspace neighbours (code settings): ours "
            f"{100 * first.cross_neighbours_ours:.1f} %, theirs "
            f"{100 * first.cross_neighbours_theirs:.1f} %")
    if "recall_kdtree" in part and pd.notna(first.recall_kdtree):
        text += (f", VLFeat's kd-tree {100 * first.cross_neighbours_kdtree:.1f} % (recall of "
                 f"the exact neighbours {100 * first.recall_kdtree:.1f} %)")
    text += "."
    if "grid_gap_paper_k" in part and pd.notna(first.grid_gap_paper_k):
        text += (f" On the whole grid (ours, trial 0 of each cell) the gap is "
                 f"{first.grid_gap_code_k:+.2f} at the code's k and {first.grid_gap_paper_k:+.2f} "
                 f"at the paper text's.")
    return text


def markdown(table, loops=None):
    """One Markdown table per (experiment, group): each term, its points and its interval;
    with the authors' loops' rows (`loops`), the group's `reading` under it."""
    lines = []
    for (experiment, group), part in table.groupby(["experiment", "group"], sort=False):
        lines += [_header(experiment, group, part.iloc[0], part), "",
                  "| step | points | 95 % interval |", "|---|---|---|"]
        for row in part.itertuples():
            lines.append(f"| {TERM_TEXT[row.term]} | {row.points:+.2f} | "
                         f"[{row.low:+.2f}, {row.high:+.2f}] |")
        total = part[part["in_sum"]]["points"].sum()
        lines += [f"| sum of the steps (= the grid gap) | {total:+.2f} | |", ""]
        if loops is not None:
            lines += [reading(part, loops), ""]
    return "\n".join(lines)


def _paper_rows(loops, experiment, group):
    """The authors' loop rows at the paper text's settings for one reconcile group."""
    rows = loops[(loops["experiment"] == experiment) & (loops["variant"] == "paper")]
    if group.startswith("noise "):
        rows = rows[rows["noise"].astype(float) == float(group.removeprefix("noise "))]
    return rows


def reading(part, loops):
    """One sentence on one (experiment, group) of the reconcile table: reconciled or not."""
    experiment, group = part["experiment"].iloc[0], part["group"].iloc[0]
    left = part[part["term"] == "unreconciled"].iloc[0]
    rows = _paper_rows(loops, experiment, group)
    kssc, ssc = rows["error_kssc_theirs"].mean(), rows["error_ssc_theirs"].mean()
    at = (f"their loop at the paper text's settings: k-SSC {kssc:.2f} %, SSC {ssc:.2f} % over "
          f"{len(rows)} trials, {left.points:+.2f} [{left.low:+.2f}, {left.high:+.2f}] points "
          f"left")
    if kssc <= FLOOR_PCT and ssc <= FLOOR_PCT:
        return (f"_Reading: no reconciliation shown: {at}, but both methods are at the floor "
                f"(<= {FLOOR_PCT:g} %), where no gap can show._")
    verdict = decide_within(left.low, left.high, BAND)
    word = {Verdict.HOLDS: "reconciled", Verdict.FAILS: "not reconciled",
            Verdict.INCONCLUSIVE: "undecided"}[verdict]
    return (f"_Reading: {word}: {at}, against a band of [{BAND[0]:+g}, {BAND[1]:+g}] points "
            f"around the paper's match, the two methods not both at the floor._")
