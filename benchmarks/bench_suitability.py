"""The measurements behind the suitability rules of `kssc.utils._suitability` and the choice
of the number of clusters (`kssc.spectral._clustering.n_clusters_by_relative_gap`,
SPECTRUM_FLOOR, CLEAR_GAP), on a small subset of the real-data panel's tasks
(experiments/panel.py's loaders; conf/experiment/panel.yaml): two Yale B combinations of 2
and 5 (and, for k, 10) subjects, four Hopkins 155 sequences, three TIR draws, the four
scikit-learn tables and the synthetic unions, each with seed 0.

Run: `python -m benchmarks.bench_suitability --part {preprocessing,units,scale,k,centroid}`
(with KSSC_DATA_DIR set to the data folder).

- preprocessing: the generic preset's error (%) with the data as given, scaled per feature
  by the standard deviation or the largest |value| (no centring), centred, standardised
  (PREPROCESSING_RULE).
- units: the effective number of features over their number (MIXED_UNITS_SHARE).
- scale: the error of presets "faces", "motion" and "generic" on three 3-dimensional
  subspaces in R^20 multiplied by 10^e (SCALE_RANGE).
- k: the number of clusters chosen with n_clusters=None against the true one, for KSSC
  (generic preset) by the old rule (the largest eigen-gap) and by the relative eigen-gap,
  and for AutoKSSC by its two rules from one fit (its candidates each choose their k: the
  one the silhouette prefers, AutoKSSC's choice, and the one whose choice has the largest
  relative eigen-gap, AutoSC's rule), with the confidence and whether the fit warns; the
  rule and the CLEAR_GAP thresholds chosen by leave-one-family-out; writes
  results/bench_suitability_k.csv (sidecar beside it).
- centroid: AutoKSSC's choice (its candidates' fits, the silhouette) against k-means with
  as many clusters: both errors, the chosen labels' subspace silhouette and k-means'
  centroid silhouette (CENTROID_MARGIN).
Takes minutes per part on 2 loaded cores (centroid the longest: every preset on every task).
"""

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from omegaconf import OmegaConf
from sklearn.cluster import KMeans

from benchmarks.bench_kssc import REPO
from experiments.panel import load_task, tasks
from kssc import KSSC, clustering_error
from kssc.auto import AutoKSSC, best_candidate, candidate_criteria
from kssc.datasets import make_subspaces
from kssc.presets import preset_params
from kssc.spectral._clustering import (
    CLEAR_GAP,
    SPECTRUM_FLOOR,
    n_clusters_by_relative_gap,
    n_clusters_warning,
    relative_eigengap,
)
from kssc.utils._suitability import centroid_silhouette, effective_features

EXP = OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "experiment" / "panel.yaml"))[
    "experiment"]
CAPS = {"yale": 2, "hopkins155": 4, "tir": 3}


def panel_subset(yale=("yale_2", "yale_5")):
    """The tasks measured: the first CAPS[family] of each Yale B subject count in `yale`, of
    Hopkins 155 and of TIR, and every other task."""
    seen, out = {}, []
    for cell, _ in tasks(EXP, os.environ.get("KSSC_DATA_DIR")):
        if cell["family"] == "yale" and cell["dataset"] not in yale:
            continue
        seen[cell["dataset"]] = seen.get(cell["dataset"], 0) + 1
        if seen[cell["dataset"]] <= CAPS.get(cell["family"], np.inf):
            out.append(cell)
    return out


def load(cell):
    return load_task(cell, EXP, os.environ.get("KSSC_DATA_DIR"), 0)


def generic_error(X, y, n_clusters=None):
    model = KSSC(len(np.unique(y)) if n_clusters is None else n_clusters, random_state=0,
                 **preset_params("generic")).fit(X)
    return clustering_error(y, model.labels_)


def part_preprocessing():
    for cell in panel_subset():
        X, y = load(cell)
        mean = X.mean(axis=0)
        std = np.where(X.std(axis=0) == 0, 1.0, X.std(axis=0))
        peak = np.where(np.abs(X).max(axis=0) == 0, 1.0, np.abs(X).max(axis=0))
        forms = {"as_given": X, "scale_std": X / std, "scale_maxabs": X / peak,
                 "centre": X - mean, "standardise": (X - mean) / std}
        errors = " ".join(f"{name}={generic_error(Xt, y):.1f}" for name, Xt in forms.items())
        print(cell["dataset"], cell["source"], X.shape, errors, flush=True)


def part_units():
    done = set()
    for cell in panel_subset():
        if cell["dataset"] in done:
            continue
        done.add(cell["dataset"])
        X, _ = load(cell)
        ratio, share = effective_features(X)
        print(f"{cell['dataset']} D={X.shape[1]} effective={ratio:.2f} "
              f"share_of_D={ratio / X.shape[1]:.3f} largest_feature={share:.3f}", flush=True)


