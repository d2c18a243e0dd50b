"""The GSC face gap: the authors' `gsc_sc` and our GSC on the yale experiment's own draws.

`python -m crosscheck.gsc_faces --draws 5` takes the first draws of `results/yale.csv`
(variant faithful: the subjects and seed of each trial), rebuilds each draw's images as
`experiments/yale.py` does, and clusters them with the authors' `gsc_sc(X, 25, 9)` + `ncutW`
in Octave and with our `GSC(n_neighbors=25, max_subspace_dim=9)`, plus the variants that
could explain the paper's lower error (`variant="orthonormal"`: Park et al.'s NSN;
`assign_labels="kmeans"`). `--ours-only` skips Octave (seconds per draw instead of minutes).
Prints one row per draw and the mean, median, min and max.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io

from experiments import _produce
from experiments._checkout import REPO_ROOT
from experiments._io import now
from experiments._trial import method_seed
from kssc.baselines import GSC
from kssc.datasets import load_yaleb
from kssc.metrics import clustering_error

from .compare import max_abs_dz
from .environment import (
    build_mex,
    find_octave,
    find_reference,
    missing_requirements,
)
from .inputs import write_inputs
from .octave import call_octave, octave_facts

DRIVER = r"""function xcheck_gsc(in_file, out_file)
S = load(in_file);
rand('seed', 1);
tic; Z = gsc_sc(S.X, S.K, S.max_dim); out.seconds = toc;
out.Z = full(Z);
out.labels = condense_clusters(ncutW(abs(Z) + abs(Z'), S.n_clusters), 1);
save('-v7', out_file, '-struct', 'out');
end
"""


def yale_draws(n_draws, variant="faithful", results=REPO_ROOT / "results" / "yale.csv"):
    """(subjects, seed) of the first `n_draws` trials of the committed yale run."""
    frame = pd.read_csv(results)
    rows = frame[(frame["method"] == "gsc") & (frame["variant"] == variant)].sort_values("trial")
    return [([int(s) for s in r.subjects.split("-")], int(r.seed), float(r.error_pct))
            for r in rows.head(n_draws).itertuples()]


def draw_images(subjects, include_bad=True):
    """The draw's images (192, 8064) and labels by draw position, as experiments/yale.py."""
    blocks = [load_yaleb([s], size=(96, 84), include_bad=include_bad, n_per_subject=64)[0]
              for s in subjects]
    X = np.vstack(blocks)
    return X, np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])


def run_theirs(octave, reference, mex_dir, work_dir, X_unit, y, K=25, max_dim=9):
    """Their gsc_sc + ncutW on the unit points; returns (Z, labels)."""
    work_dir = Path(work_dir)
    in_file = write_inputs(work_dir / "gsc_in.mat", X_unit, y, K=K, max_dim=max_dim, n_clusters=3)
    out_file = work_dir / "gsc_out.mat"
    call_octave(octave, reference, mex_dir, work_dir, "xcheck_gsc", DRIVER, in_file, out_file)
    out = scipy.io.loadmat(out_file)
    return out["Z"], out["labels"].ravel().astype(int), float(out["seconds"].item())


def compare_draws(n_draws, work_dir, ours_only=False):
    """One row per draw: committed, our and their errors, max |dZ|, and our variants' errors."""
    octave, reference = find_octave(), find_reference()
    mex_dir = None if ours_only else build_mex(reference, Path(work_dir) / "mex")
    rows = []
    for subjects, seed, committed in yale_draws(n_draws):
        X, y = draw_images(subjects)
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        X_unit = X / np.where(norms == 0, 1.0, norms)
        ours = GSC(3, n_neighbors=25, max_subspace_dim=9, random_state=method_seed(seed)).fit(X)
        row = {"subjects": "-".join(map(str, subjects)), "error_committed": committed,
               "error_ours": clustering_error(y, ours.labels_)}
        if not ours_only:
            Z, labels, seconds = run_theirs(octave, reference, mex_dir, work_dir, X_unit, y)
            row.update(error_theirs=clustering_error(y, labels),
                       max_abs_dZ=max_abs_dz(ours.representation_matrix_, Z),
                       seconds_theirs=seconds)
        for name, model in {
            "orthonormal": GSC(3, n_neighbors=25, max_subspace_dim=9, variant="orthonormal"),
            "kmeans": GSC(3, n_neighbors=25, max_subspace_dim=9, assign_labels="kmeans"),
        }.items():
            model.set_params(random_state=method_seed(seed))
            row[f"error_{name}"] = clustering_error(y, model.fit(X).labels_)
        rows.append(row)
        print(pd.DataFrame([row]).to_string(index=False, float_format=lambda v: f"{v:.3g}"),
              flush=True)
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m crosscheck.gsc_faces", description=__doc__)
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--ours-only", action="store_true",
                        help="only our GSC and its variants (no Octave)")
    parser.add_argument("--output", type=Path, default=None,
                        help="write the per-draw table here (committed: "
                             "results/crosscheck_gsc_faces.csv)")
    args = parser.parse_args(argv)
    reasons = missing_requirements()
    if reasons and not args.ours_only:
        print("skipped: " + "; ".join(reasons) + ".")
        return 0
    started, clock = now(), time.perf_counter()
    config = {"experiment": {"name": "crosscheck_gsc_faces", "draws": args.draws,
                             "ours_only": args.ours_only,
                             "input_files": _produce.input_files(
                                 REPO_ROOT / "results" / "yale.csv")}}
    with tempfile.TemporaryDirectory(prefix="kssc-gsc-") as work_dir:
        table = compare_draws(args.draws, work_dir, args.ours_only)
    if args.output is not None:
        _produce.write_result(table, args.output, config, started=started,
                              wall_time=time.perf_counter() - clock,
                              extra=None if args.ours_only else octave_facts())
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(table.drop(columns="subjects").agg(["mean", "median", "min", "max"]).round(1).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(_produce.traced_main(main))
