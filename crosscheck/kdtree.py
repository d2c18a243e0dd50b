"""The authors' approximate neighbour search, re-implemented: VLFeat's single kd-tree.

Their `kssc_relaxed_par` calls `vl_kdtreequery(vl_kdtreebuild(X), X, X, 'NUMNEIGHBORS',
k + 1, 'MAXNUMCOMPARISONS', 10 * (k + 1/10))`. VLFeat is not installed here, so this module
follows its documented algorithm (`vl/kdtree.c`, Beis and Lowe's best-bin-first search) in
our own code: one tree, each node split at the median of its points along the dimension of
largest variance (one tree means no random choice among the top dimensions), one point per
leaf; a query descends to the nearest leaf, queues the far children with a lower bound on
their squared distance, and goes on from the most promising queued node until it has
compared `max_comparisons` points (0: no limit, an exact search).

`python -m crosscheck.kdtree --output results/crosscheck_kdtree.csv` runs, on
each trial's data saved by `crosscheck.authors_loops`, our k-SSC coefficients, affinity and
N-Cut with these neighbours and with the exact ones, and records both errors, the recall of
the kd-tree's neighbours and their cross-subspace share.
"""

import argparse
import hashlib
import heapq
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io

from experiments import _produce
from experiments._io import now, write_csv
from experiments._trial import method_seed

from .authors_loops import cross_share
from .dvsn import error_with_neighbours
from .environment import REPO_ROOT

_LEAF = -1


class KDTree:
    """VLFeat's kd-tree over the rows of `X` (n, D): build once, then `query`."""

    def __init__(self, X):
        self.X = np.asarray(X, dtype=np.float64)
        n, n_dims = self.X.shape
        self.split_dim, self.threshold, self.lower, self.upper, self.point = [], [], [], [], []
        self.low_bound, self.high_bound = [], []
        self._order = np.arange(n)
        self._build(0, n)
        self._bounds(0, np.full(n_dims, -np.inf), np.full(n_dims, np.inf))

    def _node(self):
        for field in (self.split_dim, self.threshold, self.lower, self.upper, self.point,
                      self.low_bound, self.high_bound):
            field.append(0)
        return len(self.lower) - 1

    def _build(self, begin, end):
        node = self._node()
        variance = self.X[self._order[begin:end]].var(axis=0) if end - begin > 1 else None
        if variance is None or variance.max() <= 0:
            self.lower[node] = self.upper[node] = _LEAF
            self.point[node] = self._order[begin]
            return node
        dim = int(np.argmax(variance))  # the first of equal maxima, as VLFeat's heap keeps
        segment = self._order[begin:end]
        segment = segment[np.argsort(self.X[segment, dim], kind="stable")]
        self._order[begin:end] = segment
        median = (begin + end - 1) // 2
        self.split_dim[node], self.threshold[node] = dim, self.X[self._order[median], dim]
        self.lower[node] = self._build(begin, median + 1)
        self.upper[node] = self._build(median + 1, end)
        return node

    def _bounds(self, node, low, high):
        """Each node's extent along its own split dimension (VLFeat's lower/upperBound)."""
        if self.lower[node] == _LEAF:
            return
        dim = self.split_dim[node]
        self.low_bound[node], self.high_bound[node] = low[dim], high[dim]
        saved = high[dim]
        high[dim] = self.threshold[node]
        self._bounds(self.lower[node], low, high)
        high[dim] = saved
        saved = low[dim]
        low[dim] = self.threshold[node]
        self._bounds(self.upper[node], low, high)
        low[dim] = saved

    def query(self, q, n_neighbors, max_comparisons=0):
        """Indices of the (approximate) `n_neighbors` nearest rows to `q`, nearest first."""
        found = []  # max-heap by squared distance: (-distance, index)
        queue = [(0.0, 0)]  # (lower bound on the squared distance, node)
        comparisons = 0
        while queue and (max_comparisons == 0 or comparisons < max_comparisons):
            bound, node = heapq.heappop(queue)
            if len(found) == n_neighbors and -found[0][0] < bound:
                break
            while self.lower[node] != _LEAF:
                x = q[self.split_dim[node]]
                low, mid, high = self.low_bound[node], self.threshold[node], self.high_bound[node]
                far = bound + (x - mid) ** 2
                if x <= mid:
                    near, other = self.lower[node], self.upper[node]
                    far -= (x - low) ** 2 if x <= low else 0.0
                else:
                    near, other = self.upper[node], self.lower[node]
                    far -= (x - high) ** 2 if x > high else 0.0
                if len(found) < n_neighbors or -found[0][0] > far:
                    heapq.heappush(queue, (far, other))
                node = near
            index = self.point[node]
            distance = float(np.sum((self.X[index] - q) ** 2))
            comparisons += 1
            if len(found) < n_neighbors:
                heapq.heappush(found, (-distance, index))
            elif -found[0][0] > distance:
                heapq.heapreplace(found, (-distance, index))
        return np.array([index for _, index in sorted(found, key=lambda f: -f[0])])


