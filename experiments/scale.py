"""Beyond the paper: time and peak memory of k-SSC per stage for N = 10^4 .. 10^6 points.

Data: `n_subspaces` random linear subspaces of dimensions 5, 6, ..., 10, 5, ... (cycling
through `subspace_dims`) in D = `ambient_dim`, Gaussian coefficients, points scaled to unit
norm, then N(0, noise^2) noise per coordinate, shuffled (`kssc.datasets.make_subspaces`
draws subspaces of one dimension only).

Every (N, method) is fitted in a fresh Python process (`python -m experiments.scale`, which
prints its row as JSON), so its peak resident set size (RSS) is its own; trials run strictly
one at a time. Besides the shared columns a row holds `n_samples`, `ambient_dim`, the stage
times `time_neighbours_s`, `time_coefficients_s` and `time_spectral_s` (the affinity included
in the last; `time_fit_s` is the whole fit), `rss_<stage>_gib` (the largest RSS sampled every
`rss_interval` seconds while the stage ran) and `rss_peak_gib` (the process' own high-water mark,
data generation included), in GiB, and `load_average` (the 1-minute load average when the fit
ended: other jobs on the machine slow a timing down). The summary table holds their medians
per (N, method) over the non-failed trials.

From `memmap_from` points on (the paper profile's N = 10^7 cell), the data is written a
chunk at a time to a float32 .npy in data/temp (`write_union_npy`, the same distribution)
and fitted memory-mapped (``np.load(..., mmap_mode="r")``); the file is removed afterwards.

    python -m experiments.run experiment=scale                  # into Hydra's run folder
    python -m experiments.run experiment=scale profile=smoke    # N = 2,000 and 5,000
    python -m experiments.run experiment=scale experiment.n_samples=[10000000]   # slow
"""

import argparse
import bisect
import importlib.util
import json
import os
import resource
import subprocess
import sys
import threading
import time
from numbers import Integral, Real

import numpy as np

from kssc.datasets import make_union_of_subspaces

from ._checkout import REPO_ROOT
from ._trial import Experiment, data_seed, exit_with_parent, fit_methods

# What every fit runs in its own process: this module (so the suite's fingerprint of this
# experiment, which covers this file and its imports, covers the code the process runs).
MODULE = "experiments.scale"
STAGES = ("neighbours", "coefficients", "spectral")
GIB = 2.0**30


class RSSSampler(threading.Thread):
    """Samples the process' resident set size every `interval` seconds."""

    def __init__(self, interval):
        super().__init__(daemon=True)
        import psutil

        self._process = psutil.Process()
        self.interval = interval
        self.samples = []
        self._halt = threading.Event()

    def run(self):
        while not self._halt.is_set():
            self.samples.append((time.perf_counter(), self._process.memory_info().rss))
            self._halt.wait(self.interval)

    def stop(self):
        self._halt.set()
        self.join()
        self.samples.append((time.perf_counter(), self._process.memory_info().rss))

    def peak(self, start, stop):
        """Largest RSS sampled in [start, stop]; for a window shorter than the sampling
        interval (no sample inside), the last sample before it, the RSS it started with."""
        if not (np.isfinite(start) and np.isfinite(stop)):
            return float("nan")
        times = [t for t, _ in self.samples]
        first, last = bisect.bisect_left(times, start), bisect.bisect_right(times, stop)
        inside = [rss for _, rss in self.samples[first:last]]
        if not inside and first > 0:
            inside = [self.samples[first - 1][1]]
        return max(inside) if inside else float("nan")


# --------------------------------------------------------------------------- config

def _is_int(value, low):
    return isinstance(value, Integral) and not isinstance(value, bool) and value >= low


def _is_number(value):
    return isinstance(value, Real) and not isinstance(value, bool)


