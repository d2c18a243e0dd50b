"""Extended Yale B, Elhamifar and Vidal's grouped protocol, with the face setting chosen on a
group that is not scored.

The 38 subjects, numbered 1..38 in file order (yaleB01..yaleB13, yaleB15..yaleB39), form
four fixed groups (1-10, 11-20, 21-30, 31-38). A task is one combination of n subjects
within a group, for each n of `experiment.n_subjects` that the group can hold; a group's
combinations are all of them, or `experiment.max_combinations[n]` drawn without
replacement with `numpy.random.default_rng([combination_seed, group, n])` when there are
more (`subject_combinations`). Every task takes all non-.bad images of its subjects at
48 x 42 pixels and fits every method the experiment names (`experiment.grid`, the k-SSC
settings to choose from, and `experiment.compare`).

Selection (`choose_setting`): the grid setting with the lowest error on the selection
group (`experiment.selection_group`), averaged first over its combinations per n, then over
n (so every n weighs the same), is the chosen one (method `kssc_selected`); only the other
groups score it (docs/protocol.md 7.2).
"""

import itertools

import numpy as np
import pandas as pd

from kssc.datasets import yaleb_subject_images
from kssc.datasets.yaleb import SUBJECTS

from ._bootstrap import bootstrap_mean, bootstrap_paired_difference
from ._trial import Experiment, fit_methods

SELECTED = "kssc_selected"


def subject_combinations(group, n_subjects, cap, seed, group_index):
    """The combinations of `n_subjects` among `group` (subject numbers 1..38) a group runs:
    all of them, or `cap` drawn at random (sorted) when there are more; [] if n > len(group)."""
    every = list(itertools.combinations(sorted(group), n_subjects))
    if cap is None or len(every) <= cap:
        return every
    rng = np.random.default_rng([int(seed), int(group_index), int(n_subjects)])
    return [every[i] for i in sorted(rng.choice(len(every), size=cap, replace=False))]


def tasks(exp, data_dir=None):
    caps = {int(n): cap for n, cap in (exp.get("max_combinations") or {}).items()}
    out = []
    for g, group in enumerate(exp["groups"], start=1):
        for n in exp["n_subjects"]:
            for combo in subject_combinations(group, int(n), caps.get(int(n)),
                                              exp["combination_seed"], g):
                cell = {"group": g, "n_subjects": int(n), "subjects": "-".join(map(str, combo))}
                out.extend((cell, t) for t in range(exp["trials"]))
    return out


def trial(context, cell, trial, seed):
    exp = context["experiment"]
    numbers = [SUBJECTS[int(s) - 1] for s in cell["subjects"].split("-")]
    blocks = [yaleb_subject_images(s, size=tuple(exp["size"]), include_bad=False,
                                   n_per_subject=None, data_dir=context["data_dir"])
              for s in numbers]
    X = np.vstack(blocks)
    y = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    run = {*exp["grid"], *exp["compare"]}
    rows = fit_methods(context, X, y, seed, skip=[m for m in context["methods"] if m not in run])
    for row in rows:
        row.update(n_samples=len(y), ambient_dim=X.shape[1])
    return rows


def check(exp):
    if not exp.get("grid"):
        raise ValueError("experiment.grid must name at least one k-SSC setting (a method).")
    groups = range(1, len(exp["groups"]) + 1)
    if exp["selection_group"] not in groups:
        raise ValueError(f"experiment.selection_group={exp['selection_group']} is not one of "
                         f"the groups {list(groups)}.")
    flat = [s for group in exp["groups"] for s in group]
    if len(set(flat)) != len(flat) or not set(flat) <= set(range(1, len(SUBJECTS) + 1)):
        raise ValueError("experiment.groups must be disjoint subject numbers in "
                         f"1..{len(SUBJECTS)}.")


def choose_setting(frame, grid, selection_group):
    """The grid setting with the lowest mean error on the selection group (mean over the
    combinations of each n, then over n; a failed fit scores 100 %); ties: first listed."""
    part = frame[(frame["group"] == selection_group) & frame["method"].isin(grid)]
    scored = part.assign(error_pct=part["error_pct"].fillna(100.0))
    per_n = scored.groupby(["method", "n_subjects"])["error_pct"].mean()
    means = per_n.groupby(level="method").mean().reindex(list(grid))
    return means.idxmin(), means


def summary(frame, exp):
    """Per scope (the selection group; the scored groups) and number of subjects: the chosen
    setting (`kssc_selected`), every compared method and every grid setting."""
    chosen, means = choose_setting(frame, exp["grid"], exp["selection_group"])
    selected = frame[frame["method"] == chosen].assign(method=SELECTED)
    frame = pd.concat([selected, frame], ignore_index=True)
    frame = frame.assign(scope=np.where(frame["group"] == exp["selection_group"],
                                        "selection group", "scored groups"))
    # One error per combination (mean over its trials), failed fits scored 100 %.
    per_combination = (frame.assign(error_pct=frame["error_pct"].fillna(100.0))
                       .groupby(["scope", "n_subjects", "method", "subjects"], sort=False)
                       ["error_pct"].mean())
    ssc = next((m for m in exp["compare"] if m.startswith("ssc")), None)
    rows = []
    for (scope, n, method), part in frame.groupby(["scope", "n_subjects", "method"], sort=False):
        err = part["error_pct"].fillna(100.0)
        mine = per_combination.loc[(scope, n, method)]
        interval = bootstrap_mean(mine.to_numpy())
        paired = {}
        if ssc not in (None, method) and (scope, n, ssc) in per_combination.index.droplevel(3):
            theirs = per_combination.loc[(scope, n, ssc)].reindex(mine.index)
            diff = bootstrap_paired_difference(mine.to_numpy(), theirs.to_numpy())
            paired = {"error_pct_vs_ssc_mean": diff["mean"], "error_pct_vs_ssc_low": diff["low"],
                      "error_pct_vs_ssc_high": diff["high"]}
        rows.append({"scope": scope, "n_subjects": n, "method": method,
                     "chosen": chosen if method == SELECTED else "",
                     "selection_error_pct_mean": means.get(method, means.get(chosen))
                     if method in (SELECTED, *exp["grid"]) else np.nan,
                     "n_groups": part["group"].nunique(), "n_trials": len(part),
                     "n_failed": int(part["error_pct"].isna().sum()),
                     "error_pct_mean": err.mean(), "error_pct_ci_low": interval["low"],
                     "error_pct_ci_high": interval["high"], "error_pct_median": err.median(),
                     "error_pct_std": err.std(ddof=1),
                     "time_fit_s_mean": part["time_fit_s"].mean(), **paired})
    table = pd.DataFrame(rows)
    order = {"selection group": 1, "scored groups": 0}
    return table.sort_values(["scope", "n_subjects"], key=lambda c: c.map(order)
                             if c.name == "scope" else c, kind="stable").reset_index(drop=True)


EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summary, check=check)
