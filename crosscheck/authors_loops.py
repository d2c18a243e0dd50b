"""The authors' synthetic loops in Octave beside ours, on the same generated data.

`python -m crosscheck.authors_loops --output results/crosscheck_authors_loops_dvsn.csv` runs, per
chosen cell and trial, one Octave session that does what one iteration of
`test_synthetic_dvsn.m` or `test_synthetic_mv.m` does: their generator (the dvsn loop's
inline draw; `gen_depmultivar_data` + `normalize` + noise for mv), `normalize`,
`ssc_relaxed`, `kssc_relaxed_par` and `ncutW` + `condense_clusters`, scored by their
`Misclassification`. Their k-SSC's `ncutW` sits in a try/catch as in the dvsn loop (a throw
scores 0 %, protocol discrepancy 27); the flag is recorded. The generated points and labels
come back through a .mat file, and our KSSC (`conf/method/kssc.yaml` with the cell's k) and
SSC (`conf/method/ssc.yaml`) run on exactly those points.

Variants (column `variant`): "code", the settings of their scripts (dvsn k = min(round(1.5 d),
round(N_i / 2)); mv d = 10, N_i = 20, k = 10), and "paper", the paper text's (dvsn k =
min(round(N_i / 2), round(1.5 D)) on the same data as "code"; mv d = 5, N_i = 50, k = 10 on
data drawn for it).

Neighbours: their k-SSC calls VLFeat's `vl_kdtreequery` (one kd-tree, MAXNUMCOMPARISONS =
10 k + 1, approximate). VLFeat is not installed here; the bridge's stand-in
(`crosscheck.octave.VL_KDTREEQUERY`) returns a table that the driver fills with exact
Euclidean neighbours computed in Octave, so their k-SSC here searches exactly, as ours does.

Rows are appended to --output after every trial (the file is rewritten atomically), so a run
that is stopped keeps what it finished; `crosscheck.reconcile` decomposes the gaps.
"""

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io
from omegaconf import OmegaConf
from sklearn.exceptions import ConvergenceWarning

from experiments import _produce
from experiments._io import now, write_csv
from experiments._trial import method_seed, round_half_up
from kssc import KSSC
from kssc.baselines import SSC
from kssc.metrics import clustering_error

from .environment import REPO_ROOT, build_mex, find_octave, find_reference, missing_requirements
from .octave import call_octave, octave_facts

N_SUBSPACES = 5

DRIVER = r"""function xcheck_loops(in_file, out_file)
% One iteration of the authors' dvsn (kind 1) or mv (kind 2) loop, for every k in S.ks.
S = load(in_file);
try
    pkg load statistics  % mvnrnd, used by gen_depmultivar_data
catch
end
global XCHECK_KNN
rand('state', S.seed); randn('state', S.seed);
n_space = 5; D = S.ambient_dim; d = S.subspace_dim; Ni = S.n_per_subspace;
if S.kind == 1
    % test_synthetic_dvsn.m, the body of its innermost loop
    base_basis = orth(randn(D, d / 3));
    A = zeros(D, n_space * Ni);
    for t = 1 : n_space
        basis = [base_basis orth(randn(D, d - (d / 3)))];
        A(:, Ni * (t - 1) + 1 : Ni * t) = basis * (rand(d, Ni) - 0.5);
    end
    X = A;
else
    % test_synthetic_mv.m
    A = gen_depmultivar_data(D, d, Ni, n_space, S.mean, S.var);
    B = normalize(A);
    X = B + randn(size(B)) * S.noise;
end
truth = reshape(repmat(1:n_space, Ni, 1), n_space * Ni, 1);
X_normed = normalize(X);
out.X = X_normed;
out.truth = truth;
tic;
Z = ssc_relaxed(X_normed, 0.1);
out.ssc_seconds = toc;
out.ssc_error = NaN;
try
    clusters = condense_clusters(ncutW(abs(Z) + abs(Z'), n_space), 1);
    out.ssc_error = Misclassification(clusters, truth);
catch
end
% Exact neighbours for the vl_kdtreequery stand-in: the point itself first.
G = X_normed' * X_normed;
sq = diag(G);
dist = sq + sq' - 2 * G;
dist(1 : size(G, 1) + 1 : end) = -Inf;
[~, order] = sort(dist, 1);
XCHECK_KNN = order(1 : max(S.ks) + 1, :);
out.knn = XCHECK_KNN;
out.kssc_error = NaN(numel(S.ks), 1);
out.kssc_seconds = zeros(numel(S.ks), 1);
for i = 1 : numel(S.ks)
    tic;
    Z = kssc_relaxed_par(X_normed, 0.1, S.ks(i));
    out.kssc_seconds(i) = toc;
    try
        clusters = condense_clusters(ncutW(abs(Z) + abs(Z'), n_space), 1);
        out.kssc_error(i) = Misclassification(clusters, truth);
    catch
        disp('oops');
    end
end
save('-v7', out_file, '-struct', 'out');
end
"""

