"""A million points: k-SSC on a synthetic union of subspaces that SSC could not hold.

SSC's representation has n^2 entries (8 TB at a million points); k-SSC's has k n. Above
50,000 points the estimator switches to an approximate neighbour index (faiss), and the
spectral step runs on a sparse affinity. The size comes from ``--n-samples`` or the
environment variable ``KSSC_EXAMPLE_N_SAMPLES`` (default 1,000,000; docs/scaling.md has
measured times and memory): ``python examples/million_points.py --n-samples 100000``.
"""

import argparse
import os

from kssc import KSSC, clustering_error
from kssc.datasets import make_subspaces


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int,
                        default=os.environ.get("KSSC_EXAMPLE_N_SAMPLES", "1000000"))
    args = parser.parse_args(argv)

    n_subspaces = 10
    X, y, _ = make_subspaces(n_subspaces, 5, args.n_samples // n_subspaces, 30, noise=0.01,
                             random_state=0)
    print(f"{X.shape[0]:,} points in {X.shape[1]} dimensions, "
          f"{n_subspaces} subspaces of dimension 5")
    model = KSSC(n_clusters=n_subspaces, n_neighbors=10, random_state=0).fit(X)
    print(f"error {clustering_error(y, model.labels_):.2f} %")
    print("seconds per stage: " + ", ".join(f"{stage} {seconds:.1f}"
                                            for stage, seconds in model.timings_.items()))


if __name__ == "__main__":
    main()