def part_scale():
    X, y, _ = make_subspaces(3, 3, 40, 20, noise=0.05, random_state=0)
    print(f"median largest |entry| per point at 10^0: {np.median(np.abs(X).max(axis=1)):.3f}")
    for preset in ("faces", "motion", "generic"):
        row = []
        for e in (-300, -150, -100, -95, -90, -85, -80, -75, -50, 0, 10, 15, 18, 20, 50, 100,
                  150, 200):
            try:
                labels = KSSC(3, random_state=0, **preset_params(preset)).fit(X * 10.0**e).labels_
                row.append(f"{e}:{clustering_error(y, labels):.0f}")
            except Exception as exc:  # a failure is a measurement here
                row.append(f"{e}:{type(exc).__name__}")
        print(preset, " ".join(row), flush=True)


def lofo_thresholds(records):
    """{held-out family: the interval of thresholds t (warn when confidence < t) with the
    fewest errors on the other families}; a choice of 1 cluster warns by itself, left out."""
    out = {}
    for family in sorted({r["family"] for r in records}):
        rest = [r for r in records if r["family"] != family and r["chosen"] > 1]
        values = sorted({r["confidence"] for r in rest} | {0.0, 1.0 + 1e-9})
        errors = {}
        for low, high in zip(values[:-1], values[1:], strict=True):
            t = (low + high) / 2
            errors[(low, high)] = sum((r["confidence"] < t) != r["wrong"] for r in rest)
        best = min(errors.values())
        out[family] = [interval for interval, e in errors.items() if e == best]
    return out


K_OUTPUT = REPO / "results" / "bench_suitability_k.csv"
OLD_RULE_CLEAR_GAP = 0.6  # CLEAR_GAP when the eigen-gap (old rule) chose k
FLOORS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)  # SPECTRUM_FLOOR's candidates


