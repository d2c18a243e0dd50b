"""Motion segmentation: split the tracked points of a Hopkins 155 video by rigid motion.

The trajectories of points on one rigidly moving object lie in an affine subspace of
dimension at most 3, so clustering the trajectories separates the motions. The motion
preset (``kssc.presets.preset_params("motion")``, chosen by grouped cross-validation on
Hopkins 155) codes the raw trajectories with an affine constraint over two neighbour views;
the generic setting, which normalises every trajectory to unit norm, is shown beside it.
Needs the Hopkins 155 data (``make data``, or ``KSSC_DATA_DIR``). Run
``python examples/motion.py`` (the cars1 traffic sequence, two motions) or a harder one:
``python examples/motion.py --sequence 1R2RC``.
"""

import argparse

import numpy as np

from kssc import KSSC, clustering_error
from kssc.datasets import list_hopkins_sequences, load_hopkins_sequence
from kssc.presets import preset_params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequence", default="cars1",
                        help=f"one of the {len(list_hopkins_sequences('all'))} sequence names")
    args = parser.parse_args(argv)

    X, y = load_hopkins_sequence(args.sequence)
    n_motions = np.unique(y).size
    print(f"{args.sequence}: {X.shape[0]} points tracked over {X.shape[1] // 2} frames, "
          f"{n_motions} motions")
    for preset in ("motion", "generic"):
        model = KSSC(n_motions, random_state=0, **preset_params(preset)).fit(X)
        print(f"k-SSC preset {preset:7s} error {clustering_error(y, model.labels_):5.1f} %  "
              f"building Z {model.timings_['representation']:.2f} s")


if __name__ == "__main__":
    main()
