"""Handwritten digits: k-SSC (the generic preset) against SSC on scikit-learn's 8 x 8 digits.

Each digit's images lie near a low-dimensional subspace of the 64 pixels, so subspace
clustering separates them without labels. k-SSC codes every image over its 20 nearest
neighbours (``kssc.presets.preset_params("generic")``, the setting the real-data panel
chooses for digits, docs/presets.md); SSC codes it over all the others, which costs memory
and time quadratic in the number of images. Run ``python examples/digits.py`` (all 1,797 images) or
``python examples/digits.py --n-samples 500``.
"""

import argparse
from time import perf_counter

from sklearn.datasets import load_digits

from kssc import KSSC, clustering_error
from kssc.baselines import SSC
from kssc.presets import preset_params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=None, help="first images only")
    args = parser.parse_args(argv)

    X, y = load_digits(return_X_y=True)
    X, y = X[:args.n_samples], y[:args.n_samples]
    print(f"{X.shape[0]} images of {X.shape[1]} pixels, 10 digits")
    for name, model in [("k-SSC", KSSC(10, random_state=0, **preset_params("generic"))),
                        ("SSC", SSC(n_clusters=10, tol=1e-4, random_state=0))]:
        start = perf_counter()
        model.fit(X)
        seconds = perf_counter() - start
        print(f"{name:6s} error {clustering_error(y, model.labels_):5.1f} %  fit {seconds:.1f} s")


if __name__ == "__main__":
    main()
