"""Figure:yale_observation (docs/protocol.md 3.8): singular values of faces; TP/FP neighbours vs k.

All 38 subjects x 64 images at full resolution (192 x 168), pixel / 255, each image
histogram-matched to its subject's first image, not unit-normalised (as `stats_face.m`).
Deviation: exact Euclidean kNN instead of the approximate kd-tree.
"""

import time

import numpy as np
import pandas as pd

from kssc.datasets import load_yaleb

from . import _io
from ._observation import match_histogram, neighbour_rows, singular_value_rows
from ._runner import data_dir, check_config, write_simple

SUBJECTS = [*range(1, 14), *range(15, 40)]


def run(cfg, **kwargs):
    cfg = check_config(cfg)
    started, clock = _io.now(), time.perf_counter()
    exp = cfg.experiment
    subjects = list(exp.subjects) if exp.subjects is not None else SUBJECTS
    size = tuple(exp.size) if exp.size is not None else None
    blocks, rows = [], []
    for position, subject in enumerate(subjects):
        X, _ = load_yaleb(subjects=[subject], size=size, include_bad=exp.include_bad,
                          n_per_subject=exp.n_per_subject, data_dir=str(data_dir(cfg.data_dir)))
        if exp.histogram_match:
            X = np.vstack([X[0]] + [match_histogram(x, X[0]) for x in X[1:]])
        blocks.append(X)
        if position < exp.n_plot_groups:
            rows += singular_value_rows(X, f"yaleB{subject:02d}", exp.n_singular)
    y = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    rows += neighbour_rows(np.vstack(blocks), y, "all", exp.k_max, exp.subspace_dim)
    frame = pd.DataFrame(rows)
    frame.insert(0, "experiment", exp.name)
    return write_simple(cfg, frame, started=started, clock=clock)
