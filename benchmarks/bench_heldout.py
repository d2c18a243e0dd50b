"""The held-out check: the final defaults on clothing images no setting was chosen on.

Run: `python -m benchmarks.bench_heldout [--data FOLDER] [--n 10000]`.
Data: Fashion-MNIST's 10,000 test images (Xiao, Rasul and Vollgraf, 2017; MIT licence),
28 x 28 pixels scaled to [0, 1], never stored in this repository: read from `--data`,
`KSSC_HELDOUT_DIR` or the Debian/Ubuntu package `dataset-fashion-mnist`'s folder
(/usr/share/datasets/fashion-mnist; or the files `t10k-images-idx3-ubyte.gz` and
`t10k-labels-idx1-ubyte.gz` from github.com/zalandoresearch/fashion-mnist). The project
reserves this set for judging whether its defaults generalise (docs/presets.md): it is run
after every choice, and nothing is chosen on it.

Methods, all told the 10 classes, seed 0, on the same pixels: `AutoKSSC` and `KSSC` with
their defaults, the Python peer's SSC-OMP as its own `run_mnist.py` sets it (n_nonzero = 5,
thr = 1e-5, affinity "symmetrize"; folder `KSSC_PEER_DIR`, as in bench_peers), and
scikit-learn's KMeans. Prints accuracy (Hungarian-matched), NMI and time per method (and
its ratio to SSC-OMP's), and writes results/heldout.csv with its sidecar (versions, config,
load average) atomically.
"""

import argparse
import gzip
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score

from benchmarks.bench_peers import DEFAULT_PEER, fit_one, peer_module
from experiments._checkout import REPO_ROOT as REPO
from kssc import KSSC, AutoKSSC

PACKAGE_DIR = Path("/usr/share/datasets/fashion-mnist")
FILES = {"images": "t10k-images-idx3-ubyte.gz", "labels": "t10k-labels-idx1-ubyte.gz"}
TRAIN_FILES = {"images": "train-images-idx3-ubyte.gz", "labels": "train-labels-idx1-ubyte.gz"}


def read_idx(path):
    """An IDX file (gzip-compressed) as a uint8 array of its stated shape."""
    with gzip.open(path, "rb") as handle:
        data = handle.read()
    if data[:2] != b"\0\0" or data[2] != 8:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes (magic {data[:4]!r}).")
    n_dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(n_dims))
    values = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * n_dims)
    if values.size != np.prod(shape):
        raise ValueError(f"{path}: {values.size} bytes of data for the stated shape {shape}.")
    return values.reshape(shape)


def read_split(folder, files, count):
    """(images (count, 28, 28) uint8, labels) of the files `files` in `folder`, checked."""
    paths = {key: Path(folder) / name for key, name in files.items()}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"Fashion-MNIST files missing: {missing}; install the package "
                                "dataset-fashion-mnist or pass --data FOLDER.")
    images, labels = read_idx(paths["images"]), read_idx(paths["labels"])
    if images.shape != (count, 28, 28) or labels.shape != (count,):
        raise ValueError(f"unexpected shapes {images.shape} and {labels.shape} (expected "
                         f"{count:,} images of 28 x 28 in {files['images']}).")
    return images, labels


def load(folder, n, seed=0):
    """(X (n, 784) in [0, 1], y) of `n` test images (all 10,000 when n is None or larger)."""
    images, labels = read_split(folder, FILES, 10_000)
    rows = np.arange(len(labels))
    if n is not None and n < len(rows):
        rows = np.sort(np.random.default_rng(seed).choice(rows, n, replace=False))
    return images[rows].reshape(len(rows), -1) / 255.0, labels[rows].astype(np.int64)


def load_every_image(folder):
    """(X (70,000, 784) in [0, 1], y): the 60,000 training images, then the 10,000 test ones."""
    parts = [read_split(folder, files, count)
             for files, count in ((TRAIN_FILES, 60_000), (FILES, 10_000))]
    images = np.concatenate([images for images, _ in parts])
    labels = np.concatenate([labels for _, labels in parts])
    return images.reshape(len(labels), -1) / 255.0, labels.astype(np.int64)


def methods(peer):
    table = [("kssc_auto", lambda: AutoKSSC(10, random_state=0)),
             ("kssc", lambda: KSSC(10, random_state=0)),
             ("kmeans", lambda: KMeans(10, n_init=10, random_state=0))]
    if peer is not None:
        table.append(("ssc_omp", lambda: peer.SparseSubspaceClusteringOMP(
            n_clusters=10, affinity="symmetrize", n_nonzero=5, thr=1e-5, random_state=0)))
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("KSSC_HELDOUT_DIR") or PACKAGE_DIR))
    parser.add_argument("--n", type=int, default=None, help="images drawn (default: all)")
    parser.add_argument("--output", type=Path, default=REPO / "results" / "heldout.csv")
    args = parser.parse_args(argv)
    from experiments import _io, _produce

    started, start = _io.now(), time.perf_counter()
    X, y = load(args.data, args.n)
    peer_dir = os.environ.get("KSSC_PEER_DIR") or DEFAULT_PEER
    peer, reason = peer_module(peer_dir)
    notes = [f"peer skipped: {reason}"] if peer is None else []
    print(f"Fashion-MNIST (held out): {X.shape[0]} images of {X.shape[1]} pixels; load "
          f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    rows = []
    for name, make in methods(peer):
        estimator = make()
        row = {"dataset": "fashion_mnist_test", "n_samples": len(y), "method": name,
               **fit_one(lambda estimator=estimator: estimator, X, y)}
        row["accuracy_pct"] = 100.0 - row["error"]
        row["nmi"] = normalized_mutual_info_score(y, estimator.labels_)
        row["chosen"] = getattr(estimator, "best_candidate_", "")
        rows.append(row)
        print(f"  {name:10s} accuracy {row['accuracy_pct']:5.1f} %  NMI {row['nmi']:.3f}  "
              f"{row['time_s']:7.1f} s  {row['chosen']}", flush=True)
    frame = pd.DataFrame(rows)
    peer_rows = frame[frame.method == "ssc_omp"]
    frame["time_ratio_to_ssc_omp"] = (frame.time_s / peer_rows.time_s.item()
                                      if len(peer_rows) else np.nan)
    _produce.write_benchmark(frame, args.output, "heldout",
                             {"data": "Fashion-MNIST test images", "n": args.n,
                              "peer_dir": str(peer_dir)},
                             started=started, clock=start, extra={"notes": notes})


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