def check(exp):
    """This experiment's config values; ValueError naming the offending one."""
    if importlib.util.find_spec("psutil") is None:
        raise ImportError("The scale experiment samples memory with psutil: "
                          "pip install -e '.[bench]'.")
    if exp.get("n_jobs") != 1:
        raise ValueError(f"experiment.n_jobs must be 1 for scale (each N is timed alone); "
                         f"got {exp.get('n_jobs')!r}.")
    if not _is_int(exp.get("n_subspaces"), 1):
        raise ValueError(f"experiment.n_subspaces must be a positive integer; "
                         f"got {exp.get('n_subspaces')!r}.")
    dims = exp.get("subspace_dims")
    if not isinstance(dims, list) or not dims or not all(_is_int(d, 1) for d in dims):
        raise ValueError(f"experiment.subspace_dims must be a non-empty list of positive integers; "
                         f"got {dims!r}.")
    if not _is_int(exp.get("ambient_dim"), max(dims)):
        raise ValueError(f"experiment.ambient_dim must be an integer >= the largest subspace "
                         f"dimension ({max(dims)}); got {exp.get('ambient_dim')!r}.")
    sizes = exp.get("n_samples")
    if (not isinstance(sizes, list) or not sizes
            or not all(_is_int(n, exp["n_subspaces"]) for n in sizes)):
        raise ValueError(f"experiment.n_samples must be a non-empty list of integers >= "
                         f"experiment.n_subspaces ({exp['n_subspaces']}); got {sizes!r}.")
    noise = exp.get("noise")
    if not (_is_number(noise) and noise >= 0):
        raise ValueError(f"experiment.noise must be a number >= 0; got {noise!r}.")
    memmap_from = exp.get("memmap_from")
    if memmap_from is not None and not _is_int(memmap_from, 1):
        raise ValueError(f"experiment.memmap_from must be a positive integer or null; "
                         f"got {memmap_from!r}.")
    interval = exp.get("rss_interval")
    if not (_is_number(interval) and interval > 0):
        raise ValueError(f"experiment.rss_interval must be a number of seconds > 0; "
                         f"got {interval!r}.")


# --------------------------------------------------------------------------- trials

def tasks(exp, data_dir=None):
    return [({"n_samples": n}, t) for t in range(exp["trials"]) for n in exp["n_samples"]]


def trial(context, cell, trial, seed):
    return [fit_in_subprocess(context["experiment"], name, method_cfg, cell["n_samples"], seed)
            for name, method_cfg in context["methods"].items()]


def fit_in_subprocess(exp, name, method_cfg, n_samples, seed):
    """The row of one fit run in a fresh Python process; a failed row if the process fails."""
    spec = json.dumps({"experiment": exp, "methods": {name: method_cfg}})
    done = subprocess.run([sys.executable, "-m", MODULE, "--n", str(n_samples), "--seed", str(seed),
                           "--spec", spec], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        return json.loads(lines[-1])
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"method": name, "error_pct": np.nan, "failed": True, "time_representation_s": np.nan,
            "time_fit_s": np.nan,
            "failure": f"fit process exited with code {done.returncode}: {last}"[:300]}


def write_union_npy(path, n_samples, *, ambient_dim, n_subspaces, subspace_dims, noise,
                    random_state=None, chunk_rows=2**18):
    """`make_union_of_subspaces`' distribution written to a float32 .npy a chunk at a time.

    Subspace j has dimension ``subspace_dims[j % len(subspace_dims)]``; point i lies on
    subspace y[i] (as equal counts as can be, in random order), a Gaussian combination of
    its orthonormal basis scaled to unit norm, plus N(0, noise^2) per coordinate. Memory:
    one chunk of `chunk_rows` points and the labels. Returns the labels y.
    """
    rng = np.random.default_rng(random_state)
    dims = [subspace_dims[j % len(subspace_dims)] for j in range(n_subspaces)]
    bases = [np.linalg.qr(rng.standard_normal((ambient_dim, dim)))[0] for dim in dims]
    y = rng.permutation(np.arange(n_samples) % n_subspaces)
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32,
                                  shape=(n_samples, ambient_dim))
    for start in range(0, n_samples, chunk_rows):
        labels = y[start:start + chunk_rows]
        block = np.empty((labels.size, ambient_dim))
        for j, basis in enumerate(bases):
            on_j = labels == j
            points = rng.standard_normal((int(on_j.sum()), basis.shape[1])) @ basis.T
            block[on_j] = points / np.linalg.norm(points, axis=1, keepdims=True)
        X[start:start + labels.size] = block + noise * rng.standard_normal(block.shape)
    X.flush()
    del X
    return y


