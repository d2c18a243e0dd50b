"""Where the exact search gets cheaper than the IVF self-join: time by nprobe against exact.

Run: `python -m benchmarks.bench_ivf_share [--n 20000 50000 100000 200000] [--nprobe 8 16 32
64]`. On the scale experiment's union (10 subspaces of dimension 5-10 in D = 64, noise 0.01,
unit rows, `KSSC`'s abs_cosine metric, k = 20), times the exact search
(`kssc.neighbors._exact.exact_search`) and the IVF self-join with its lists as the defaults
make them (about 2 sqrt(N)) at every fixed `--nprobe` (`IVF(nprobe=p)`: the recall sample's
exact search included, no adaptation). Prints, and writes one row per (N, nprobe) to
bench_ivf_share.csv in results/ (sidecar: versions, load average): the share of the lists
probed, the seconds, their ratio to the exact search's and the sampled recall. The share
above which an adapted nprobe hands over to the exact search
(`kssc.neighbors._ann.EXACT_FROM_SHARE`) is read from these ratios. Asserts nothing.
"""

import argparse
import os
import time
import warnings
from pathlib import Path

import pandas as pd

from experiments._checkout import REPO_ROOT as REPO
from kssc import IVF
from kssc._base import timed
from kssc.datasets import make_union_of_subspaces
from kssc.neighbors._ann import approximate_search
from kssc.neighbors._exact import exact_search
from kssc.utils._validation import normalize_rows

K = 20


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[20_000, 50_000, 100_000, 200_000])
    parser.add_argument("--nprobe", type=int, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--output", type=Path, default=REPO / "results" / "bench_ivf_share.csv")
    args = parser.parse_args(argv)
    from experiments import _io, _produce

    started, start = _io.now(), time.perf_counter()
    rows = []
    for n in args.n:
        X, _ = make_union_of_subspaces(n, ambient_dim=64, n_subspaces=10,
                                       subspace_dims=[5, 6, 7, 8, 9, 10], noise=0.01,
                                       random_state=0)
        P = normalize_rows(X)[0]
        load_average = os.getloadavg()[0]
        seconds = {}
        with timed(seconds, "exact"):
            exact_search(P, K, "abs_cosine")
        exact = seconds["exact"]
        for nprobe in args.nprobe:
            with warnings.catch_warnings(), timed(seconds, "ivf"):
                warnings.simplefilter("ignore")
                info = approximate_search(P, K, metric="abs_cosine", index=IVF(nprobe=nprobe),
                                          random_state=0)[2]
            ivf = seconds["ivf"]
            share = min(nprobe, info["nlist"]) / info["nlist"]
            print(f"N {n:,}: nprobe {nprobe} of {info['nlist']} lists (share 1/{1 / share:.0f}):"
                  f" {ivf:.2f} s = {ivf / exact:.2f} x the exact search's {exact:.2f} s, recall "
                  f"{info['recall']:.3f}", flush=True)
            rows.append({"n_samples": n, "ambient_dim": 64, "nlist": info["nlist"],
                         "nprobe": nprobe, "share": share, "time_ivf_s": ivf,
                         "time_exact_s": exact, "ratio_to_exact": ivf / exact,
                         "recall": info["recall"], "load_average": round(load_average, 2)})
    _produce.write_benchmark(pd.DataFrame(rows), args.output, "bench_ivf_share",
                             {"n": args.n, "nprobe": args.nprobe,
                              "setting": "scale union, D = 64, k = 20, abs_cosine; "
                                         "IVF(nprobe) against exact_search"},
                             started=started, clock=start)


if __name__ == "__main__":
    from experiments import _produce

    _produce.traced_main(main)
