"""Time, worker memory and shuffle volume of `kssc.distributed.fit` per stage, on LocalClusters.

Approximate (IVF) neighbours at every N, so that one cost model covers all rows. The data
are those of experiments/scale.py (10 subspaces of dimensions 5-10 in D = 64,
noise 0.01), written to a .npy that the workers read by row blocks (`read_npy`: the client
never holds X). Per setting (`--setting`: "paper", `kssc.distributed.fit`'s defaults, and
"generic", `KSSC`'s defaults) the single machine's `KSSC` fit of the same data and seed
runs first (a row with workers 0, X in memory); every (N, workers) then runs on a fresh
LocalCluster (processes, 1 thread per worker), its row giving its time over the single
machine's and the adjusted Rand index of its labels against the single machine's. A thread
samples every worker's RSS each 0.25 s, and each stage's peak is the largest sample inside
its window. `--join partitioned` adds, per (N, workers), a fit with the self-join split by
list even where every worker could hold all rows (the path of data beyond a quarter of a
worker's memory; `kssc.distributed._neighbors`), each row naming the join it ran.
Afterwards a linear model, seconds = a + b * N per stage, is fitted by least squares on the
paper setting's 1-worker rows with the join split by list (the path of the large N it
predicts) and its predictions printed (docs/scaling.md).

    python -m benchmarks.bench_distributed --n 100000 300000 1000000 --workers 1 2
        --setting paper generic --join auto partitioned
    python -m benchmarks.bench_distributed --rows results/bench_distributed.csv
    (the model only, from the rows already measured)

The measured rows go to results/bench_distributed.csv (--output) with a sidecar (versions,
revision, load average at the end).
"""

import argparse
import contextlib
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.bench_memory import _Resident
from experiments._checkout import REPO_ROOT as REPO
from kssc.distributed._spectral import _GUARDS, _TOL  # LOBPCG's extra vectors, tolerance
from kssc.presets import PAPER_SETTING, preset_params
from kssc.spectral._multilevel import refine_dtype

STAGES = ("neighbours", "coefficients", "spectral")


class WorkerMemory(_Resident):
    """Samples the RSS of every worker process of a LocalCluster in a thread; peak(start,
    stop) in GiB.

    The workers' processes are read from this process by their ids (psutil), not asked
    through `client.run`: run on the workers' event loops every 0.25 s, those calls made the
    fit itself 10-15 % slower (3 x 10^5 points, two workers: 31.4 and 28.8 s sampled, 26.7
    and 25.8 s not; docs/scaling.md). The sampling thread, started and stopped as a context,
    is bench_memory's (`_Resident`, whose own sample, this process's anonymous memory, and
    stage peaks stay unused here)."""

    def __init__(self, client, interval=0.25):
        import psutil

        super().__init__()
        self.interval = interval
        self.processes = [psutil.Process(pid) for pid in client.run(os.getpid).values()]
        self.samples = []

    def _sample(self):
        while not self._stop.is_set():
            with contextlib.suppress(Exception):  # a worker restarting: skip this sample
                rss = max(process.memory_info().rss for process in self.processes)
                self.samples.append((time.perf_counter(), rss))
            self._stop.wait(self.interval)

    def peak(self, start, stop):
        inside = [rss for t, rss in self.samples if start <= t <= stop]
        return max(inside) / 2**30 if inside else float("nan")


# The settings measured: the paper's (kssc.distributed.fit's defaults) and KSSC's defaults.
SETTINGS = {"paper": {"n_neighbors": 20, **PAPER_SETTING}, "generic": preset_params("generic")}


def _params(setting):
    """The setting's parameters with the IVF search, for both fits."""
    return {**SETTINGS[setting], "neighbor_algorithm": "approximate"}


def _row(setting, n, workers, blocks, load, y, labels, model):
    """The columns every row has: what ran, the load, the error, the recall, the total."""
    from kssc import clustering_error

    return {"setting": setting, "n_samples": n, "workers": workers, "blocks": blocks,
            "load_average": round(load, 1), "error_pct": float(clustering_error(y, labels)),
            "recall": model.neighbor_recall_, "time_total_s": model.timings_["total"]}


