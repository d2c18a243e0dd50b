"""k-SSC side by side with its peers on the same data, in one process.

Run: `python -m benchmarks.bench_peers [--sizes 5000 20000] [--quick]` (part of make bench).
Data: bench_kssc's setting, 5 random linear subspaces of dimension 5 in D = 321 (TIR's band
count), drawn by `kssc.datasets.make_union_of_subspaces` (unit-norm points, no noise,
shuffled). Methods, all told the true number of clusters, seed 0:

- k-SSC with its defaults, and with the accurate setting of conf/method/kssc_tuned.yaml
  (Elhamifar and Vidal's ADMM, model and spectral step on each point's candidates);
- the Python peer ChongYou/subspace-clustering (You, Robinson and Vidal, CVPR 2016): SSC-OMP
  and EnSC as its own `run_synthetic.py` sets them (n_nonzero = the subspace dimension,
  thr = 1e-5; gamma = 500 with SPAMS, else scikit-learn's lasso_lars), imported from the
  folder `KSSC_PEER_DIR` (default ../shared/reference/chongyou-subspace-clustering) and
  skipped with a message when it is absent or cannot be imported;
- scikit-learn's SpectralClustering(affinity="nearest_neighbors") and KMeans.

Prints the time, the time ratio to k-SSC's defaults and the clustering error per (N, method);
writes results/peers.csv and its sidecar results/peers.meta.json (versions, config, load
average, wall time) atomically, and figures/peers.png drawn from the CSV. `--quick` runs
N = 300 into a temporary folder unless told otherwise. Timings on a loaded machine are
inflated: the load average at the start and end of each fit is in the CSV.
"""

import argparse
import contextlib
import importlib
import io
import os
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
from sklearn.cluster import KMeans, SpectralClustering

from experiments._checkout import REPO_ROOT as REPO
from kssc import KSSC, clustering_error
from kssc.datasets import make_union_of_subspaces

DEFAULT_PEER = REPO.parent / "shared" / "reference" / "chongyou-subspace-clustering"
TUNED_CONFIG = REPO / "conf" / "method" / "kssc_tuned.yaml"
DATA = {"ambient_dim": 321, "n_subspaces": 5, "subspace_dims": [5], "noise": 0.0}
BASELINE = "kssc"


def union_data(n, seed=0):
    """The benchmark's points and labels (module docstring)."""
    return make_union_of_subspaces(n, random_state=seed, **DATA)


def tuned_kssc(n_clusters):
    """KSSC as conf/method/kssc_tuned.yaml sets it."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    return instantiate(OmegaConf.load(TUNED_CONFIG), n_clusters=n_clusters, random_state=0)


def peer_module(folder):
    """The peer's `cluster.selfrepresentation` module, or the reason it cannot be used."""
    folder = Path(folder)
    if not (folder / "cluster" / "selfrepresentation.py").is_file():
        return None, f"the peer's code was not found at {folder} (set KSSC_PEER_DIR)"
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("cluster.selfrepresentation"), ""
    except ImportError as error:
        return None, f"the peer's code at {folder} does not import ({error})"
    finally:
        sys.path.remove(str(folder))


def ensc_algorithm():
    """EnSC's solver as the peer's run_synthetic.py picks it: SPAMS when installed."""
    try:
        importlib.import_module("spams")
    except ImportError:
        return "lasso_lars"
    return "spams"


def methods(n_clusters, peer, subspace_dim):
    """(name, estimator factory) of every method run; the peer's only when `peer` is set."""
    table = [
        ("kssc", lambda: KSSC(n_clusters, random_state=0)),
        ("kssc_tuned", lambda: tuned_kssc(n_clusters)),
        ("spectral_knn", lambda: SpectralClustering(n_clusters, affinity="nearest_neighbors",
                                                    random_state=0)),
        ("kmeans", lambda: KMeans(n_clusters, n_init=10, random_state=0)),
    ]
    if peer is not None:
        table += [
            ("ssc_omp", lambda: peer.SparseSubspaceClusteringOMP(
                n_clusters=n_clusters, n_nonzero=subspace_dim, thr=1e-5, random_state=0)),
            ("ensc", lambda: peer.ElasticNetSubspaceClustering(
                n_clusters=n_clusters, algorithm=ensc_algorithm(), gamma=500, random_state=0)),
        ]
    return table


def fit_one(make, X, y):
    """Time and error of one fit; the peer's progress bar and warnings are silenced."""
    load_start = os.getloadavg()[0]
    estimator = make()
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        labels = estimator.fit(X).labels_
    return {"time_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu,
            "error": clustering_error(y, labels), "load_start": load_start,
            "load_end": os.getloadavg()[0]}


