"""Hopkins 155 with honest selection: k-SSC's setting chosen by grouped cross-validation.

Every method the experiment names (each k-SSC setting of the grid, `experiment.grid`, and
the methods compared with it, `experiment.compare`) is fitted once on every sequence; other
configured methods are skipped (a profile can shrink the grid). The sequences are then split
into folds (`hopkins_folds`): a 3-motion video and its `_g12` / `_g13` / `_g23` subsets form
one group and stay in one fold, and the groups of each stratum (category: checkerboard,
traffic, articulated; times 3-motion group or lone 2-motion sequence) are dealt to the folds
in turn. For each fold the grid setting with the lowest mean error on the *other* folds is
chosen and scored on this fold (`select_out_of_fold`). Because a sequence's fit does not
depend on which setting is chosen, this equals rerunning the whole search inside each
training fold (docs/protocol.md 7.1). The summary reports the out-of-fold errors (method
`kssc_cv`) beside SSC and every grid setting on the same sequences (the latter in-sample:
each is one candidate, not a validated figure), and which setting each fold chose. A failed
fit scores 100 % in the selection and in every mean (and is counted).
"""

import re

import numpy as np
import pandas as pd

from kssc.datasets import load_hopkins_sequence
from kssc.datasets.hopkins import hopkins_metadata

from ._bootstrap import bootstrap_mean, bootstrap_paired_difference
from ._hopkins_tasks import sequence_tasks
from ._trial import Experiment, fit_methods

SELECTED = "kssc_cv"
_SUBSET = re.compile(r"_g(12|13|23)$")


def video_of(name):
    """The video a sequence comes from: its name without a `_g12` / `_g13` / `_g23` suffix."""
    return _SUBSET.sub("", name)


def hopkins_folds(names, n_folds, seed):
    """{sequence: fold} with every video's sequences in one fold, strata dealt evenly.

    A stratum is a category (checkerboard, traffic, articulated) and whether the video has
    three motions (it then brings four sequences) or is a lone 2-motion sequence. Within a
    stratum the videos are shuffled with `numpy.random.default_rng(seed)` and dealt to the
    folds in turn, the count continuing from one stratum to the next, so that fold sizes
    differ by at most one video per stratum.
    """
    info = hopkins_metadata()
    videos = {}
    for name in names:
        videos.setdefault(video_of(name), []).append(name)
    if n_folds < 2 or n_folds > len(videos):
        raise ValueError(f"n_folds={n_folds} must be >= 2 and <= the {len(videos)} videos.")
    strata = {}
    for video, members in sorted(videos.items()):
        three = any(info[m]["n_motions"] == 3 for m in members)
        strata.setdefault((info[members[0]]["category"], three), []).append(video)
    rng = np.random.default_rng(seed)
    folds, turn = {}, 0
    for key in sorted(strata):
        for video in rng.permutation(strata[key]):
            for name in videos[video]:
                folds[name] = turn % n_folds
            turn += 1
    return {name: folds[name] for name in names}


def select_out_of_fold(errors, folds):
    """Per fold, the grid setting with the lowest mean error on the other folds.

    errors: DataFrame indexed by sequence, one column per grid setting (mean error % over
    trials; NaN for a failed fit, counted as 100 %); folds: {sequence: fold}. Ties go to the
    setting listed first. Returns (choices, out_of_fold): a DataFrame with fold, chosen,
    train_error_pct_mean, n_train, n_test; and a Series (sequence -> the chosen setting's
    error on its held-out fold).
    """
    scored = errors.fillna(100.0)
    fold_of = pd.Series(folds).reindex(scored.index)
    if fold_of.isna().any():
        raise ValueError(f"sequences without a fold: {list(fold_of[fold_of.isna()].index)}")
    choices, held_out = [], []
    for fold in sorted(fold_of.unique()):
        test = fold_of == fold
        train_means = scored[~test].mean()
        chosen = train_means.idxmin()
        choices.append({"fold": int(fold), "chosen": chosen,
                        "train_error_pct_mean": float(train_means[chosen]),
                        "n_train": int((~test).sum()), "n_test": int(test.sum())})
        held_out.append(scored.loc[test, chosen])
    return pd.DataFrame(choices), pd.concat(held_out).reindex(scored.index)