def fit_here(exp, methods, n_samples, seed):
    """Draw the data and fit the one configured method in this process; its row.

    From ``exp["memmap_from"]`` points on the data goes through a float32 .npy in
    data/temp, fitted memory-mapped and removed afterwards."""
    if exp.get("memmap_from") is not None and n_samples >= exp["memmap_from"]:
        folder = REPO_ROOT / "data" / "temp"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"scale_{n_samples}_{seed}_{os.getpid()}.npy"
        try:
            y = write_union_npy(path, n_samples, ambient_dim=exp["ambient_dim"],
                                n_subspaces=exp["n_subspaces"],
                                subspace_dims=exp["subspace_dims"], noise=exp["noise"],
                                random_state=data_seed(seed))
            return _fit_and_measure(exp, methods, np.load(path, mmap_mode="r"), y, seed)
        finally:
            path.unlink(missing_ok=True)
    X, y = make_union_of_subspaces(n_samples, ambient_dim=exp["ambient_dim"],
                                   n_subspaces=exp["n_subspaces"],
                                   subspace_dims=exp["subspace_dims"], noise=exp["noise"],
                                   random_state=data_seed(seed))
    return _fit_and_measure(exp, methods, X, y, seed)


def _fit_and_measure(exp, methods, X, y, seed):
    sampler = RSSSampler(exp["rss_interval"])
    sampler.start()
    start = time.perf_counter()
    [row] = fit_methods({"methods": methods}, X, y, seed)
    sampler.stop()
    row["ambient_dim"] = exp["ambient_dim"]
    # Consecutive windows of the stage times from the start of the fit.
    ends = start + np.cumsum([row.get(f"time_{stage}_s", np.nan) for stage in STAGES[:-1]])
    bounds = [start, *ends, start + row["time_fit_s"]]
    for stage, low, high in zip(STAGES, bounds[:-1], bounds[1:], strict=True):
        row[f"rss_{stage}_gib"] = sampler.peak(low, high) / GIB
    row["rss_peak_gib"] = peak_rss_bytes() / GIB
    row["load_average"] = os.getloadavg()[0]
    return row


def peak_rss_bytes():
    """This process' RSS high-water mark: VmHWM on Linux. (getrusage's ru_maxrss keeps the
    parent's high-water mark across fork + exec, so a fit process started by a large suite
    process would report the suite's memory.)"""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


MEDIAN_COLUMNS = ["time_neighbours_s", "time_coefficients_s", "time_spectral_s", "time_fit_s",
                  "rss_peak_gib", "error_pct", "load_average"]


def summary(frame, exp=None):
    """Medians per (N, method) over the non-failed trials, and the trial counts."""
    grouped = frame.groupby(["n_samples", "method"], sort=False)
    table = grouped[MEDIAN_COLUMNS].agg(lambda c: c[~frame.loc[c.index, "failed"]].median())
    table.insert(0, "n_failed", grouped["failed"].sum().astype(int))
    table.insert(0, "n_trials", grouped.size())
    return table.rename(columns={c: f"{c}_median" for c in MEDIAN_COLUMNS}).reset_index()


# Every fit runs in a subprocess, which the runner's pre-flight probe would run: none here
# (a value only `fit` refuses gives failed rows, as before).
EXPERIMENT = Experiment(tasks=tasks, trial=trial, summary=summary, check=check, preflight=False)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Fit one method once in this process and print its row as JSON "
                    "(what every trial of experiment=scale runs).")
    parser.add_argument("--n", type=int, required=True, help="number of points")
    parser.add_argument("--seed", type=int, required=True, help="the trial's seed")
    parser.add_argument("--spec", type=json.loads, required=True,
                        help='JSON {"experiment": {...}, "methods": {name: config}}, one method')
    args = parser.parse_args(argv)
    exit_with_parent(os.getppid())  # a killed suite leaves no fit process behind
    print(json.dumps(fit_here(args.spec["experiment"], args.spec["methods"], args.n, args.seed)))


if __name__ == "__main__":
    main()