def run(sizes, peer_dir, skip=(), max_n=None, on_row=None):
    """One row per (N, method) run, and the messages about methods not run.

    `skip` names methods not run; `max_n` maps a method to the largest N it is run at;
    `on_row(frame, notes)` is called with the rows so far after every fit.
    """
    max_n = max_n or {}
    peer, reason = peer_module(peer_dir)
    notes = [f"peer skipped: {reason}"] if peer is None else []
    if peer is not None:
        notes.append(f"peer EnSC solver: {ensc_algorithm()}")
    rows = []
    for n in sizes:
        X, y = union_data(n)
        for name, make in methods(DATA["n_subspaces"], peer, DATA["subspace_dims"][0]):
            if name in skip or n > max_n.get(name, n):
                continue
            row = {"n_samples": n, "method": name, **fit_one(make, X, y)}
            rows.append(row)
            print(f"  N = {n:6d}  {name:13s} {row['time_s']:9.2f} s (CPU {row['cpu_s']:8.2f} s)"
                  f"  error {row['error']:6.2f} %  (load {row['load_start']:.1f})", flush=True)
            if on_row is not None:
                on_row(with_ratios(rows), notes)
    return with_ratios(rows), notes


def with_ratios(rows):
    """The rows as a frame, with each time (wall, CPU) divided by k-SSC's (defaults) at the
    same N: on a loaded machine the CPU ratio is the steadier one."""
    frame = pd.DataFrame(rows)
    baseline = frame[frame.method == BASELINE].set_index("n_samples")
    frame["time_ratio_to_kssc"] = frame.time_s / frame.n_samples.map(baseline.time_s)
    frame["cpu_ratio_to_kssc"] = frame.cpu_s / frame.n_samples.map(baseline.cpu_s)
    return frame


def draw(frame, path):
    """CPU time (log scale) and error per method against N, from the CSV's frame: the CPU
    time, as the wall time of a loaded machine varies with the others' load."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for name, group in frame.groupby("method", sort=False):
        left.plot(group.n_samples, group.cpu_s, "o-", label=name)
        right.plot(group.n_samples, group.error, "o-", label=name)
    left.set(xscale="log", yscale="log", xlabel="N", ylabel="fit CPU time (s)",
             title="CPU time, one process, same data")
    right.set(xscale="log", xlabel="N", ylabel="clustering error (%)", title="Error")
    left.legend(fontsize=8)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    fig.savefig(tmp, dpi=150, bbox_inches="tight", metadata={"Software": "matplotlib"})
    plt.close(fig)
    tmp.replace(path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 20_000])
    parser.add_argument("--quick", action="store_true", help="N = 300, into a temporary folder")
    parser.add_argument("--skip", nargs="*", default=[], help="method names not to run")
    parser.add_argument("--max-n", nargs="*", default=[], metavar="METHOD=N",
                        help="run METHOD only up to N points, e.g. ensc=5000")
    parser.add_argument("--keep", action="store_true",
                        help="keep the output's rows of the N not run now")
    parser.add_argument("--output", type=Path, default=None, help="default results/peers.csv")
    parser.add_argument("--figure", type=Path, default=None, help="default figures/peers.png")
    args = parser.parse_args(argv)
    if args.quick:
        import tempfile

        args.sizes = [300]
        folder = Path(tempfile.mkdtemp(prefix="bench_peers_"))
        args.output = args.output or folder / "peers.csv"
        args.figure = args.figure or folder / "peers.png"
    output = args.output or REPO / "results" / "peers.csv"
    figure = args.figure or REPO / "figures" / "peers.png"
    from experiments import _io, _produce

    started, start = _io.now(), time.perf_counter()
    peer_dir = os.environ.get("KSSC_PEER_DIR") or DEFAULT_PEER
    max_n = {name: int(n) for name, n in (item.split("=") for item in args.max_n)}
    config = {"experiment": {"name": "peers", "sizes": args.sizes, "data": DATA,
                             "skip": args.skip, "max_n": max_n, "peer_dir": str(peer_dir),
                             "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}}
    print(f"k-SSC and its peers, D = {DATA['ambient_dim']}, {DATA['n_subspaces']} subspaces "
          f"of dim {DATA['subspace_dims'][0]}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")

    kept = pd.DataFrame()
    if args.keep and output.is_file():
        kept = pd.read_csv(output)
        kept = kept[~kept.n_samples.isin(args.sizes)]

    def save(frame, notes):  # after every fit, so a long run keeps the rows it has
        frame = pd.concat([kept, frame], ignore_index=True).sort_values("n_samples", kind="stable")
        _produce.write_result(frame, output, config,
                              started=started, wall_time=time.perf_counter() - start,
                              extra={"notes": notes, "load_average_end": os.getloadavg()})
        draw(pd.read_csv(output), figure)

    frame, notes = run(args.sizes, peer_dir, skip=set(args.skip), max_n=max_n, on_row=save)
    for note in notes:
        print(note)
    print("\n     N  method         time (s)  x k-SSC   CPU (s)  x k-SSC  error (%)")
    for row in frame.itertuples():
        print(f"{row.n_samples:6d}  {row.method:13s} {row.time_s:9.2f}"
              f" {row.time_ratio_to_kssc:8.1f} {row.cpu_s:9.2f} {row.cpu_ratio_to_kssc:8.1f}"
              f" {row.error:9.2f}")
    print(f"wrote {output} and {figure}")
    return frame


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
