"""The face table through the authors' code: `test_faces.m`'s path in Octave on our draws.

For each faithful draw of `results/yale.csv` (its subjects and seed), the 192 images are
loaded by their path ("octave_load": `imread` + `imresize(.., [96 84])` / 255 in Octave,
package image, `apt-get install octave-image`) and by ours ("python_load":
`experiments/yale.py`, Pillow bicubic). Their methods run on their matrix as `test_faces.m`
calls them (`normalize`; `ssc_relaxed(X, 0.1)`, `kssc_relaxed_par(X, 0.1, 25)`,
`gsc_sc(X, 25, 9)`, `tsc_sc(X, 25)`, each + `ncutW` + `condense_clusters`;
`get_sssc_clusters(X, 25, 0.1, 3)` with a failure counted as 100 %; `Misclassification`),
ours with the yale experiment's settings (conf/experiment/yale.yaml) and seeds on both
matrices (on theirs for max |dZ| and label agreement, on ours to reproduce yale.csv) and at
48 x 42 ("python_load_48x42": the paper's 2,016 features, docs/protocol.md D15). One row per
draw, matrix and method. Deviations, forced by what is released: exact neighbours stand in
for VLFeat's kd-tree (with 251 comparisons on 192 points its query is exhaustive, so exact),
and their SSSC gets our in-sample set (theirs draws it with `randsample`) so the labels are
comparable. docs/crosscheck.md, "The face table through the authors' code", has the results.

    KSSC_DATA_DIR=/work/shared/data KSSC_REFERENCE_DIR=/work/shared/reference/kssc-matlab \
        nice -n 19 python -m crosscheck.faces --theirs tsc sssc
    ... python -m crosscheck.faces --resume --theirs ssc kssc      # then the slower ones
    ... python -m crosscheck.faces --resume --theirs gsc --draws 0 1 2 3
    python -m crosscheck.faces --summary results/crosscheck_faces.csv   # the table only

The CSV is rewritten after every draw (atomically), so `--resume` continues a broken run;
the sidecar is written once, at the end, with the execution records of every run since the
first (`experiments._produce.write_resumed_sidecar`).
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io
from hydra.utils import instantiate
from omegaconf import OmegaConf

from experiments import _produce
from experiments._io import now, write_csv, write_text
from experiments._trial import method_seed
from experiments.publish.faces import (
    METHODS,
    markdown_table,
    rerun_agreement,
    summarise,
    zero_image_finding,
)
from kssc.datasets.cached import yaleb_subject_images
from kssc.metrics import clustering_error

from .compare import label_agreement, max_abs_dz
from .environment import (
    REPO_ROOT,
    build_mex,
    find_octave,
    find_reference,
    missing_requirements,
)
from .inputs import kdtree_stand_in
from .octave import DRIVER as GRID_DRIVER
from .octave import call_octave, octave_facts

CONF_DIR = REPO_ROOT / "conf"
YALE_CSV = REPO_ROOT / "results" / "yale.csv"
MATRICES = {"octave_load": (96, 84), "python_load": (96, 84), "python_load_48x42": (48, 42)}
COLUMNS = ["trial", "seed", "subjects", "matrix", "method", "error_paper_code", "error_ours",
           "error_committed", "max_abs_dZ", "ari", "identical_pct", "seconds_theirs",
           "seconds_ours", "max_abs_dX", "notes"]

# Their loading path of test_faces.m, one subject at a time.
LOAD_DRIVER = r"""function xcheck_load(in_file, out_file)
S = load(in_file);
pkg load image
out = struct();
for s = S.subjects(:)'
    folder = [S.folder '/yaleB' num2str(s, '%02.0f')];
    k_list = dir([folder '/*P00A*.pgm*']);
    B = zeros(S.height * S.width, S.n_pic);
    for i = 1 : S.n_pic
        B(:, i) = reshape(double(imresize(imread([folder '/' k_list(i).name]), ...
                                          [S.height S.width]))/255, S.height * S.width, 1);
    end
    out.(sprintf('s%d', s)) = B;
