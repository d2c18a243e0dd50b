"""`python -m crosscheck`: our methods and the authors' on identical inputs, side by side."""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from hydra.utils import instantiate
from omegaconf import OmegaConf

from experiments import _produce
from experiments._checkout import CONF_DIR, REPO_ROOT
from experiments._io import now
from kssc.baselines.sssc import in_sample_codes
from kssc.metrics import clustering_error
from kssc.spectral._clustering import _normalized_affinity, ncut, ncut_embedding, top_eigenvectors

from .compare import label_agreement, max_abs_dz
from .environment import build_mex, find_octave, find_reference, missing_requirements
from .inputs import (
    INPUTS,
    SETTINGS,
    kdtree_stand_in,
    make_input,
    random_labelings,
    write_inputs,
)
from .octave import octave_facts, run_driver
from .sidecar import crosscheck_config, staleness

OUTPUT = REPO_ROOT / "results" / "crosscheck.csv"
COLUMNS = ["input", "n_samples", "n_features", "method", "theirs", "max_abs_dZ", "ari",
           "identical_pct", "error_ours", "error_theirs", "max_abs_d_error", "seconds_theirs",
           "notes"]

# method key -> (row name, their function, our estimator factory, note). Ours are built from
# the experiments' method configs (conf/method/*.yaml), so the check covers what they run.
Z_METHODS = {
    "kssc": ("kSSC relaxed", "kssc_relaxed_par",
             lambda s: paper_method("kssc", s, n_neighbors=s["kssc_k"]),
             "exact neighbours stand in for VLFeat's kd-tree in both"),
    "kssc_matrix": ("kSSC relaxed, signed (whole-matrix)",
                    "kssc_relaxed (MEX selmult_mt_m_fast, solve_l1_spm)",
                    lambda s: paper_method("kssc", s, n_neighbors=s["kssc_k"], positive=False),
                    ("theirs: signed soft-threshold (solve_l1_spm), one FISTA over all points "
                     "(shared rho, stop on the total objective); ours positive=False, per point")),
    "kssc_exact": ("kSSC exact", "kssc_exact_par",
                   lambda s: paper_method("kssc_exact", s, n_neighbors=s["kssc_k"]),
                   ("LADMPSAP per point, signed; their change test's z term is identically 0 "
                    "(norm(z - z)), ours uses the z and e change as the paper writes it "
                    "(kssc/ladmpsap.py), so mu grows and the loop stops on other iterations")),
    "ssc": ("SSC relaxed", "ssc_relaxed", lambda s: paper_method("ssc", s), ""),
    "ssc_par": ("SSC relaxed (per point)", "ssc_relaxed_par",
                lambda s: paper_method("ssc_relaxed_par", s), ""),
    "ssc_exact": ("SSC exact", "ssc_exact", lambda s: paper_method("ssc_exact", s), ""),
    "ssc_exact_par": ("SSC exact (per point)", "ssc_exact_par",
                      lambda s: paper_method("ssc_exact_par", s), ""),
    "gfs": ("GFS", "gfs_sc", lambda s: paper_method("gfs", s, k_max=s["gfs_k"]), "binary Z"),
    "gsc": ("GSC", "gsc_sc",
            lambda s: paper_method("gsc", s, n_neighbors=s["gsc_k"],
                                   max_subspace_dim=s["gsc_dim"]),
            "binary Z with Z[i, i] = 1"),
    "tsc": ("TSC", "tsc_sc", lambda s: paper_method("tsc", s, n_neighbors=s["tsc_q"]),
            "exact neighbours stand in for VLFeat's kd-tree in both"),
}


def paper_method(name, settings, **params):
    """Our estimator as conf/method/<name>.yaml configures it, with the check's cluster
    count, seed, lambda (where the config has one) and `params`."""
    conf = OmegaConf.load(CONF_DIR / "method" / f"{name}.yaml")
    if "lam" in conf:
        params = {"lam": settings["lambda"], **params}
    return instantiate(conf, n_clusters=settings["n_clusters"], random_state=settings["seed"],
                       **params)


def _text(outputs, key):
    value = outputs.get(key)
    return None if value is None else str(np.asarray(value).ravel()[0])


def _labels(outputs, key):
    return np.asarray(outputs[key]).ravel().astype(int)


