"""Where a distributed fit's time goes: busy seconds per worker and task, from the task stream.

One `kssc.distributed.fit` (the paper's setting or `--setting generic`, IVF search) of the data of
experiments/scale.py on a fresh LocalCluster (worker processes of 1 thread, 2 blocks per
worker read from a .npy), recorded with `distributed.get_task_stream`. Prints the fit's stage
seconds, then per (worker, task prefix) the compute seconds and task count, largest first,
and the timeline of tasks longer than `--longer` seconds (start from the first task, length,
prefix, worker): a stage that runs on one worker while the other idles, or a task slower
than its single-machine kernel, shows here. Prints figures only (no CSV): docs/scaling.md
quotes it with its command.

    python -m benchmarks.profile_distributed --n 300000 --workers 2
"""

import argparse
import collections
import os
import tempfile
import warnings

import numpy as np


def _prefix(key):
    from dask.utils import key_split

    return key_split(key)


def busy_seconds(stream):
    """{(worker, prefix): (compute seconds, tasks)} and the sorted compute intervals
    (start, stop, prefix, worker) of a task stream's records."""
    busy, count, intervals = collections.defaultdict(float), collections.Counter(), []
    for task in stream:
        prefix = _prefix(task["key"])
        for part in task["startstops"]:
            if part["action"] == "compute":
                busy[task["worker"], prefix] += part["stop"] - part["start"]
                count[task["worker"], prefix] += 1
                intervals.append((part["start"], part["stop"], prefix, task["worker"]))
    return {key: (busy[key], count[key]) for key in busy}, sorted(intervals)


def profile(n, workers, seed=0, join="auto", setting="paper"):
    """Fit once on a fresh LocalCluster; return (timings_, task stream records). `join`
    "partitioned" splits the self-join by list even where the workers could hold every row
    (the path of data beyond a quarter of a worker's memory), for its cost beside the
    replicated join's; `setting` is bench_distributed's ("paper" or "generic")."""
    from distributed import Client, LocalCluster, get_task_stream

    from benchmarks.bench_distributed import _join, _params
    from kssc import distributed as kd
    from kssc.datasets import make_union_of_subspaces

    X, _ = make_union_of_subspaces(n, ambient_dim=64, n_subspaces=10,
                                   subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                   random_state=seed)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "X.npy")
        np.save(path, X)
        del X
        with (LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None) as cluster,
              Client(cluster) as client):
            data = kd.read_npy(path, rows_per_block=-(-n // (2 * workers)))
            with get_task_stream(client) as stream, warnings.catch_warnings(), _join(join):
                warnings.simplefilter("ignore")
                model = kd.fit(data, 10, **_params(setting), random_state=seed, client=client)
                model.labels_.compute()
            return model.timings_, stream.data


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--longer", type=float, default=0.3,
                        help="list the tasks longer than this many seconds")
    parser.add_argument("--join", choices=["auto", "partitioned"], default="auto",
                        help="partitioned: the self-join split by list even where every "
                        "worker could hold all rows")
    parser.add_argument("--setting", choices=["paper", "generic"], default="paper",
                        help="bench_distributed's settings: the paper's, or KSSC's defaults")
    args = parser.parse_args(argv)
    timings, stream = profile(args.n, args.workers, args.seed, args.join, args.setting)
    print("stages:", ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in timings.items()))
    busy, intervals = busy_seconds(stream)
    print("busy seconds per worker and task prefix (tasks):")
    for (worker, prefix), (seconds, tasks) in sorted(busy.items(), key=lambda kv: -kv[1][0]):
        if seconds >= 0.05:
            print(f"  {worker}  {prefix:<28} {seconds:7.2f} s  ({tasks})")
    origin = intervals[0][0] if intervals else 0.0
    print(f"tasks longer than {args.longer} s (start, seconds, prefix, worker):")
    for start, stop, prefix, worker in intervals:
        if stop - start > args.longer:
            print(f"  {start - origin:7.2f}  {stop - start:6.2f}  {prefix:<28} {worker}")


if __name__ == "__main__":
    main()