end
save('-v7', out_file, '-struct', 'out');
end
"""

# test_faces.m's loop body on the given matrices; run_z and sssc_fixed are the grid
# cross-check's (crosscheck/octave.py), shared so both checks call their code the same way.
_RUN_Z = GRID_DRIVER[GRID_DRIVER.index("function out = run_z"):
                     GRID_DRIVER.index("function [coef, labels] = sssc_fixed")]
_SSSC_FIXED = GRID_DRIVER[GRID_DRIVER.index("function [coef, labels] = sssc_fixed"):]
FACES_DRIVER = r"""function xcheck_faces(in_file, out_file)
S = load(in_file);
try
    pkg load statistics
catch
end
global XCHECK_KNN
XCHECK_KNN = S.knn;
truth = S.truth(:); nc = 3;
out = struct();
rand('seed', 1); randn('seed', 1);
X_normed = normalize(S.X);
if S.run_ssc
    out = run_z(out, 'ssc', @() ssc_relaxed(X_normed, 0.1), nc);
end
if S.run_kssc
    out = run_z(out, 'kssc', @() kssc_relaxed_par(X_normed, 0.1, 25), nc);
end
if S.run_gsc
    out = run_z(out, 'gsc', @() gsc_sc(X_normed, 25, 9), nc);
end
if S.run_tsc
    out = run_z(out, 'tsc', @() tsc_sc(X_normed, 25), nc);
