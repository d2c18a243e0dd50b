"""AutoKSSC's subsample screening on the real-data panel: what `screen_size` costs and keeps.

Run: `python -m benchmarks.bench_screen [--sizes none 250 500 1000]` (KSSC_DATA_DIR set to the
data folder). On every task of the panel (experiments/panel.py's loaders and tasks,
conf/experiment/panel.yaml, seed 0) with more than twice a size's points, `AutoKSSC(k,
random_state=0, screen_size=size)` is fitted ("none": every candidate on all points), and its
chosen candidate, clustering error and wall time are recorded; smaller tasks are not screened
at that size and are left out of its rows. The size chosen is the smallest whose choices are
the full fits' on every task it screens (the subsample's fits cost in proportion to its
size; a choice that differs is a loss a user would see), over all families and with each
family held out (the choice from the others). The total time over the tasks any size screens
(the full fit's time where a size does not screen a task) is printed beside it, as measured,
not chosen by: a few seconds' difference is within the machine's noise. Writes
results/bench_screen.csv (sidecar beside it); the load average is recorded.
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


def measure(sizes, data_dir):
    """One row per (task, size) the size screens, and per task with size None."""
    rows = []
    for cell, _ in tasks(EXP, data_dir):
        X, y = load_task(cell, EXP, data_dir, 0)
        k = len(np.unique(y))
        for size in sizes:
            if size is not None and X.shape[0] <= 2 * size:
                continue
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                auto = AutoKSSC(k, random_state=0, screen_size=size).fit(X)
            rows.append({"family": cell["family"], "dataset": cell["dataset"],
                         "source": str(cell.get("source")), "n_samples": X.shape[0],
                         "screen_size": 0 if size is None else size,
                         "chosen": str(auto.best_candidate_),
                         "error_pct": clustering_error(y, auto.labels_),
                         "time_s": round(time.perf_counter() - start, 3),
                         "load_average": round(os.getloadavg()[0], 2)})
            print(" ".join(f"{key}={value}" for key, value in rows[-1].items()), flush=True)
    return pd.DataFrame(rows)


def compare(frame):
    """Per size (0: no screening): screened tasks, those whose choice differs from the full
    fits', and the total time over every task that any size screens (the full fit's time
    where this size does not screen it)."""
    task = ["family", "dataset", "source"]
    full = frame[frame.screen_size == 0].set_index(task)
    screened = frame[frame.screen_size > 0]
    tasks_any = screened.set_index(task).index.unique()
    out = []
    for size in sorted(frame.screen_size.unique()):
        rows = frame[frame.screen_size == size].set_index(task)
        mine = rows.reindex(tasks_any)
        times = mine.time_s.fillna(full.time_s.reindex(tasks_any))
        differs = (mine.chosen.notna() & (mine.chosen != full.chosen.reindex(tasks_any)))
        out.append({"screen_size": size, "n_screened": int(mine.chosen.notna().sum()) if size
                    else 0, "n_differ": int(differs.sum()),
                    "families": sorted(set(tasks_any.get_level_values("family"))),
                    "time_s_total": float(times.sum()),
                    "time_by_family": times.groupby(level="family").sum().to_dict()})
    return pd.DataFrame(out)


def choose(frame, held_out=None):
    """The smallest size (0: none) whose choices equal the full fits' on every task of the
    families other than `held_out` that it screens."""
    frame = frame[frame.family != held_out]
    task = ["family", "dataset", "source"]
    full = frame[frame.screen_size == 0].set_index(task).chosen
    sizes = sorted(size for size in frame.screen_size.unique() if size)
    for size in sizes:
        rows = frame[frame.screen_size == size].set_index(task).chosen
        if (rows == full.reindex(rows.index)).all():
            return int(size)
    return 0


def main(argv=None):
    from experiments import _io, _produce

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["none", "250", "500", "1000"])
    args = parser.parse_args(argv)
    sizes = [None if size == "none" else int(size) for size in args.sizes]
    started, clock = _io.now(), time.perf_counter()
    frame = measure(sizes, os.environ.get("KSSC_DATA_DIR"))
    comparison = compare(frame)
    print(comparison.drop(columns="time_by_family").to_string(index=False))
    print(f"chosen screen_size: {choose(frame)} (0: none)")
    for family in sorted(set(frame.family[frame.screen_size > 0])):
        print(f"held out {family}: screen_size {choose(frame, family)}")
    _produce.write_benchmark(frame, OUTPUT, "bench_screen",
                             {"sizes": args.sizes, "seed": 0, "panel": "conf/experiment/panel.yaml"},
                             started=started, clock=clock)


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