# The cells run by default: dvsn, a spread over D, N_i and d that includes the cells where
# our committed gap is largest (D = 30, d = 15-18; D = 50, d = 24-30; D = 100, N_i <= 30);
# mv, three (mean, var) cells per noise level from easy to hard.
# Cells with N_i > 90 are left out: one trial there costs minutes of Octave.
DVSN_CELLS = [(30, 30, 9), (30, 60, 15), (30, 90, 18), (30, 45, 12), (30, 60, 6),
              (50, 30, 15), (50, 60, 24), (50, 90, 30), (50, 45, 21),
              (100, 30, 27), (100, 15, 9), (100, 60, 18)]
MV_CELLS = [(noise, mean, var) for noise in (0.0, 0.05, 0.1)
            for mean, var in ((0.1, 5.0), (0.5, 2.5), (1.0, 0.5))]
MV_SETTINGS = {"code": {"subspace_dim": 10, "n_per_subspace": 20},
               "paper": {"subspace_dim": 5, "n_per_subspace": 50}}
MV_AMBIENT_DIM, MV_NEIGHBOURS = 50, 10


def dvsn_neighbours(n_per_subspace, subspace_dim, ambient_dim):
    """k per variant: their code's min(1.5 d, N_i / 2) and the paper text's min(N_i / 2, 1.5 D)."""
    half = round_half_up(n_per_subspace / 2)
    return {"code": min(round_half_up(1.5 * subspace_dim), half),
            "paper": min(half, round_half_up(1.5 * ambient_dim))}


def trial_seed(experiment, cell_index, trial, variant="code"):
    """The Octave generator's seed of one trial (below 2^31, as rand('state', s) takes it)."""
    key = [{"dvsn": 1, "mv": 2}[experiment], cell_index, trial, {"code": 0, "paper": 1}[variant]]
    return int(np.random.SeedSequence(key).generate_state(1)[0] >> 1)


def trial_specs(experiment, cells, trials):
    """One spec per Octave session: the cell, the trial, the seed and the k of each variant.

    dvsn: one session per (cell, trial) serving both variants (same data, two k); mv: one
    session per (cell, trial, variant), since the paper's d and N_i change the data.
    """
    specs = []
    for trial in range(trials):
        for index, cell in enumerate(cells):
            if experiment == "dvsn":
                D, n, d = cell
                specs.append({"experiment": "dvsn", "kind": 1, "ambient_dim": D,
                              "n_per_subspace": n, "subspace_dim": d, "mean": np.nan,
                              "var": np.nan, "noise": np.nan, "trial": trial,
                              "seed": trial_seed("dvsn", index, trial),
                              "ks": dvsn_neighbours(n, d, D)})
                continue
            noise, mean, var = cell
            for variant, sizes in MV_SETTINGS.items():
                specs.append({"experiment": "mv", "kind": 2, "ambient_dim": MV_AMBIENT_DIM,
                              **sizes, "mean": mean, "var": var, "noise": noise,
                              "trial": trial, "seed": trial_seed("mv", index, trial, variant),
                              "ks": {variant: MV_NEIGHBOURS}})
    return specs