def run_single(path, y, n, setting, seed):
    """The single machine's fit of the same data and setting (`KSSC`, all cores, X in memory,
    the IVF search): a row with workers 0, its stage seconds and labels."""
    from kssc import KSSC

    X = np.load(path)
    load = os.getloadavg()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = KSSC(10, **_params(setting), random_state=seed).fit(X)
    row = {**_row(setting, n, 0, 0, load, y, model.labels_, model), "join": "-",
           **{f"time_{stage}_s": model.timings_[stage] for stage in STAGES}}
    return row, model.labels_


@contextlib.contextmanager
def _join(join):
    """The distributed fit's self-join: "auto" (replicated where every worker can hold all
    rows), or "partitioned" (split by list whatever the memory)."""
    from kssc.distributed import _neighbors

    share = _neighbors._REPLICA_SHARE
    _neighbors._REPLICA_SHARE = 0.0 if join == "partitioned" else share
    try:
        yield
    finally:
        _neighbors._REPLICA_SHARE = share


def run_one(path, y, n, workers, setting, seed, single, join="auto"):
    """One distributed fit: a dict of stage seconds, stage peak worker RSS, shuffle bytes,
    recall, error, the join it ran, and against the single machine's fit (`single`: its row
    and labels) the time ratio and the labels' adjusted Rand index."""
    from distributed import Client, LocalCluster
    from sklearn.metrics import adjusted_rand_score

    from kssc import distributed as kd

    blocks = 2 * workers
    with (LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                       dashboard_address=None) as cluster,
          Client(cluster) as client, WorkerMemory(client) as memory):
        X = kd.read_npy(path, rows_per_block=-(-n // blocks))
        load = os.getloadavg()[0]
        start = time.perf_counter()
        with warnings.catch_warnings(), _join(join):
            warnings.simplefilter("ignore")
            model = kd.fit(X, 10, **_params(setting), random_state=seed, client=client)
        labels = model.labels_.compute()
    t = model.timings_
    edges = np.cumsum([start, t["neighbours"], t["coefficients"], t["spectral"]])
    row = {**_row(setting, n, workers, blocks, load, y, labels, model),
           "time_ratio_to_single": t["total"] / single[0]["time_total_s"],
           "ari_vs_single": adjusted_rand_score(single[1], labels)}
    for stage, a, b in zip(STAGES, edges[:-1], edges[1:], strict=True):
        row[f"time_{stage}_s"] = t[stage]
        row[f"rss_{stage}_gib"] = memory.peak(a, b)
    # The self-join: every row replicated to every worker, or split by list (data beyond a
    # quarter of a worker's memory); both columns in every row, the other one empty.
    row["join"] = "replicated" if "replicas" in model.shuffle_bytes_ else "partitioned"
    row.update({"shuffle_replicas_bytes": np.nan, "shuffle_rows_by_list_bytes": np.nan})
    row.update({f"shuffle_{name}_bytes": value for name, value in model.shuffle_bytes_.items()})
    return row


def fit_model(rows, quantity="time_{}_s"):
    """Per stage (a, b) of quantity = a + b * N (seconds, or with "rss_{}_gib" the peak worker
    RSS in GiB), least squares over the 1-worker rows.

    `predict` divides every stage's N-proportional part by the number of workers: the
    neighbour and coefficient tasks are per block with no shared state, and LOBPCG's
    iterate is in row blocks (one group per worker), the client solving m x m problems
    only; a worker's memory holds its share of the blocks. Network time is not modelled:
    `shuffle_bound` gives the bytes each shuffle moves.
    """
    ones = [r for r in rows if r["workers"] == 1 and r.get("setting", "paper") == "paper"
            and r.get("join", "partitioned") == "partitioned"]
    x = np.array([r["n_samples"] for r in ones], dtype=float)
    design = np.column_stack([np.ones_like(x), x])
    return {stage: np.linalg.lstsq(design, np.array([r[quantity.format(stage)] for r in ones]),
                                   rcond=None)[0] for stage in STAGES}


def shuffle_bound(n, workers, dim=64, k=20, n_probe=8, n_clusters=10):
    """Upper bounds of each shuffle's bytes for n points on 2 * workers blocks, and of the
    halo LOBPCG moves per iteration (one group per worker; a row of W has at most 2 k
    entries off the diagonal; LOBPCG's precision at its tolerance): docs/scaling.md. The
    self-join's partitions: one per worker (a row goes to each one owning a list it
    probes, int32 list numbers)."""
    copies = min(workers, n_probe)
    return {"rows_by_list": n * ((8 * dim + 12) + copies * (8 * dim + 8 + 4 * n_probe)),
            "neighbour_rows": n * k * (8 * dim + 8), "transpose": n * k * 16,
            "eigen_halo per iteration":
                n * min(workers - 1, 2 * k) * (n_clusters + _GUARDS)
                * np.dtype(refine_dtype(_TOL)).itemsize}


def predict(model, n, workers):
    """Predicted seconds (or GiB per worker) per stage for n points on `workers` workers."""
    return {stage: a + b * n / workers for stage, (a, b) in model.items()}


def report_model(rows):
    """Print the fitted model and its predictions for 10^8 and 10^9 points."""
    model, memory = fit_model(rows), fit_model(rows, "rss_{}_gib")
    print("model (1-worker rows): seconds = a + b * N; peak worker RSS = a + b * N / workers")
    for stage in STAGES:
        (a, b), (m, r) = model[stage], memory[stage]
        print(f"  {stage}: a = {a:.1f} s, b = {b * 1e6:.0f} s per 10^6 points; "
              f"RSS a = {m:.2f} GiB, b = {r * 1e6:.2f} GiB per 10^6 points")
    for n in (10**8, 10**9):
        for workers in (16, 128):
            times = ", ".join(f"{stage} {t / 3600:.1f} h"
                              for stage, t in predict(model, n, workers).items())
            peak = max(predict(memory, n, workers).values())
            volume = ", ".join(f"{name} <= {v / 2**40:.2f} TiB"
                               for name, v in shuffle_bound(n, workers).items())
            print(f"prediction N = {n:.0e}, {workers} workers: {times}; peak worker RSS "
                  f"{peak:.0f} GiB; shuffles {volume}")


def main(argv=None):
    import pandas as pd

    from kssc.datasets import make_union_of_subspaces

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--setting", nargs="+", default=["paper"], choices=list(SETTINGS))
    parser.add_argument("--join", nargs="+", default=["auto"], choices=["auto", "partitioned"],
                        help="partitioned: also fit with the self-join split by list")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=REPO / "results" / "bench_distributed.csv",
                        help="CSV of the measured rows (a sidecar .meta.json beside it)")
    parser.add_argument("--rows", help="model the rows of this CSV instead of measuring")
    args = parser.parse_args(argv)
    if args.rows:
        report_model(pd.read_csv(args.rows).to_dict("records"))
        return
    from experiments import _io, _produce

    started, begin = _io.now(), time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in args.n:
            X, y = make_union_of_subspaces(n, ambient_dim=64, n_subspaces=10,
                                           subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                           random_state=args.seed)
            path = os.path.join(folder, f"X{n}.npy")
            np.save(path, X)
            del X
            for setting in args.setting:
                single = run_single(path, y, n, setting, args.seed)
                rows.append(single[0])
                print(rows[-1], flush=True)
                for workers in args.workers:
                    for join in args.join:
                        rows.append(run_one(path, y, n, workers, setting, args.seed, single,
                                            join))
                        print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    print(frame.to_string(index=False))
    _produce.write_benchmark(frame, args.output, "bench_distributed",
                             {"n": args.n, "workers": args.workers, "seed": args.seed,
                              "settings": args.setting, "joins": args.join,
                              "setting": "approximate search, 10 clusters; workers 0: KSSC "
                              "on one machine"}, started=started, clock=begin)
    if len({r["n_samples"] for r in rows if r["workers"] == 1}) > 1:
        report_model(rows)

if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
