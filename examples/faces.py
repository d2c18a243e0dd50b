"""Faces: Extended Yale B subjects under varying light, clustered with the face preset.

The images of one face under changing illumination lie near a 9-dimensional subspace, but
the light, shared by every face, dominates which images look alike. The face preset
(``kssc.presets.preset_params("faces")``, chosen on Yale B subject group 1) finds each
image's candidates once the top 5 principal directions are removed and codes the raw images
with an outlier term; the generic setting is shown beside it, and the automatic choice
(``kssc.AutoKSSC``), which fits generic, faces and motion and keeps the one a label-free
criterion prefers. Needs the Yale B data
(``make data``, or ``KSSC_DATA_DIR``). Run ``python examples/faces.py`` (yaleB11-13 and
15-16, of subject group 2, at 48 x 42 pixels, as validated) or choose others:
``python examples/faces.py --subjects 21 22 23 --size 48 42``.
"""

import argparse
from time import perf_counter

from kssc import KSSC, AutoKSSC, clustering_error
from kssc.datasets import load_yaleb
from kssc.presets import preset_params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, nargs="+", default=[11, 12, 13, 15, 16],
                        help="yaleB subject numbers (1..39 without 14)")
    parser.add_argument("--size", type=int, nargs=2, default=[48, 42], metavar=("HEIGHT", "WIDTH"),
                        help="image size after resizing (validated at 48 42)")
    args = parser.parse_args(argv)

    X, y = load_yaleb(args.subjects, size=args.size, include_bad=False)
    n_clusters = len(set(args.subjects))
    print(f"{X.shape[0]} images of {X.shape[1]} pixels, subjects {args.subjects}")
    for preset in ("faces", "generic"):
        model = KSSC(n_clusters, random_state=0, **preset_params(preset))
        start = perf_counter()
        model.fit(X)
        seconds = perf_counter() - start
        print(f"k-SSC preset {preset:8s} error {clustering_error(y, model.labels_):5.1f} %  "
              f"fit {seconds:.1f} s")
    start = perf_counter()
    auto = AutoKSSC(n_clusters, random_state=0).fit(X)
    seconds = perf_counter() - start
    print(f"AutoKSSC (kept {auto.best_candidate_}) error "
          f"{clustering_error(y, auto.labels_):5.1f} %  fit {seconds:.1f} s")


if __name__ == "__main__":
    main()
