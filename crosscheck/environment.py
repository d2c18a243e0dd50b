"""Where Octave and the authors' code are, and building their MEX sources for Octave."""

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from experiments._checkout import REPO_ROOT

DEFAULT_REFERENCE = REPO_ROOT.parent / "shared" / "reference" / "kssc-matlab"

# The MEX sources the compared paths call: N-Cut's (ncutW) and the solvers' helpers.
MEX_SOURCES = ("libs/ncut/sparsifyc.cpp", "libs/ncut/spmtimesd.cpp",
               "common/solve_l1_spm.c", "common/selmult_mt_m_fast.c")

# Octave's mex.h declares what MATLAB splits into matrix.h and blas.h; these stand-ins
# let the unchanged sources compile (ddot with MATLAB's integer type mapped onto BLAS's).
_MATRIX_H = '#include "mex.h"\n'
_BLAS_H = (
    "extern double ddot_(const int *, const double *, const int *, const double *, const int *);\n"
    """static double xcheck_ddot(const mwSignedIndex *n, const double *x, const mwSignedIndex *incx,
                          const double *y, const mwSignedIndex *incy)
{
    int n_ = (int)*n, ix = (int)*incx, iy = (int)*incy;
    return ddot_(&n_, x, &ix, y, &iy);
}
#define ddot xcheck_ddot
"""
)


def find_octave():
    """Path of the Octave executable (`KSSC_OCTAVE`, else `octave` on the PATH), or None."""
    named = os.environ.get("KSSC_OCTAVE")
    if named is not None:
        return named if named and Path(named).is_file() else None
    return shutil.which("octave")


def find_reference():
    """The authors' code folder (`KSSC_REFERENCE_DIR`, else ../shared/reference), or None."""
    folder = Path(os.environ.get("KSSC_REFERENCE_DIR") or DEFAULT_REFERENCE)
    return folder if (folder / "kssc_relaxed_par.m").is_file() else None


def missing_requirements():
    """Why the cross-check cannot run here (a list of sentences; empty when it can)."""
    reasons = []
    if find_octave() is None:
        reasons.append("GNU Octave was not found (install it: apt-get install -y octave "
                       "liboctave-dev octave-statistics; or set KSSC_OCTAVE)")
    if find_reference() is None:
        reasons.append(f"the authors' code was not found at {DEFAULT_REFERENCE} "
                       "(or set KSSC_REFERENCE_DIR)")
    elif find_octave() is not None and shutil.which("mkoctfile") is None:
        reasons.append("mkoctfile was not found (apt-get install -y liboctave-dev)")
    return reasons


def build_mex(reference, out_dir):
    """Compile the MEX sources of `reference` into `out_dir` with `mkoctfile --mex`."""
    out_dir = Path(out_dir)
    include = out_dir / "include"
    include.mkdir(parents=True, exist_ok=True)
    (include / "matrix.h").write_text(_MATRIX_H)
    (include / "blas.h").write_text(_BLAS_H)
    for source in MEX_SOURCES:
        name = Path(source).stem
        command = ["mkoctfile", "--mex", f"-I{include}", "-o", str(out_dir / name),
                   str(Path(reference) / source), "-lblas"]
        done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=out_dir)
        if done.returncode:
            raise RuntimeError(f"mkoctfile failed on {source}:\n{done.stderr}")
    return out_dir


def reference_digest(reference):
    """Short SHA-256 over the authors' .m and C/C++ sources (path and bytes), for the sidecar."""
    reference = Path(reference)
    digest = hashlib.sha256()
    for path in sorted(p for p in reference.rglob("*")
                       if p.is_file() and p.suffix in (".m", ".c", ".cpp", ".h")):
        digest.update(path.relative_to(reference).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
