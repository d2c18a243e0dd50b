"""Figure:yale_observation (docs/protocol.md 3.8): singular values of faces; TP/FP neighbours vs k.

All 38 subjects x 64 images at full resolution (192 x 168), pixel / 255, each image
histogram-matched to its subject's first image, not unit-normalised (as `stats_face.m`).
Deviation: exact Euclidean kNN instead of the approximate kd-tree.
"""

import numpy as np
import pandas as pd

from kssc.datasets import YALEB_SUBJECTS, load_yaleb

from ._observation import match_histogram, neighbour_rows, singular_value_rows, summarise_dims
from ._trial import Experiment


def compute(exp, data_dir):
    subjects = list(exp["subjects"]) if exp.get("subjects") is not None else list(YALEB_SUBJECTS)
    size = tuple(exp["size"]) if exp.get("size") is not None else None
    blocks, rows = [], []
    for position, subject in enumerate(subjects):
        X, _ = load_yaleb(subjects=[subject], size=size, include_bad=exp["include_bad"],
                          n_per_subject=exp["n_per_subject"], data_dir=data_dir)
        if exp["histogram_match"]:
            X = np.vstack([X[0]] + [match_histogram(x, X[0]) for x in X[1:]])
        blocks.append(X)
        if position < exp["n_plot_groups"]:
            rows += singular_value_rows(X, f"yaleB{subject:02d}", exp["n_singular"])
    y = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    rows += neighbour_rows(np.vstack(blocks), y, "all", exp["k_max"], exp["subspace_dim"])
    return pd.DataFrame(rows)


EXPERIMENT = Experiment(compute=compute, summary=summarise_dims)