def compare_z_methods(X, y, settings, outputs, fitted):
    """One row per coefficient method: Z and labels of our estimator against theirs."""
    rows = []
    for key, (name, theirs, _, note) in Z_METHODS.items():
        row = {"method": name, "theirs": theirs, "notes": note}
        failure = _text(outputs, f"{key}_error")
        if failure is not None:
            row["notes"] = f"their code failed: {failure}"
            rows.append(row)
            continue
        model = fitted[key]
        their_labels = _labels(outputs, f"{key}_labels")
        ari, identical = label_agreement(model.labels_, their_labels)
        row.update(max_abs_dZ=max_abs_dz(model.representation_matrix_, outputs[f"{key}_Z"]),
                   ari=ari, identical_pct=identical, error_ours=clustering_error(y, model.labels_),
                   error_theirs=clustering_error(y, their_labels))
        row["max_abs_d_error"] = abs(row["error_ours"] - row["error_theirs"])
        if f"{key}_seconds" in outputs:
            row["seconds_theirs"] = float(np.asarray(outputs[f"{key}_seconds"]).item())
        rows.append(row)
    return rows


def compare_ncut(W, y, settings, outputs):
    """N-Cut on one fixed affinity: eigenvectors (as max_abs_dZ), eigenvalues and labels."""
    row = {"method": "NCut", "theirs": "ncutW, ncut (MEX sparsifyc, spmtimesd)"}
    failure = _text(outputs, "ncut_error")
    if failure is not None:
        return {**row, "notes": f"their code failed: {failure}"}
    k = settings["n_clusters"]
    values, _ = top_eigenvectors(_normalized_affinity(W)[0], k)
    vectors = ncut_embedding(W, k)
    labels = ncut(W, k, random_state=settings["seed"])
    their_labels = _labels(outputs, "ncut_labels")
    ari, identical = label_agreement(labels, their_labels)
    d_values = np.abs(values - np.asarray(outputs["ncut_values"]).ravel()).max()
    return {**row, "max_abs_dZ": float(np.abs(vectors - outputs["ncut_vectors"]).max()),
            "ari": ari, "identical_pct": identical, "error_ours": clustering_error(y, labels),
            "error_theirs": clustering_error(y, their_labels),
            "max_abs_d_error": abs(clustering_error(y, labels) - clustering_error(y, their_labels)),
            "notes": "max_abs_dZ compares the N-Cut eigenvectors (ncut.m's scaling and signs); "
                     f"eigenvalues differ by at most {d_values:.1e}; affinity of our kSSC Z; "
                     "the discretisation starts from a random row on each side"}


def compare_sssc(X, y, settings, outputs, model):
    """SSSC with the same in-sample set: in-sample lasso codes and the final labels."""
    row = {"method": "SSSC",
           "theirs": "get_sssc_clusters (InSample, OutSample; in-sample set given)"}
    failure = _text(outputs, "sssc_error")
    if failure is not None:
        return {**row, "notes": f"their code failed: {failure}"}
    chosen = model.in_sample_indices_
    ours = in_sample_codes(X[chosen], settings["lambda"])
    their_labels = _labels(outputs, "sssc_labels")
    ari, identical = label_agreement(model.labels_, their_labels)
    err_ours, err_theirs = clustering_error(y, model.labels_), clustering_error(y, their_labels)
    return {**row, "max_abs_dZ": max_abs_dz(ours, outputs["sssc_coef"]), "ari": ari,
            "identical_pct": identical, "error_ours": err_ours, "error_theirs": err_theirs,
            "max_abs_d_error": abs(err_ours - err_theirs),
            "notes": "max_abs_dZ compares the in-sample lasso codes (ours: coordinate descent, "
                     "theirs: SolveHomotopy); spectral steps differ (ours N-Cut + k-means, "
                     "theirs SVD + litekmeans)"}


def compare_metric(y, labelings, outputs):
    """Our clustering_error against their Misclassification on the same label vectors."""
    ours = np.array([clustering_error(y, labelings[:, j]) for j in range(labelings.shape[1])])
    theirs = 100.0 * np.asarray(outputs["misclassification"]).ravel()
    return {"method": "misclassification metric", "theirs": "Misclassification (missclassGroups)",
            "max_abs_d_error": float(np.abs(ours - theirs).max()),
            "notes": f"{labelings.shape[1]} label vectors from 0 to 100 % reassigned; errors "
                     f"{ours.min():.1f}-{ours.max():.1f} %"}


