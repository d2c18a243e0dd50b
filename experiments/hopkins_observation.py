"""Figure:hopkins_observation (docs/protocol.md 3.9): singular values of motions; TP/FP vs k.

The 41 sequences, raw trajectories X (P, 2F), not normalised, no noise. Singular values
of every motion of the first sequences (the code kept only each sequence's last motion,
which the figure draws; all are stored, column `motion`). TP/FP per sequence; the figure
shows their mean and the median of the 'sufficient' indicator. Exact kNN (deviation).
"""

import time

import numpy as np
import pandas as pd

from kssc.datasets import load_hopkins_sequence

from . import _io
from ._observation import neighbour_rows, singular_value_rows
from ._runner import data_dir, check_config, write_simple
from .hopkins import sequences


def run(cfg, **kwargs):
    cfg = check_config(cfg)
    started, clock = _io.now(), time.perf_counter()
    exp = cfg.experiment
    folder = str(data_dir(cfg.data_dir))
    rows = []
    for position, name in enumerate(sequences(exp, folder)):
        X, y = load_hopkins_sequence(name, data_dir=folder)
        if position < exp.n_plot_groups:
            motions = np.unique(y)
            for motion in motions:
                rows += singular_value_rows(X[y == motion], name, exp.n_singular,
                                            motion=int(motion), last_motion=bool(motion == motions[-1]))
        rows += neighbour_rows(X, y, name, exp.k_max, exp.subspace_dim)
    frame = pd.DataFrame(rows)
    frame.insert(0, "experiment", exp.name)
    return write_simple(cfg, frame, started=started, clock=clock)
