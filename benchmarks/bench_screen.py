"""AutoKSSC's subsample screening on the real-data panel: what `screen_size` costs and keeps.

Run: `python -m benchmarks.bench_screen [--sizes none 250 500 1000] [--seeds 0 1 2 3 4]`
(KSSC_DATA_DIR set to the data folder). On every task of the panel (experiments/panel.py's
loaders and tasks, conf/experiment/panel.yaml) that a size screens (more than twice its
points), and at every seed (AutoKSSC's random_state, which also draws the subsample),
`AutoKSSC(k, random_state=seed, screen_size=size)` is fitted, and beside it the same with
every candidate fitted on all points ("none"); the chosen candidate, clustering error and
wall time are recorded. Screening only saves time, so a size is adopted only when its choice
is the full fits' at every seed on every task it screens (a choice that differs is a loss a
user would see) and its total time over the screened tasks is more than FASTER_BY below the
full fits' (less is within the machine's noise); among such sizes the fastest, over all
families and with each family held out (the choice from the others); 0 (screen none of
these tasks) when no size is. The panel's Yale B 38 task is the yale38 experiment's data:
that experiment is no held-out check of this choice. Writes results/bench_screen.csv
(sidecar beside it); the load average is recorded.
"""

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks.bench_kssc import REPO
from benchmarks.bench_suitability import EXP
from experiments.panel import load_task, tasks
from kssc import AutoKSSC, clustering_error

OUTPUT = REPO / "results" / "bench_screen.csv"
FASTER_BY = 0.10


def measure(sizes, seeds, data_dir):
    """One row per (task a size screens, seed, size), the full fits' (size 0) included."""
    smallest = min(size for size in sizes if size is not None)
    rows = []
    for cell, _ in tasks(EXP, data_dir):
        X, y = load_task(cell, EXP, data_dir, 0)
        if X.shape[0] <= 2 * smallest:
            continue
        k = len(np.unique(y))
        for seed in seeds:
            for size in sizes:
                if size is not None and X.shape[0] <= 2 * size:
                    continue
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    auto = AutoKSSC(k, random_state=seed, screen_size=size).fit(X)
                rows.append({"family": cell["family"], "dataset": cell["dataset"],
                             "source": str(cell.get("source")), "n_samples": X.shape[0],
                             "seed": seed, "screen_size": 0 if size is None else size,
                             "chosen": str(auto.best_candidate_),
                             "error_pct": clustering_error(y, auto.labels_),
                             "time_s": round(time.perf_counter() - start, 3),
                             "load_average": round(os.getloadavg()[0], 2)})
                print(" ".join(f"{key}={value}" for key, value in rows[-1].items()),
                      flush=True)
    return pd.DataFrame(rows)


TASK = ["family", "dataset", "source", "seed"]


def compare(frame):
    """Per size (0: every candidate on all points): the (task, seed) pairs it screens, those
    whose choice differs from the full fits', the mean error over them, and the total time
    over every (task, seed) the smallest size screens (the full fit's time where this size
    does not screen it)."""
    full = frame[frame.screen_size == 0].set_index(TASK)
    out = []
    for size in sorted(frame.screen_size.unique()):
        mine = frame[frame.screen_size == size].set_index(TASK).reindex(full.index)
        screened = mine.chosen.notna()
        out.append({"screen_size": size, "n_screened": int(screened.sum()) if size else 0,
                    "n_differ": int((screened & (mine.chosen != full.chosen)).sum()),
                    "error_pct_mean": float(mine.error_pct.fillna(full.error_pct).mean()),
                    "time_s_total": float(mine.time_s.fillna(full.time_s).sum())})
    return pd.DataFrame(out)


def choose(frame, held_out=None):
    """The size adopted on the families other than `held_out` (module docstring): the
    fastest whose choice is the full fits' at every seed on every task it screens, when it
    is more than FASTER_BY faster than the full fits; else 0."""
    comparison = compare(frame[frame.family != held_out]).set_index("screen_size")
    full = comparison.loc[0, "time_s_total"]
    keep = comparison[(comparison.index > 0) & (comparison.n_differ == 0)
                      & (comparison.n_screened > 0)]
    if keep.empty or keep.time_s_total.min() >= (1 - FASTER_BY) * full:
        return 0
    return int(keep.time_s_total.idxmin())


def main(argv=None):
    from experiments import _io, _produce

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["none", "250", "500", "1000"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    args = parser.parse_args(argv)
    sizes = [None if size == "none" else int(size) for size in args.sizes]
    if None not in sizes or len(sizes) < 2:
        parser.error("--sizes needs none (the full fits) and at least one size.")
    started, clock = _io.now(), time.perf_counter()
    frame = measure(sizes, args.seeds, os.environ.get("KSSC_DATA_DIR"))
    print(compare(frame).to_string(index=False))
    print(f"chosen screen_size: {choose(frame)} (0: none)")
    for family in sorted(frame.family.unique()):
        print(f"held out {family}: screen_size {choose(frame, family)}")
    _produce.write_benchmark(frame, OUTPUT, "bench_screen",
                             {"sizes": args.sizes, "seeds": args.seeds,
                              "panel": "conf/experiment/panel.yaml"},
                             started=started, clock=clock)


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