def crosscheck_input(work_dir, octave, reference, mex_dir, X, y, settings=SETTINGS):
    """Run both sides on one input (unit points X, labels y) in `work_dir`; return its rows."""
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    settings = {**settings, "n_clusters": int(np.unique(y).size)}
    fitted = {key: make(settings).fit(X)
              for key, (_, _, make, _) in Z_METHODS.items()}
    sssc = paper_method("sssc", settings, n_in_sample=settings["sssc_m"]).fit(X)
    W = fitted["kssc"].affinity_matrix_
    labelings = random_labelings(y, settings["n_labelings"], settings["seed"])
    k_max = max(settings["kssc_k"], settings["tsc_q"])
    in_file = write_inputs(
        work_dir / "inputs.mat", X, y, knn=kdtree_stand_in(X, k_max), ncut_W=W,
        labelings=labelings, sssc_in=sssc.in_sample_indices_ + 1,
        **{key: settings[key] for key in ("n_clusters", "lambda", "kssc_k", "gfs_k", "gsc_k",
                                          "gsc_dim", "tsc_q")})
    outputs = run_driver(octave, reference, mex_dir, work_dir, in_file, work_dir / "outputs.mat")
    rows = compare_z_methods(X, y, settings, outputs, fitted)
    rows.append(compare_sssc(X, y, settings, outputs, sssc))
    rows.append(compare_ncut(W, y, settings, outputs))
    rows.append(compare_metric(y, labelings, outputs))
    return rows


def crosscheck(work_dir, octave, reference, settings=SETTINGS, inputs=INPUTS, log=print):
    """Run both sides on every input of `inputs` in `work_dir`; return the comparison table."""
    work_dir = Path(work_dir)
    mex_dir = build_mex(reference, work_dir / "mex")
    rows = []
    for name, spec in inputs.items():
        X, y = make_input(spec, seed=settings["seed"])
        started = time.perf_counter()
        found = crosscheck_input(work_dir / name, octave, reference, mex_dir, X, y, settings)
        rows += [{"input": name, "n_samples": X.shape[0], "n_features": X.shape[1], **row}
                 for row in found]
        log(f"{name}: {X.shape[0]} points x {X.shape[1]} features, "
            f"{time.perf_counter() - started:.0f} s")
    return pd.DataFrame(rows, columns=COLUMNS)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m crosscheck", description=__doc__)
    parser.add_argument("--output", type=Path, default=OUTPUT,
                        help="CSV to write (atomically); its sidecar <name>.meta.json beside it")
    parser.add_argument("--keep", type=Path, default=None,
                        help="work in this folder and keep the .mat files "
                             "(default: a temporary folder)")
    parser.add_argument("--inputs", nargs="+", choices=sorted(INPUTS), default=None,
                        help="run only these inputs (default: all; the sidecar records which)")
    parser.add_argument("--check", action="store_true",
                        help="run nothing: exit 0 when the CSV is current with the code, "
                             "else print why and exit 1 (needs no Octave)")
    args = parser.parse_args(argv)
    inputs = INPUTS if args.inputs is None else {name: INPUTS[name] for name in args.inputs}
    config = crosscheck_config(SETTINGS, inputs)
    if args.check:
        problem = staleness(args.output, config)
        print(f"{args.output}: " + ("current" if problem is None else f"stale ({problem})"))
        return 0 if problem is None else 1
    reasons = missing_requirements()
    if reasons:
        print("crosscheck skipped: " + "; ".join(reasons) + ".")
        return 0
    octave, reference = find_octave(), find_reference()
    started, clock = now(), time.perf_counter()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        table = crosscheck(args.keep, octave, reference, inputs=inputs)
    else:
        with tempfile.TemporaryDirectory(prefix="kssc-crosscheck-") as work_dir:
            table = crosscheck(work_dir, octave, reference, inputs=inputs)
    _produce.write_result(table, args.output, config, started=started,
                          wall_time=time.perf_counter() - clock,
                          extra=octave_facts(octave, reference))
    with pd.option_context("display.width", 200, "display.max_colwidth", 40):
        print(table.drop(columns="notes").to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"written {args.output} and its sidecar")
    return 0


if __name__ == "__main__":
    sys.exit(_produce.traced_main(main))