end
if S.run_sssc
    tic;
    try
        [~, out.sssc_labels] = sssc_fixed(X_normed, S.sssc_in(:)', 0.1, nc);
    catch err
        out.sssc_error = err.message;
    end
    out.sssc_seconds = toc;
end
for method = {'ssc', 'kssc', 'gsc', 'tsc', 'sssc'}
    if isfield(out, [method{1} '_labels'])
        out.([method{1} '_miss']) = Misclassification(out.([method{1} '_labels']), truth);
    end
end
save('-v7', out_file, '-struct', 'out');
end

""" + _RUN_Z + _SSSC_FIXED


def yale_draws(variant="faithful", results=YALE_CSV):
    """One row per trial of the committed yale run: trial, seed, subjects and each method's
    committed error (columns `error_<method>`)."""
    frame = pd.read_csv(results)
    frame = frame[frame["variant"] == variant]
    wide = frame.pivot_table(index=["trial", "seed", "subjects"], columns="method",
                             values="error_pct", aggfunc="first")
    wide.columns = [f"error_{m}" for m in wide.columns]
    return wide.reset_index().sort_values("trial").reset_index(drop=True)


def yale_settings():
    """The yale experiment's block and its methods' configs (conf/method merged with yale's)."""
    exp = OmegaConf.load(CONF_DIR / "experiment" / "yale.yaml")
    methods = {name: OmegaConf.to_container(OmegaConf.merge(
        OmegaConf.load(CONF_DIR / "method" / f"{name}.yaml"), exp.methods.get(name, {})))
        for name in METHODS}
    return OmegaConf.to_container(exp.experiment), methods


def python_matrix(subjects, size, data_dir=None):
    """The draw's points (192, h * w) as experiments/yale.py builds them (faithful variant)."""
    return np.vstack([yaleb_subject_images(s, size=tuple(size), include_bad=True,
                                           n_per_subject=64, data_dir=data_dir)
                      for s in subjects])


def octave_blocks(octave, reference, mex_dir, work_dir, subjects, data_dir, size=(96, 84)):
    """{subject: (64, h * w)} loaded by their path in Octave, rows in row-major pixel order."""
    work_dir = Path(work_dir)
    in_file, out_file = work_dir / "load_in.mat", work_dir / "load_out.mat"
    scipy.io.savemat(in_file, {"subjects": np.asarray(sorted(subjects), dtype=float),
                               "folder": str(Path(data_dir) / "yaleb" / "CroppedYale"),
                               "height": float(size[0]), "width": float(size[1]),
                               "n_pic": 64.0})
    call_octave(octave, reference, mex_dir, work_dir, "xcheck_load", LOAD_DRIVER, in_file,
                out_file)
    out = scipy.io.loadmat(out_file)
    h, w = size
    # Their columns are column-major images; ours rows row-major: transpose each image.
    return {s: out[f"s{s}"].reshape(w, h, 64).transpose(2, 1, 0).reshape(64, h * w)
            for s in subjects}


def fit_ours(name, conf, X, seed):
    """Our method as the yale experiment fits it: (estimator, seconds)."""
    conf = {**conf, "n_clusters": 3, "random_state": method_seed(seed)}
    started = time.perf_counter()
    model = instantiate(conf, _convert_="all").fit(X)
    return model, time.perf_counter() - started


def _scalar(outputs, key):
    value = outputs.get(key)
    return None if value is None else np.asarray(value).ravel()[0]


def theirs_row(outputs, key, model, y):
    """Their side of one matrix and method against our fitted `model` on the same matrix."""
    failure = _scalar(outputs, f"{key}_error")
    row = {"seconds_theirs": _scalar(outputs, f"{key}_seconds")}
    if failure is not None:
        # test_faces.m counts a failed SSSC as missrate 1; other failures have no error.
        return {**row, "error_paper_code": 100.0 if key.endswith("sssc") else np.nan,
                "notes": f"their code failed: {failure}"[:300]}
    labels = np.asarray(outputs[f"{key}_labels"]).ravel().astype(int)
    row["error_paper_code"] = 100.0 * float(_scalar(outputs, f"{key}_miss"))
    row["ari"], row["identical_pct"] = label_agreement(model.labels_, labels)
    if f"{key}_Z" in outputs and getattr(model, "representation_matrix_", None) is not None:
        row["max_abs_dZ"] = max_abs_dz(model.representation_matrix_, outputs[f"{key}_Z"])
    return row


def compare_draw(draw, methods, octave_load, context, theirs, wanted):
    """Rows of one draw for the (matrix, method) pairs `wanted`; their code runs the methods
    `theirs` on the Octave-loaded matrix (test_faces.m's path end to end)."""
    subjects = [int(s) for s in draw["subjects"].split("-")]
    seed = int(draw["seed"])
    y = np.repeat(np.arange(3), 64)
    matrices = {m: python_matrix(subjects, size, context["data_dir"])
                for m, size in MATRICES.items() if m != "octave_load"}
    if octave_load:  # without Octave (--ours-only) there is no octave_load matrix
        matrices["octave_load"] = np.vstack([octave_load[s] for s in subjects])
    ours = {(m, name): fit_ours(name, methods[name], matrices[m], seed)
            for m, name in wanted if m in matrices}
    outputs = {}
    if context["octave"] is not None and theirs:
        sssc_model = ours.get(("octave_load", "sssc")) or fit_ours(
            "sssc", methods["sssc"], matrices["octave_load"], seed)
        work_dir = context["work_dir"]
        in_file = work_dir / "faces_in.mat"
        # Points as columns (the authors' D x N), unnormalised: their `normalize` runs first.
        X = matrices["octave_load"]
        scipy.io.savemat(in_file, {
            "X": np.ascontiguousarray(X.T), "knn": kdtree_stand_in(_unit(X), 25),
            "truth": (y + 1.0)[:, None], "sssc_in": sssc_model[0].in_sample_indices_ + 1.0,
            **{f"run_{name}": float(name in theirs) for name in METHODS}},
            do_compression=False, oned_as="column")
        call_octave(context["octave"], context["reference"], context["mex_dir"], work_dir,
                    "xcheck_faces", FACES_DRIVER, in_file, work_dir / "faces_out.mat")
        outputs = scipy.io.loadmat(work_dir / "faces_out.mat")
    d_x = (float(np.abs(matrices["octave_load"] - matrices["python_load"]).max())
           if octave_load else np.nan)
    rows = []
    for (m, name), (model, seconds) in ours.items():
        row = {"trial": int(draw["trial"]), "seed": seed, "subjects": draw["subjects"],
               "matrix": m, "method": name, "error_ours": clustering_error(y, model.labels_),
               "seconds_ours": seconds,
               "max_abs_dX": d_x if m != "python_load_48x42" else np.nan}
        if m == "python_load":
            row["error_committed"] = draw.get(f"error_{name}", np.nan)
        if m == "octave_load" and name in theirs and outputs:
            row.update(theirs_row(outputs, name, model, y))
        rows.append(row)
    return rows


def _unit(X):
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms == 0, 1.0, norms)


def agreement_table(frame):
    """Their code and ours on the same (Octave-loaded) matrix, per method: the implementation
    check behind the verdicts, and the loading check (their matrix against ours)."""
    same = frame[(frame["matrix"] == "octave_load")]
    lines = ["| method | draws run by both | max abs dZ | draws with identical labels | "
             "mean error theirs / ours, same matrix | their code failed | theirs, a failure "
             "scored as ours |", "|---|---|---|---|---|---|---|"]
    for name in METHODS:
        rows = same[(same["method"] == name) & same["error_paper_code"].notna()]
        failed = rows["notes"].fillna("").astype(str).str.startswith("their code failed")
        dz = rows["max_abs_dZ"].dropna()
        if rows.empty:
            lines.append(f"| {name} | 0 | - | - | - | - | - |")
            continue
        lines.append(
            f"| {name} | {len(rows)} | {f'{dz.max():.1e} (n={len(dz)})' if len(dz) else '-'} | "
            f"{int((rows['identical_pct'] == 100.0).sum())} | "
            f"{rows['error_paper_code'].mean():.1f} / {rows['error_ours'].mean():.1f} | "
            f"{int(failed.sum())} | "
            f"{np.where(failed, rows['error_ours'], rows['error_paper_code']).mean():.1f} |")
    loading = frame.groupby("trial")["max_abs_dX"].max().dropna()
    lines.append("")
    lines.append(f"Their loading (Octave `imread` + `imresize`, package image) against ours "
                 f"(Pillow bicubic): max abs pixel difference {loading.max():.4f} "
                 f"({loading.max() * 255:.0f} grey levels), over {len(loading)} draws.")
    return "\n".join(lines)


MARK = ("<!-- crosscheck-faces: python -m crosscheck.faces --summary "
        "results/crosscheck_faces.csv --docs docs/crosscheck.md -->\n",
        "<!-- /crosscheck-faces -->")


def write_docs(path, frame):
    """Replace the marked block of `path` by the tables of `frame`; True if it changed."""
    text = Path(path).read_text(encoding="utf-8")
    start, end = text.index(MARK[0]) + len(MARK[0]), text.index(MARK[1])
    new = (text[:start] + markdown_table(summarise(frame)) + "\n\n" + agreement_table(frame)
           + "\n\n" + zero_image_finding(frame) + "\n\n"
           + rerun_agreement(frame, pd.read_csv(YALE_CSV)) + "\n" + text[end:])
    if new != text:
        write_text(new, path)
    return new != text


def run(output, *, draws=None, theirs=("ssc", "kssc", "tsc", "sssc"), resume=False,
        ours_only=False, data_dir=None, log=print):
    """Compare the draws (trial numbers; default all), rewriting `output` after each draw.

    With `resume`, the rows already in `output` are kept and only what is missing is run:
    a new draw gets every row; a draw already there gets their `theirs` methods where its
    octave_load row has no error of theirs yet.
    """
    table = yale_draws()
    if draws is not None:
        table = table[table["trial"].isin(draws)]
    exp, methods = yale_settings()
    if tuple(exp["size"]) != (96, 84) or exp["n_per_subject"] != 64:
        raise ValueError(f"conf/experiment/yale.yaml no longer draws 64 images of 96 x 84: {exp}")
    data_dir = Path(data_dir or os.environ.get("KSSC_DATA_DIR") or REPO_ROOT / "data")
    done = pd.read_csv(output) if resume and Path(output).is_file() else pd.DataFrame(
        columns=COLUMNS)
    theirs = () if ours_only else tuple(theirs)
    with tempfile.TemporaryDirectory(prefix="kssc-faces-") as work_dir:
        work_dir = Path(work_dir)
        context = {"octave": None, "data_dir": data_dir, "work_dir": work_dir}
        octave_load = {}
        if not ours_only:
            subjects = sorted({int(s) for draw in table["subjects"] for s in draw.split("-")})
            context.update(octave=find_octave(), reference=find_reference())
            context["mex_dir"] = build_mex(context["reference"], work_dir / "mex")
            started = time.perf_counter()
            octave_load = octave_blocks(context["octave"], context["reference"],
                                        context["mex_dir"], work_dir, subjects, data_dir)
            log(f"loaded {len(subjects)} subjects in Octave: {time.perf_counter() - started:.0f} s")
        for draw in table.to_dict("records"):
            previous = done[done["trial"] == draw["trial"]]
            if previous.empty:
                wanted = [(m, name) for m in MATRICES for name in METHODS]
                todo = theirs
            else:
                have = previous[previous["matrix"] == "octave_load"]
                have = set(have[have["error_paper_code"].notna()
                                | have["notes"].fillna("").str.startswith("their code failed")
                                ]["method"])
                todo = tuple(name for name in theirs if name not in have)
                wanted = [("octave_load", name) for name in todo]
            if not wanted:
                continue
            started = time.perf_counter()
            rows = pd.DataFrame(compare_draw(draw, methods, octave_load, context, todo, wanted),
                                columns=COLUMNS)
            key = ["trial", "matrix", "method"]
            kept = done.merge(rows[key], on=key, how="left", indicator=True)
            done = pd.concat([done[(kept["_merge"] == "left_only").to_numpy()], rows],
                             ignore_index=True)
            done = done.sort_values(key, kind="stable").reset_index(drop=True)
            write_csv(done, output)
            log(f"trial {draw['trial']} ({draw['subjects']}; theirs: {', '.join(todo) or '-'}): "
                f"{time.perf_counter() - started:.0f} s")
    return done


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m crosscheck.faces", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=REPO_ROOT / "results"
                        / "crosscheck_faces.csv", help="the per-draw CSV (rewritten per draw)")
    parser.add_argument("--draws", type=int, nargs="+", default=None,
                        help="trial numbers of results/yale.csv (default: all)")
    parser.add_argument("--theirs", nargs="+", choices=METHODS,
                        default=["ssc", "kssc", "tsc", "sssc"],
                        help="their methods to run (gsc: about a minute per draw, idle)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the draws already in --output (rerun one only to add GSC)")
    parser.add_argument("--ours-only", action="store_true", help="no Octave")
    parser.add_argument("--summary", type=Path, default=None,
                        help="run nothing: print the side-by-side table of this CSV")
    parser.add_argument("--docs", type=Path, default=None,
                        help="with --summary: write the tables into this file's marked block")
    args = parser.parse_args(argv)
    if args.docs is not None and args.summary is not None:
        changed = write_docs(args.docs, pd.read_csv(args.summary))
        print(f"{args.docs}: {'updated' if changed else 'unchanged'}")
        return 0
    if args.summary is None:
        reasons = [] if args.ours_only else missing_requirements()
        if reasons:
            print("skipped: " + "; ".join(reasons) + ".")
            return 0
        started, clock = now(), time.perf_counter()
        exp, methods = yale_settings()
        config = {"experiment": {"name": "crosscheck_faces", "draws": args.draws,
                                 "theirs": [] if args.ours_only else args.theirs,
                                 "yale": exp, "methods": methods,
                                 "input_files": _produce.input_files(YALE_CSV)}}
        earlier = _produce.resumed_from(args.output) if args.resume else None
        run(args.output, draws=args.draws, theirs=args.theirs, resume=args.resume,
            ours_only=args.ours_only)
        if args.output.is_file():  # rewritten per draw; its sidecar once, at the end
            _produce.write_resumed_sidecar(
                args.output, config, earlier, started=started,
                wall_time=time.perf_counter() - clock,
                extra=None if args.ours_only else octave_facts())
    frame = pd.read_csv(args.summary or args.output)
    print(markdown_table(summarise(frame)) + "\n\n" + agreement_table(frame))
    return 0


if __name__ == "__main__":
    sys.exit(_produce.traced_main(main))
