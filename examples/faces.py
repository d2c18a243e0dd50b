"""Faces: Extended Yale B subjects under varying light, as in the paper's face table.

The images of one face under changing illumination lie near a 9-dimensional subspace. This
clusters the 64 frontal images of a few subjects at 96 x 84 pixels (the paper's setting)
with k-SSC (k = 25) and its baselines. Needs the Yale B data (``make data``, or
``KSSC_DATA_DIR``). Run ``python examples/faces.py``, or choose the subjects and a smaller
size: ``python examples/faces.py --subjects 1 2 3 4 --size 48 42``.
"""

import argparse
import warnings
from time import perf_counter

from kssc import KSSC, clustering_error
from kssc.baselines import GSC, SSC, TSC
from kssc.datasets import load_yaleb


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, nargs="+", default=[1, 2, 3],
                        help="yaleB subject numbers (1..39 without 14)")
    parser.add_argument("--size", type=int, nargs=2, default=[96, 84], metavar=("HEIGHT", "WIDTH"),
                        help="image size after resizing (the paper: 96 84)")
    args = parser.parse_args(argv)

    X, y = load_yaleb(args.subjects, size=args.size, include_bad=False)
    n_clusters = len(set(args.subjects))
    print(f"{X.shape[0]} images of {X.shape[1]} pixels, subjects {args.subjects}")
    models = [("k-SSC", KSSC(n_clusters=n_clusters, n_neighbors=25, random_state=0)),
              ("SSC", SSC(n_clusters=n_clusters, random_state=0)),
              ("GSC", GSC(n_clusters=n_clusters, n_neighbors=25, max_subspace_dim=9,
                          random_state=0)),
              ("TSC", TSC(n_clusters=n_clusters, n_neighbors=25, random_state=0))]
    for name, model in models:
        start = perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SSC's solver stops at max_iter, as the paper's did
            model.fit(X)
        seconds = perf_counter() - start
        print(f"{name:6s} error {clustering_error(y, model.labels_):5.1f} %  fit {seconds:.1f} s")


if __name__ == "__main__":
    main()