def their_neighbours(X_unit, n_neighbors):
    """The table their k-SSC builds: k + 1 kd-tree neighbours with MAXNUMCOMPARISONS =
    10 (k + 1/10), the first (the point itself, found in its own leaf) dropped; (n, k)."""
    tree = KDTree(X_unit)
    budget = int(round(10 * (n_neighbors + 0.1)))
    return np.stack([tree.query(x, n_neighbors + 1, budget)[1:] for x in X_unit])


def exact_neighbours(X_unit, n_neighbors):
    """The exact k nearest rows of every row (itself excluded), nearest first; (n, k)."""
    sq = np.sum(X_unit ** 2, axis=1)
    dist = sq[:, None] + sq[None, :] - 2 * X_unit @ X_unit.T
    np.fill_diagonal(dist, np.inf)
    return np.argsort(dist, axis=1, kind="stable")[:, :n_neighbors]


def data_digest(data_dir):
    """Short SHA-256 over the saved trial data in `data_dir` (each file's name and arrays:
    their names, dtypes, shapes and values, not the file's bytes, whose header holds its
    creation time), for the sidecar: which data the rows were computed on."""
    digest = hashlib.sha256()
    for path in sorted(Path(data_dir).rglob("*.mat")):
        digest.update(path.name.encode())
        saved = scipy.io.loadmat(path)
        for name in sorted(key for key in saved if not key.startswith("__")):
            array = np.ascontiguousarray(saved[name])
            digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
            digest.update(array.tobytes())
    return digest.hexdigest()[:16]


def run(loops, data_dir, output):
    """One row per loops row whose data are in `data_dir` (searched recursively): our k-SSC
    with exact and with kd-tree neighbours on the same data, rewriting `output` per row. An
    existing `output` is resumed: the (seed, variant) rows it has are kept, not recomputed."""
    files = {int(path.stem.rsplit("_", 1)[1]): path for path in Path(data_dir).rglob("*.mat")}
    output = Path(output)
    rows = pd.read_csv(output).to_dict("records") if output.is_file() else []
    done = {(row["seed"], row["variant"]) for row in rows}
    for r in loops[loops["seed"].isin(files)].itertuples():
        if (r.seed, r.variant) in done:
            continue
        saved = scipy.io.loadmat(files[r.seed])
        X = np.ascontiguousarray(saved["X"].T)
        y = saved["truth"].ravel().astype(np.int64) - 1
        exact, approx = exact_neighbours(X, r.k), their_neighbours(X, r.k)
        seed = method_seed(r.seed)
        rows.append({"experiment": r.experiment, "variant": r.variant, "seed": r.seed,
                     "trial": r.trial, "k": r.k,
                     "error_kssc_ours_exact": error_with_neighbours(X, y, exact, seed),
                     "error_kssc_ours_kdtree": error_with_neighbours(X, y, approx, seed),
                     "recall_kdtree": float(np.mean([len(np.intersect1d(a, b)) / r.k
                                                     for a, b in zip(exact, approx,
                                                                     strict=True)])),
                     "cross_neighbours_kdtree": cross_share(approx, y)})
        write_csv(pd.DataFrame(rows), output)
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m crosscheck.kdtree", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loops", type=Path, nargs="+",
                        default=[REPO_ROOT / "results" / f"crosscheck_authors_loops_{name}.csv"
                                 for name in ("dvsn", "mv")])
    parser.add_argument("--data-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "kssc_authors_loops_data")
    parser.add_argument("--output", type=Path,
                        default=Path(tempfile.gettempdir()) / "kssc_kdtree.csv")
    args = parser.parse_args(argv)
    started, clock = now(), time.perf_counter()
    config = {"experiment": {"name": "crosscheck_kdtree",
                             "data": {"n_files": len(list(Path(args.data_dir).rglob("*.mat"))),
                                      "digest": data_digest(args.data_dir)},
                             "input_files": _produce.input_files(*args.loops)}}
    loops = pd.concat([pd.read_csv(path) for path in args.loops], ignore_index=True)
    earlier = _produce.resumed_from(args.output)
    table = run(loops, args.data_dir, args.output)
    if args.output.is_file():  # the CSV is rewritten per row; its sidecar once, at the end
        _produce.write_resumed_sidecar(args.output, config, earlier, started=started,
                                       wall_time=time.perf_counter() - clock)
    print(table.groupby(["experiment", "variant"])[
        ["error_kssc_ours_exact", "error_kssc_ours_kdtree", "recall_kdtree",
         "cross_neighbours_kdtree"]].mean().round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(_produce.traced_main(main))