def method_settings(name, **overrides):
    """A method's parameters as its conf/method/<name>.yaml states them, with `overrides`."""
    conf = OmegaConf.to_container(OmegaConf.load(REPO_ROOT / "conf" / "method" / f"{name}.yaml"))
    conf.pop("_target_")
    return {**conf, **overrides}


def cross_share(neighbours, y):
    """Share of the neighbour table's entries (n, k) that lie in another subspace."""
    return float(np.mean(y[neighbours] != y[:, None]))


def trial_file(spec):
    """The name of one trial's saved Octave outputs."""
    keys = ("experiment", "ambient_dim", "n_per_subspace", "subspace_dim", "mean", "var",
            "noise", "trial", "seed")
    return "_".join(f"{spec[key]:g}" if isinstance(spec[key], float) else str(spec[key])
                    for key in keys) + ".mat"


def run_theirs(spec, octave, reference, mex_dir, work_dir):
    """One Octave session of the driver for `spec`; returns its outputs and its seconds."""
    work_dir = Path(work_dir)
    fields = {key: float(spec[key]) for key in ("kind", "ambient_dim", "subspace_dim",
                                                 "n_per_subspace", "mean", "var", "noise",
                                                 "seed")}
    fields["ks"] = np.array(list(spec["ks"].values()), dtype=np.float64)
    scipy.io.savemat(work_dir / "loop_in.mat", fields, oned_as="column")
    start = time.monotonic()
    call_octave(octave, reference, mex_dir, work_dir, "xcheck_loops", DRIVER,
                work_dir / "loop_in.mat", work_dir / "loop_out.mat", timeout=1800)
    return scipy.io.loadmat(work_dir / "loop_out.mat"), time.monotonic() - start


def trial_rows(spec, out, seconds):
    """Rows (one per variant) of their and our errors on the data their generator drew."""
    X = np.ascontiguousarray(out["X"].T)
    y = out["truth"].ravel().astype(np.int64) - 1
    knn = out["knn"].astype(np.int64) - 1  # (k_max + 1, n), the point itself first
    seed = method_seed(spec["seed"])
    ssc = SSC(N_SUBSPACES, random_state=seed, **method_settings("ssc")).fit(X)
    error_ssc_ours = clustering_error(y, ssc.labels_)
    rows = []
    for i, (variant, k) in enumerate(spec["ks"].items()):
        kssc = KSSC(N_SUBSPACES, random_state=seed,
                    **method_settings("kssc", n_neighbors=int(k))).fit(X)
        error_theirs = 100 * float(out["kssc_error"].ravel()[i])
        failed = bool(np.isnan(error_theirs))
        rows.append({
            "experiment": spec["experiment"], "variant": variant,
            **{key: spec[key] for key in ("ambient_dim", "n_per_subspace", "subspace_dim",
                                          "mean", "var", "noise", "trial", "seed")},
            "k": int(k),
            "error_kssc_theirs": error_theirs,
            "kssc_failed_theirs": failed,
            # their dvsn loop's try/catch leaves a failed cell at its initial 0 %
            "error_kssc_theirs_scored": 0.0 if failed else error_theirs,
            "error_ssc_theirs": 100 * float(out["ssc_error"].item()),
            "error_kssc_ours": clustering_error(y, kssc.labels_),
            "error_ssc_ours": error_ssc_ours,
            "cross_neighbours_theirs": cross_share(knn[1:int(k) + 1].T, y),
            "cross_neighbours_ours": cross_share(kssc.neighbors_, y),
            "seconds_octave": seconds,
        })
    return rows


