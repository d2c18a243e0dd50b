"""Scale benchmark: time and peak memory of KSSC per stage for N = 10^4 .. 10^6 points.

Every N runs in a fresh Python process, so its peak resident set size (RSS) is its own.
Rows go to ``results/scale.csv`` (written atomically); the figure ``figures/scale.png`` and
``.pdf`` is drawn from that CSV only.

    python benchmarks/scale.py run --n 10000 100000 1000000     # compute + plot
    python benchmarks/scale.py plot                             # redraw from the CSV
    python benchmarks/scale.py one --n 100000 --positive false  # one row, printed as JSON

Data: 10 random linear subspaces of dimensions 5, 6, ..., 10, 5, ... in D = 64, Gaussian
coefficients, points scaled to unit norm, then N(0, 0.01^2) noise per coordinate; points
shuffled. (kssc.datasets.make_subspaces draws subspaces of one dimension only.)
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "results" / "scale.csv"
FIGURE = ROOT / "figures" / "scale"
STAGES = ("neighbours", "coefficients", "spectral")


def make_union_of_subspaces(n_samples, ambient_dim=64, n_subspaces=10, dims=(5, 6, 7, 8, 9, 10),
                            noise=0.01, random_state=0):
    """(X (n, ambient_dim), y): points on random subspaces of the given dimensions, shuffled."""
    rng = np.random.default_rng(random_state)
    sizes = np.full(n_subspaces, n_samples // n_subspaces)
    sizes[: n_samples % n_subspaces] += 1
    X = np.empty((n_samples, ambient_dim))
    y = np.repeat(np.arange(n_subspaces), sizes)
    start = 0
    for j, size in enumerate(sizes):
        basis = np.linalg.qr(rng.standard_normal((ambient_dim, dims[j % len(dims)])))[0]
        block = rng.standard_normal((size, basis.shape[1])) @ basis.T
        X[start:start + size] = block / np.linalg.norm(block, axis=1, keepdims=True)
        start += size
    X += noise * rng.standard_normal(X.shape)
    order = rng.permutation(n_samples)
    return X[order], y[order]


class RSSSampler(threading.Thread):
    """Samples the process' resident set size every `interval` seconds."""

    def __init__(self, interval=0.05):
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
        inside = [rss for t, rss in self.samples if start <= t <= stop]
        return max(inside) if inside else float("nan")


def run_one(n_samples, *, ambient_dim=64, seed=0, **params):
    """Fit KSSC once; return a dict of stage times (s), peak RSS (GiB) and the error (%)."""
    from kssc import KSSC, clustering_error

    X, y = make_union_of_subspaces(n_samples, ambient_dim, random_state=seed)
    model = KSSC(n_clusters=10, random_state=seed, **params)
    sampler = RSSSampler()
    sampler.start()
    start = time.perf_counter()
    model.fit(X)
    stop = time.perf_counter()
    sampler.stop()
    t = model.timings_
    bounds = np.cumsum([start, t["neighbours"], t["coefficients"]])
    gib = 2.0**30
    return {
        "n_samples": n_samples, "ambient_dim": ambient_dim, "seed": seed,
        **{key: params.get(key, default) for key, default in _DEFAULTS.items()},
        "time_neighbours": t["neighbours"], "time_coefficients": t["coefficients"],
        "time_spectral": t["spectral"], "time_total": stop - start,
        "rss_neighbours_gib": sampler.peak(bounds[0], bounds[1]) / gib,
        "rss_coefficients_gib": sampler.peak(bounds[1], bounds[2]) / gib,
        "rss_spectral_gib": sampler.peak(bounds[2], stop) / gib,
        "rss_peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / gib,
        "error_percent": clustering_error(y, model.labels_),
        "n_cpus": os.cpu_count(),
        # Other processes share the machine: the 1-minute load average at the end documents it.
        "load_average": os.getloadavg()[0],
    }


_DEFAULTS = {"n_neighbors": 20, "lam": 0.1, "positive": True, "metric": "euclidean",
             "assign_labels": "discretize", "neighbor_algorithm": "auto"}


def _bool(text):
    return text.lower() in ("1", "true", "yes")


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("run", "one", "plot"))
    parser.add_argument("--n", type=lambda s: int(float(s)), nargs="+",
                        default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--ambient-dim", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-neighbors", type=int)
    parser.add_argument("--lam", type=float)
    parser.add_argument("--positive", type=_bool)
    parser.add_argument("--metric")
    parser.add_argument("--assign-labels")
    parser.add_argument("--neighbor-algorithm")
    parser.add_argument("--csv", type=Path, default=CSV)
    parser.add_argument("--append", action="store_true", help="keep the CSV's existing rows")
    return parser


def _params(args):
    names = {"n_neighbors": args.n_neighbors, "lam": args.lam, "positive": args.positive,
             "metric": args.metric, "assign_labels": args.assign_labels,
             "neighbor_algorithm": args.neighbor_algorithm}
    return {key: value for key, value in names.items() if value is not None}


def _option_args(args):
    out = ["--ambient-dim", str(args.ambient_dim), "--seed", str(args.seed)]
    for key, value in _params(args).items():
        out += ["--" + key.replace("_", "-"), str(value)]
    return out


def write_csv_atomic(frame, path):
    """Write a DataFrame to `path` through a temporary file in the same folder + os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(handle, "w") as stream:
        frame.to_csv(stream, index=False)
    os.replace(tmp, path)


def plot(csv=CSV, out=FIGURE):
    """Time per stage and peak RSS against N (log-log), from the CSV only."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    frame = pd.read_csv(csv)
    keys = list(_DEFAULTS)
    fig, (ax_time, ax_mem) = plt.subplots(1, 2, figsize=(10, 4))
    for setting, rows in frame.groupby(keys, sort=False):
        rows = rows.groupby("n_samples", as_index=False).mean(numeric_only=True)
        tag = ", ".join(f"{k}={v}" for k, v in zip(keys, setting) if _DEFAULTS[k] != v)
        tag = f" ({tag})" if tag else ""
        for stage, marker in zip((*STAGES, "total"), "osd^"):
            ax_time.loglog(rows.n_samples, rows[f"time_{stage}"], marker=marker,
                           label=stage + tag)
        ax_mem.loglog(rows.n_samples, rows.rss_peak_gib, marker="o", label="peak RSS" + tag)
    ax_time.set(xlabel="N (points)", ylabel="seconds", title="KSSC time per stage")
    ax_mem.set(xlabel="N (points)", ylabel="GiB", title="peak resident memory")
    for ax in (ax_time, ax_mem):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    for suffix in (".png", ".pdf"):
        fig.savefig(out.with_suffix(suffix), dpi=150)
    plt.close(fig)


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "one":
        print(json.dumps(run_one(args.n[0], ambient_dim=args.ambient_dim, seed=args.seed,
                                 **_params(args))))
        return
    if args.command == "run":
        import pandas as pd

        rows = []
        for n in args.n:
            done = subprocess.run([sys.executable, __file__, "one", "--n", str(n),
                                   *_option_args(args)], capture_output=True, text=True,
                                  check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(rows[-1], flush=True)
        frame = pd.DataFrame(rows)
        if args.append and args.csv.exists():
            frame = pd.concat([pd.read_csv(args.csv), frame], ignore_index=True)
        write_csv_atomic(frame, args.csv)
    plot(args.csv)


if __name__ == "__main__":
    main()
