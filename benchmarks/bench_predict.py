"""`KSSC.predict` benchmark: new points labelled per second against the fit's own coefficient step.

Run: `python -m benchmarks.bench_predict [--train 50000] [--new 20000] [--repeats 3]`. Data:
the scale experiment's union (10 subspaces of dimension 5-10 in D = 64, noise 0.01); `KSSC`'s
defaults (above 50,000 training points: the IVF self-join) fitted on the first `--train`
points. Prints, and writes one row per repeat to bench_predict.csv in results/ (sidecar: versions,
load average); asserts nothing:

- the fit's coefficient step in points a second (the rate `predict` aims at), as the fit
  timed it and run again beside each `predict` call (the machine's load changes);
- `predict` on the `--new` held-out points: the first call (which builds the kept search
  structure) and `--repeats` further calls, in points a second, and by CPU time (all
  threads) a point against the coefficient step's (on a machine shared with other work,
  the ratio that wall times cannot give);
- re-prediction: the share of training points whose predicted label is their fitted one;
- the held-out points' error against the truth, under the matching of the fitted labels to
  the truth on the training points, and the share of them labelled as `predict` labels them
  with the exact search over the training points (the reference the index approximates).
"""

import argparse
import copy
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from sklearn.metrics.cluster import contingency_matrix

from experiments._checkout import REPO_ROOT as REPO
from kssc import KSSC
from kssc._base import unit_rows
from kssc.coding.representation import kssc_coefficients
from kssc.datasets import make_union_of_subspaces


def matched_error(y_train, fitted, y_new, predicted):
    """Error (%) of `predicted` against `y_new` under the matching of the fitted labels to
    the classes on the training points."""
    rows, cols = linear_sum_assignment(contingency_matrix(fitted, y_train), maximize=True)
    mapping = dict(zip(rows.tolist(), cols.tolist(), strict=True))
    mapped = np.array([mapping.get(label, -1) for label in predicted])
    return 100.0 * np.mean(mapped != y_new)


def coefficient_step(model, train):
    """Seconds and CPU seconds (all threads) of the fit's coefficient step (its penalty and
    codes of every training point over its candidates), run again with the fit's settings."""
    P = unit_rows(train)
    start, cpu = time.perf_counter(), time.process_time()
    kssc_coefficients(P, model.neighbors_, model.lam, solver=model.solver,
                      positive=model.positive, lam_mode=model.lam_mode, tol=model.tol,
                      max_iter=model.max_iter)
    return time.perf_counter() - start, time.process_time() - cpu


def timed_predict(model, X):
    """Labels, seconds and CPU seconds (all threads) of ``model.predict(X)``."""
    start, cpu = time.perf_counter(), time.process_time()
    labels = model.predict(X)
    return labels, time.perf_counter() - start, time.process_time() - cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=50_000, help="training points")
    parser.add_argument("--new", type=int, default=20_000, help="new points predicted")
    parser.add_argument("--repeats", type=int, default=3, help="predict calls after the first")
    parser.add_argument("--output", type=Path, default=REPO / "results" / "bench_predict.csv")
    args = parser.parse_args(argv)
    from experiments import _io, _produce

    started, start = _io.now(), time.perf_counter()
    load = os.getloadavg()
    X, y = make_union_of_subspaces(args.train + args.new, ambient_dim=64, n_subspaces=10,
                                   subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                   random_state=0)
    train, new = X[:args.train], X[args.train:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = KSSC(10, random_state=0).fit(train)
        coefficient_rate = args.train / model.timings_["coefficients"]
        search = model.neighbor_search_
        print(f"fit: {args.train:,} x 64, {search['algorithm']} search (nlist "
              f"{search.get('nlist')}, nprobe {search.get('nprobe')}, recall "
              f"{search['recall']:.3f}); coefficient step {model.timings_['coefficients']:.2f} s"
              f" = {coefficient_rate:,.0f} points/s; fit {model.timings_['total']:.2f} s")
        labels, first, first_cpu = timed_predict(model, new)
        seconds, cpu, coding, coding_cpu = [], [], [], []
        for _ in range(args.repeats):
            seconds.append(timed_predict(model, new)[1])
            cpu.append(timed_predict(model, new)[2])
            wall, used = coefficient_step(model, train)
            coding.append(wall)
            coding_cpu.append(used)
        again = model.predict(train)
        exact = copy.copy(model)
        exact.neighbor_search_ = {"algorithm": "exact"}
        exact_labels, exact_seconds, _ = timed_predict(exact, new)
    rate = args.new / np.median(seconds)
    coding_rate = args.train / np.median(coding)
    # CPU seconds a point (all threads), less sensitive to other processes than wall time.
    cpu_per_point = np.median(cpu) / args.new
    coding_cpu_per_point = np.median(coding_cpu) / args.train
    agreement = float(np.mean(again == model.labels_))
    error = matched_error(y[:args.train], model.labels_, y[args.train:], labels)
    same_as_exact = float(np.mean(labels == exact_labels))
    print(f"predict {args.new:,} new points: first call {first:.2f} s "
          f"({args.new / first:,.0f} points/s, builds the index); then "
          f"{', '.join(f'{s:.3f}' for s in seconds)} s: median {rate:,.0f} points/s "
          f"= {rate / coefficient_rate:.2f}x the fit's coefficient step")
    print(f"the fit's coefficient step re-run beside each call: "
          f"{', '.join(f'{s:.2f}' for s in coding)} s: median {coding_rate:,.0f} points/s; "
          f"predict = {rate / coding_rate:.2f}x it")
    print(f"CPU time a point (all threads, medians): predict {1e6 * cpu_per_point:.1f} us "
          f"(first call {1e6 * first_cpu / args.new:.1f} us), coefficient step "
          f"{1e6 * coding_cpu_per_point:.1f} us: predict's rate = "
          f"{coding_cpu_per_point / cpu_per_point:.2f}x the coefficient step's by CPU time")
    print(f"re-predicted training points with their fitted label: {100 * agreement:.2f} %")
    print(f"held-out error {error:.2f} % (fit's matching); labels as the exact search's "
          f"predict: {100 * same_as_exact:.2f} % (that one: {exact_seconds:.2f} s)")
    print(f"load average at start {load[0]:.2f}, at end {os.getloadavg()[0]:.2f}")
    rows = [{"n_train": args.train, "n_new": args.new, "ambient_dim": 64, "call": call,
             "time_predict_s": s, "points_per_s": args.new / s,
             "fit_coefficients_points_per_s": coefficient_rate,
             "coefficient_step_points_per_s": coding_rate,
             "predict_cpu_us_per_point": 1e6 * cpu_per_point,
             "coefficient_step_cpu_us_per_point": 1e6 * coding_cpu_per_point,
             "search": search["algorithm"], "nlist": search.get("nlist"),
             "nprobe": search.get("nprobe"), "repredict_agreement": agreement,
             "heldout_error_pct": error, "agreement_with_exact_search": same_as_exact,
             "load_average": round(load[0], 2)}
            for call, s in [("first", first)] + [(f"repeat {i + 1}", s)
                                                 for i, s in enumerate(seconds)]]
    _produce.write_benchmark(pd.DataFrame(rows), args.output, "bench_predict",
                             {"train": args.train, "new": args.new, "repeats": args.repeats,
                              "setting": "KSSC defaults"}, started=started, clock=start)


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