def run(specs, output, work_dir, data_dir, deadline=None):
    """Run every spec (until `deadline`, a time.monotonic() value), rewriting `output` per trial.

    Each trial's Octave outputs (their X, truth, neighbour table, errors) are kept in
    `data_dir` as `<experiment>_<ambient_dim>_<n_per_subspace>_<subspace_dim>_<mean>_<var>_
    <noise>_<trial>_<seed>.mat`, so other variants of ours can run on the same data later.
    An existing `output` is resumed: its rows are kept and the specs they cover (same seed
    and variants) are skipped.
    """
    output = Path(output)
    rows = pd.read_csv(output).to_dict("records") if output.is_file() else []
    done = {(row["seed"], row["variant"]) for row in rows}
    specs = [spec for spec in specs
             if not all((spec["seed"], variant) in done for variant in spec["ks"])]
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    octave, reference = find_octave(), find_reference()
    mex_dir = build_mex(reference, Path(work_dir) / "mex")
    for spec in specs:
        if deadline is not None and time.monotonic() > deadline:
            print("deadline reached; stopping", flush=True)
            break
        out, seconds = run_theirs(spec, octave, reference, mex_dir, work_dir)
        scipy.io.savemat(data_dir / trial_file(spec),
                         {key: value for key, value in out.items() if not key.startswith("__")})
        rows.extend(trial_rows(spec, out, seconds))
        write_csv(pd.DataFrame(rows), output)
        print(pd.DataFrame(rows[-len(spec["ks"]):]).drop(columns=["seed"]).to_string(
            index=False, header=False, float_format=lambda v: f"{v:.3g}"),
            flush=True)
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m crosscheck.authors_loops",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiments", nargs="+", default=["dvsn", "mv"],
                        choices=["dvsn", "mv"])
    parser.add_argument("--trials", type=int, default=5, help="trials per cell")
    parser.add_argument("--cells", type=int, default=None,
                        help="only the first n cells of each experiment (a smoke run)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="start no trial after this many minutes")
    parser.add_argument("--sessions", type=int, default=None,
                        help="run only the first n Octave sessions, trials outermost (a cut "
                             "that --minutes made, made again)")
    parser.add_argument("--data-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "kssc_authors_loops_data",
                        help="where each trial's generated data are kept (.mat; not committed)")
    parser.add_argument("--output", type=Path,
                        default=Path(tempfile.gettempdir()) / "kssc_authors_loops.csv")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)  # SSC at max_iter, as theirs stops too
    reasons = missing_requirements()
    if reasons:
        print("skipped: " + "; ".join(reasons) + ".")
        return 0
    # Trials outermost (a stable sort): a run stopped by --minutes has every cell at the
    # same trial count, give or take one.
    cells = {"dvsn": DVSN_CELLS, "mv": MV_CELLS}
    specs = sorted((spec for experiment in args.experiments
                    for spec in trial_specs(experiment, cells[experiment][:args.cells],
                                            args.trials)), key=lambda spec: spec["trial"])
    specs = specs[:args.sessions]
    deadline = None if args.minutes is None else time.monotonic() + 60 * args.minutes
    started, clock = now(), time.perf_counter()
    config = {"experiment": {
        "name": f"crosscheck_authors_loops_{'_'.join(args.experiments)}",
        "experiments": args.experiments, "trials": args.trials,
        "cells": {name: cells[name][:args.cells] for name in args.experiments},
        "mv_settings": MV_SETTINGS, "mv_ambient_dim": MV_AMBIENT_DIM,
        "mv_neighbours": MV_NEIGHBOURS, "minutes": args.minutes,
        "sessions": args.sessions,
        "kssc": method_settings("kssc"), "ssc": method_settings("ssc")}}
    earlier = _produce.resumed_from(args.output)
    with tempfile.TemporaryDirectory(prefix="kssc-loops-") as work_dir:
        table = run(specs, args.output, work_dir, args.data_dir, deadline)
    if args.output.is_file():  # the CSV is rewritten per trial; its sidecar once, at the end
        _produce.write_resumed_sidecar(args.output, config, earlier, started=started,
                                       wall_time=time.perf_counter() - clock,
                                       extra=octave_facts())
    print(f"{len(table)} rows: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(_produce.traced_main(main))