def trial(context, cell, trial, seed):
    X, y = load_hopkins_sequence(cell["sequence"], data_dir=context["data_dir"])
    info = hopkins_metadata()[cell["sequence"]]
    exp = context["experiment"]
    run = {*exp["grid"], *exp["compare"]}
    rows = fit_methods(context, X, y, seed, skip=[m for m in context["methods"] if m not in run])
    for row in rows:
        row.update(n_samples=len(y), n_motions=info["n_motions"], category=info["category"])
    return rows


def check(exp):
    if not exp.get("grid"):
        raise ValueError("experiment.grid must name at least one k-SSC setting (a method).")
    if SELECTED in (*exp["grid"], *exp["compare"]):
        raise ValueError(f"{SELECTED!r} names the selected setting; no method may be called so.")


def summary(frame, exp):
    """Fold rows (the chosen setting, its training and held-out means), then per group
    (2 motions, 3 motions, all) the out-of-fold k-SSC, SSC and every grid setting."""
    per_sequence = frame.groupby(["sequence", "method"], sort=False)
    errors = per_sequence["error_pct"].mean().unstack("method")
    times = per_sequence["time_fit_s"].mean().unstack("method")
    info = frame.drop_duplicates("sequence").set_index("sequence")
    folds = hopkins_folds(list(errors.index), exp["n_folds"], exp["fold_seed"])
    choices, out_of_fold = select_out_of_fold(errors[list(exp["grid"])], folds)
    chosen_of = choices.set_index("fold")["chosen"]
    fold_of = pd.Series(folds)
    errors[SELECTED] = out_of_fold
    times[SELECTED] = [times.loc[s, chosen_of[fold_of[s]]] for s in times.index]
    others = [m for m in errors.columns if m not in (SELECTED, *exp["grid"])]
    rows = []
    for choice in choices.itertuples():
        test = fold_of[fold_of == choice.fold].index
        rows.append({"scope": f"fold {choice.fold}", "method": SELECTED, "chosen": choice.chosen,
                     "train_error_pct_mean": choice.train_error_pct_mean,
                     "n_sequences": len(test), **_stats(errors.loc[test, SELECTED],
                                                        times.loc[test, SELECTED])})
    groups = [("2 motions", info["n_motions"] == 2), ("3 motions", info["n_motions"] == 3),
              ("all", info["n_motions"].notna())]
    ssc = next((m for m in others if m.startswith("ssc")), None)
    for scope, mask in groups:
        names = mask[mask].index
        for method in [SELECTED, *others, *exp["grid"]]:
            reference = errors.loc[names, ssc] if ssc not in (None, method) else None
            rows.append({"scope": scope, "method": method,
                         "chosen": "per fold" if method == SELECTED else "",
                         "n_sequences": len(names),
                         **_stats(errors.loc[names, method], times.loc[names, method],
                                  reference)})
    return pd.DataFrame(rows)


def _stats(errors, times, ssc=None):
    """Error statistics with a failed fit (NaN) scored as 100 %, as the selection scores it:
    the mean's 95 % bootstrap interval over sequences and, given SSC's errors on the same
    sequences, the paired difference to them."""
    scored = errors.fillna(100.0)
    interval = bootstrap_mean(scored.to_numpy())
    out = {"n_failed": int(errors.isna().sum()), "error_pct_mean": scored.mean(),
           "error_pct_ci_low": interval["low"], "error_pct_ci_high": interval["high"],
           "error_pct_median": scored.median(), "time_fit_s_mean": times.mean()}
    if ssc is not None:
        diff = bootstrap_paired_difference(scored.to_numpy(), ssc.fillna(100.0).to_numpy())
        out.update(error_pct_vs_ssc_mean=diff["mean"], error_pct_vs_ssc_low=diff["low"],
                   error_pct_vs_ssc_high=diff["high"])
    return out


EXPERIMENT = Experiment(tasks=sequence_tasks, trial=trial, summary=summary, check=check)
