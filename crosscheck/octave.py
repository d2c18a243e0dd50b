"""Running the authors' functions in Octave on saved inputs.

The driver and the VLFeat stand-ins below are ours; they only call the authors' functions.
`vl_kdtreequery` returns the neighbour table saved with the inputs (`knn`, exact
neighbours, `inputs.kdtree_stand_in`), so their k-SSC and TSC see the same neighbours as ours.
"""

import subprocess
from pathlib import Path

import scipy.io

from .environment import find_octave, find_reference, reference_digest

VL_KDTREEBUILD = """function tree = vl_kdtreebuild(X, varargin)
% Stand-in for VLFeat: the neighbours come from the saved table (xcheck_driver).
tree = size(X, 2);
end
"""

VL_KDTREEQUERY = """function index = vl_kdtreequery(tree, X, Q, varargin)
% Stand-in for VLFeat: the first NUMNEIGHBORS rows of the saved exact-neighbour table.
global XCHECK_KNN
m = varargin{find(strcmpi(varargin, 'NUMNEIGHBORS')) + 1};
index = uint32(XCHECK_KNN(1:m, :));
end
"""

# One Octave session runs every method; a method that throws records its message instead.
DRIVER = r"""function xcheck_driver(in_file, out_file)
S = load(in_file);
try
    pkg load statistics  % randsample, used by SSSC's litekmeans
catch
end
global XCHECK_KNN
XCHECK_KNN = S.knn;
X = S.X; truth = S.truth(:); nc = S.n_clusters; lam = S.lambda;
rand('seed', 1); randn('seed', 1);
out = struct();
out = run_z(out, 'kssc', @() kssc_relaxed_par(X, lam, S.kssc_k), nc);
out = run_z(out, 'kssc_matrix', @() kssc_relaxed(X, lam, S.kssc_k), nc);
out = run_z(out, 'kssc_exact', @() kssc_exact_par(X, lam, S.kssc_k), nc);
out = run_z(out, 'ssc', @() ssc_relaxed(X, lam), nc);
out = run_z(out, 'ssc_par', @() ssc_relaxed_par(X, lam), nc);
out = run_z(out, 'ssc_exact', @() ssc_exact(X, lam), nc);
out = run_z(out, 'ssc_exact_par', @() ssc_exact_par(X, lam), nc);
out = run_z(out, 'gfs', @() gfs_sc(X, S.gfs_k), nc);
out = run_z(out, 'gsc', @() gsc_sc(X, S.gsc_k, S.gsc_dim), nc);
out = run_z(out, 'tsc', @() tsc_sc(X, S.tsc_q), nc);
try
    % ncutW's second output is row-normalised by its discretisation; ncut's is not.
    [vectors, values] = ncut(S.ncut_W, nc);
    out.ncut_vectors = vectors;
    out.ncut_values = values(:);
    out.ncut_labels = condense_clusters(ncutW(S.ncut_W, nc), 1);
catch err
    out.ncut_error = err.message;
end
try
    [out.sssc_coef, out.sssc_labels] = sssc_fixed(X, S.sssc_in(:)', lam, nc);
catch err
    out.sssc_error = err.message;
end
out.misclassification = Misclassification(S.labelings + 1, truth);
save('-v7', out_file, '-struct', 'out');
end

function out = run_z(out, name, solve, nc)
try
    tic;
    Z = solve();
    out.([name '_seconds']) = toc;
    out.([name '_Z']) = full(Z);
    out.([name '_labels']) = condense_clusters(ncutW(abs(Z) + abs(Z'), nc), 1);
catch err
    out.([name '_error']) = err.message;
end
end

function [coef, labels] = sssc_fixed(X, in_idx, lam, nc)
% get_sssc_clusters with the in-sample set given instead of drawn by randsample.
par.maxIteration = 5000;
par.isNonnegative = false;
n = size(X, 2);
m = numel(in_idx);
Tr = X(:, in_idx);
coef = zeros(m, m);
for i = 1:m
    others = [1:i-1, i+1:m];
    coef(others, i) = SolveHomotopy(Tr(:, others), Tr(:, i), 'maxIteration', 5000, ...
        'isNonnegative', false, 'lambda', lam, 'tolerance', 1e-6);
end
rest = 1:n;
rest(in_idx) = [];
in_labels = InSample(Tr, lam, 1e-6, par, nc);
labels = zeros(n, 1);
labels(in_idx) = in_labels;
labels(rest) = OutSample(Tr, X(:, rest), in_labels);
end
"""


def reference_paths(reference):
    """The folders of the authors' code the driver needs on Octave's path."""
    reference = Path(reference)
    return [reference, reference / "common", reference / "libs" / "ncut",
            reference / "libs" / "SSSC", reference / "libs" / "SSSC" / "usages"]


def call_octave(octave, reference, mex_dir, work_dir, function, source, *args, timeout=None):
    """Write `source` as `work_dir/<function>.m` and run `function(args...)` in a fresh Octave.

    The authors' folders, the MEX builds and `work_dir` (with the VLFeat stand-ins) are put
    on Octave's path, `work_dir` first. Raises RuntimeError with Octave's messages on failure.
    """
    work_dir = Path(work_dir)
    (work_dir / f"{function}.m").write_text(source)
    (work_dir / "vl_kdtreebuild.m").write_text(VL_KDTREEBUILD)
    (work_dir / "vl_kdtreequery.m").write_text(VL_KDTREEQUERY)
    # addpath prepends: the folder added last (work_dir) is searched first.
    paths = [str(p) for p in reference_paths(reference)] + [str(mex_dir), str(work_dir)]
    program = "".join(f"addpath('{p}');" for p in paths)
    program += f"{function}(" + ", ".join(f"'{a}'" for a in args) + ");"
    done = subprocess.run([octave, "--no-gui", "--quiet", "--no-window-system", "--eval", program],
                          check=False, capture_output=True, text=True, cwd=work_dir,
                          timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"Octave failed (exit {done.returncode}):\n{done.stderr[-3000:]}")


def octave_version(octave):
    """The version Octave reports (`octave --version`'s first line), for the sidecar."""
    done = subprocess.run([octave, "--version"], check=False, capture_output=True, text=True,
                          timeout=120)
    return done.stdout.splitlines()[0].strip() if done.stdout else "unknown"


def run_driver(octave, reference, mex_dir, work_dir, in_file, out_file, timeout=900):
    """Run the driver on `in_file` in a fresh Octave; return the saved outputs as a dict."""
    call_octave(octave, reference, mex_dir, work_dir, "xcheck_driver", DRIVER, in_file, out_file,
                timeout=timeout)
    return scipy.io.loadmat(out_file, squeeze_me=False)


def octave_facts(octave=None, reference=None):
    """What a study's sidecar records of the Octave side: the version and the authors' code
    (its path and `reference_digest`); by default the Octave and code found here."""
    octave, reference = octave or find_octave(), reference or find_reference()
    return {"octave": octave_version(octave),
            "reference": {"path": str(reference), "digest": reference_digest(reference)}}