def part_k():
    """Per task: the true k, KSSC's choice by the old rule (the largest eigen-gap
    l_{c+1} - l_c) and by the relative eigen-gap (`n_clusters_by_relative_gap`), both from
    one generic fit's Laplacian eigenvalues, and AutoKSSC(None)'s by its silhouette and by
    the largest relative eigen-gap among its candidates (`auto_rules`), each with its
    confidence and whether the fit warns; then
    the share right per rule, the rule and the CLEAR_GAP thresholds chosen by
    leave-one-family-out, and a CSV through the benchmark writer."""
    from experiments import _io, _produce

    started, clock = _io.now(), time.perf_counter()
    rows = []
    for cell in panel_subset(yale=("yale_2", "yale_5", "yale_10")):
        X, y = load(cell)
        k = len(np.unique(y))
        model = KSSC(None, random_state=0, **preset_params("generic")).fit(X)
        values, cap = model.laplacian_eigenvalues_, model.max_clusters
        old = int(np.argmax(np.diff(values)[:cap]) + 1)
        new, confidence = n_clusters_by_relative_gap(values, cap)
        start = time.perf_counter()
        auto = AutoKSSC(None, random_state=0).fit(X)
        auto_s = time.perf_counter() - start
        fit_s = model.timings_["total"]
        floors = [(f"kssc_relative_eigengap_floor{floor:g}",
                   *n_clusters_by_relative_gap(values, cap, floor), CLEAR_GAP, fit_s)
                  for floor in FLOORS if floor != SPECTRUM_FLOOR]
        for rule, chosen, conf, clear, seconds in [
                ("kssc_eigengap_old", old, relative_eigengap(values, old), OLD_RULE_CLEAR_GAP,
                 fit_s),
                ("kssc_relative_eigengap", new, confidence, CLEAR_GAP, fit_s), *floors,
                *((rule, chosen, conf, CLEAR_GAP, auto_s)
                  for rule, (chosen, conf) in auto_rules(auto.selection_).items())]:
            rows.append({"family": cell["family"], "dataset": cell["dataset"],
                         "source": cell["source"], "n_samples": X.shape[0], "rule": rule,
                         "true_k": k, "chosen_k": chosen, "right": chosen == k,
                         "confidence": round(conf, 4),
                         "warned": n_clusters_warning(chosen, conf, cap, X.shape[0],
                                                      clear) is not None,
                         "time_fit_s": round(seconds, 3)})
            print(" ".join(f"{key}={value}" for key, value in rows[-1].items()), flush=True)
    frame = pd.DataFrame(rows)
    summarise_k(frame)
    _produce.write_benchmark(frame, K_OUTPUT, "bench_suitability_k",
                             {"part": "k", "preset": "generic", "seed": 0,
                              "tasks": frame.dataset.size // frame.rule.nunique()},
                             started=started, clock=clock)


def auto_rules(selection):
    """{rule: (k, confidence)} of an AutoKSSC(None) fit's candidates (its `selection_`):
    "auto_silhouette", the candidate the silhouette prefers (AutoKSSC's choice), and
    "auto_relative_eigengap", the one whose own k has the largest relative eigen-gap."""
    fitted = {key: entry for key, entry in selection.items()
              if not np.isnan(entry["n_clusters_confidence"])}
    rules = {"auto_silhouette": max(fitted, key=lambda key: fitted[key]["silhouette"]),
             "auto_relative_eigengap": max(
                 fitted, key=lambda key: fitted[key]["n_clusters_confidence"])}
    return {rule: (int(fitted[key]["n_clusters"]), float(fitted[key]["n_clusters_confidence"]))
            for rule, key in rules.items()}


def lofo_rule(frame, prefix):
    """Leave-one-family-out among the rules named `prefix`*: per held-out family, the rule
    right most often on the others, and the count right on the held-out tasks."""
    rules = frame[frame.rule.str.startswith(prefix)]
    held_right = 0
    for family in rules.family.unique():
        rest, held = rules[rules.family != family], rules[rules.family == family]
        rights = rest.groupby("rule", sort=False).right.sum()
        rule = rights.idxmax()
        held_right += held[held.rule == rule].right.sum()
        print(f"held out {family}: rule {rule} (right on the others: "
              + ", ".join(f"{name} {count}" for name, count in rights.items()) + ")")
    print(f"leave-one-family-out {prefix}* rule: right on {held_right} of "
          f"{len(rules) // rules.rule.nunique()} tasks")


def summarise_k(frame):
    """The share right per rule, right without a warning, wrong without one; the rule with
    more right choices on the other families and the CLEAR_GAP thresholds, each chosen with
    every family held out."""
    shown = ["kssc_eigengap_old", "kssc_relative_eigengap", "auto_relative_eigengap",
             "auto_silhouette"]
    table = frame[frame.rule.isin(shown)].assign(
        cell=lambda f: f.chosen_k.astype(str) + (~f.right).map({True: "*", False: ""})
        + " " + f.confidence.map("{:.2f}".format) + f.warned.map({True: " warns",
                                                                     False: ""}))
    table = table.pivot_table(index=["dataset", "source", "true_k"], columns="rule",
                              values="cell", aggfunc="first", sort=False)[shown]
    print("chosen k (* wrong), confidence, warns:")
    print(table.to_string())
    for rule, part in frame.groupby("rule", sort=False):
        print(f"{rule}: right {part.right.sum()} of {len(part)} "
              f"({100 * part.right.mean():.0f} %), right and not warned "
              f"{(part.right & ~part.warned).sum()}, wrong and not warned "
              f"{(~part.right & ~part.warned).sum()}")
    lofo_rule(frame, "kssc")
    lofo_rule(frame, "auto")
    records = [{"family": r.family, "wrong": not r.right, "chosen": r.chosen_k,
                "confidence": r.confidence}
               for r in frame[frame.rule == "kssc_relative_eigengap"].itertuples()]
    for family, intervals in lofo_thresholds(records).items():
        print(f"held out {family}: fewest errors for CLEAR_GAP in "
              + ", ".join(f"({low:.3f}, {high:.3f})" for low, high in intervals))


def part_centroid():
    for cell in panel_subset():
        X, y = load(cell)
        k = len(np.unique(y))
        fits = {}
        for name in ("generic", "faces", "motion"):
            try:
                model = KSSC(k, random_state=0, **preset_params(name)).fit(X)
                fits[name] = (model.labels_, model.affinity_matrix_)
            except Exception:  # AutoKSSC leaves a failing candidate out
                continue
        criteria = candidate_criteria(X, fits, 5, 0)
        best = best_candidate(criteria, "silhouette")
        kmeans = KMeans(k, n_init=10, random_state=0).fit(X).labels_
        subspace, centroid = criteria[best]["silhouette"], centroid_silhouette(X, kmeans)
        print(f"{cell['dataset']} {cell['source']} chosen={best} "
              f"auto_error={clustering_error(y, fits[best][0]):.1f} "
              f"kmeans_error={clustering_error(y, kmeans):.1f} subspace_silhouette="
              f"{subspace:.3f} kmeans_silhouette={centroid:.3f} excess={centroid - subspace:+.3f}",
              flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", required=True,
                        choices=["preprocessing", "units", "scale", "k", "centroid"])
    args = parser.parse_args(argv)
    print(f"load average: {os.getloadavg()[0]:.1f}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        globals()[f"part_{args.part}"]()


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
