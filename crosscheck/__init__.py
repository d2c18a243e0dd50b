"""Side-by-side check of this package against the k-SSC authors' MATLAB code, run in GNU Octave.

`python -m crosscheck` (`make crosscheck`) writes identical inputs to .mat files in a
temporary folder, runs the authors' functions on them in Octave and ours in Python, and
writes per method the largest coefficient difference and the label agreement to
`results/crosscheck.csv` (docs/crosscheck.md). It needs `octave` on the PATH (or the
variable `KSSC_OCTAVE`) and the authors' code in `../shared/reference/kssc-matlab` (or the
variable `KSSC_REFERENCE_DIR`); without either it prints why and exits with status 0.
"""
