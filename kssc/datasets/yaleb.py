"""Extended Yale Face Database B, cropped faces (Georghiades, Belhumeur & Kriegman, PAMI 2001;
Lee, Ho & Kriegman, PAMI 2005).

`yaleb/CroppedYale/yaleBNN/` holds 192 x 168 8-bit PGM faces of 38 subjects (NN = 01..39
without 14) under 64 lighting conditions, frontal pose (`*P00A*`). 2,414 images are good
and 18 are flagged `.pgm.bad` by the distributors (nearly black; yaleB15's is all zeros).
The paper's code (`test_faces.m`) reads the first 64 files matching `*P00A*.pgm*` in
`dir` order, which includes the bad ones, resizes them to 96 x 84 with MATLAB `imresize`
and divides by 255.

Deviation: resizing uses Pillow's bicubic filter on the uint8 image, which like MATLAB's
`imresize` uses the cubic kernel with a = -0.5, widened for antialiasing when shrinking,
and returns uint8. The two differ slightly at the image borders (Pillow renormalises the
clipped kernel, MATLAB mirrors the image) and in rounding, so pixel values can differ by
a few grey levels from MATLAB's.
"""

import fnmatch
import numbers
import re
from functools import cache

import numpy as np
from PIL import Image

from ._paths import read_checksums, require_files
from ._registry import Dataset

SUBJECTS = tuple(n for n in range(1, 40) if n != 14)
"""The 38 subject numbers (there is no yaleB14)."""

SOURCE_SHAPE = (192, 168)
"""(height, width) of every cropped face file; `load_yaleb` resizes from this shape only."""

DATASET = Dataset(
    name="yaleb",
    title="Extended Yale B cropped faces",
    sources=(
        "https://github.com/sjtrny/kssc/archive/9189465e4b14c344fac73756ffb6cf84fb36b68f.zip",
        "http://vision.ucsd.edu/extyaleb/CroppedYaleBZip/CroppedYale.zip",
    ),
    layout="archive",
    n_bytes=87_460_159,
    loaders=("load_yaleb",),
)
"""The data set's declaration: https first (the paper's code repository at a fixed commit),
then the public home, which serves plain http only; the recorded sums verify whatever
arrives."""

_PATTERN = "*P00A*.pgm*"
_PGM_HEADER = re.compile(rb"P5(?:\s|#[^\n]*\n)+(\d+)(?:\s|#[^\n]*\n)+(\d+)(?:\s|#[^\n]*\n)+(\d+)\s")


def list_yaleb_images(subjects=None, *, include_bad=True, n_per_subject=64):
    """Relative paths (inside `yaleb/`) of the images `load_yaleb` reads, with their subjects.

    Per subject: the files matching `*P00A*.pgm*` in ASCII order (as MATLAB `dir`), without
    the `.pgm.bad` files unless `include_bad`, then the first `n_per_subject` (None: all).
    Subjects keep the given order and may repeat. Needs no data: the file list is the
    package's checksum list.

    Parameters
    ----------
    subjects : iterable of int, int or None, default=None
        The yaleB subject numbers (1..39 without 14); None means all 38.
    include_bad : bool, default=True
        Keep the `.pgm.bad` images.
    n_per_subject : int or None, default=64
        First images per subject, in file order (None: all).

    Returns
    -------
    paths : list of str
        Paths relative to the `yaleb/` folder.
    subjects : ndarray of shape (len(paths),)
        The subject of each path.

    See Also
    --------
    load_yaleb : Load these images.

    Examples
    --------
    >>> from kssc.datasets import list_yaleb_images
    >>> paths, subjects = list_yaleb_images([1, 2], n_per_subject=2)
    >>> paths[0], subjects.tolist()
    ('CroppedYale/yaleB01/yaleB01_P00A+000E+00.pgm', [1, 1, 2, 2])
    """
    subjects = _check_subjects(subjects)
    if n_per_subject is not None and (not isinstance(n_per_subject, numbers.Integral)
                                      or n_per_subject < 1):
        raise ValueError(
            f"n_per_subject must be a positive integer or None; got {n_per_subject!r}.")
    by_subject = _images_by_subject()
    paths, labels = [], []
    for subject in subjects:
        files = by_subject[subject]
        if not include_bad:
            files = [f for f in files if not f.endswith(".bad")]
        files = files[:n_per_subject]
        paths += files
        labels += [subject] * len(files)
    return paths, np.asarray(labels, dtype=np.int64)


def load_yaleb(subjects=None, *, size=(96, 84), include_bad=True, n_per_subject=64, data_dir=None):
    """Load cropped Extended Yale B faces as rows.

    Parameters
    ----------
    subjects : iterable of int, int or None, default=None
        The yaleB subject numbers (1..39 without 14); None means all 38. Repeats are allowed
        (the paper draws subjects with replacement): the images are then repeated and share
        the subject's label.
    size : tuple of (int, int) or None, default=(96, 84)
        (height, width): (96, 84) as in the paper's experiment (8,064 features), (48, 42) as in its
        `load_faces.m` and the usual YaleBCrop025 (2,016), or None for the full 192 x 168
        (32,256).
    include_bad : bool, default=True
        Keep the `.pgm.bad` images (True, faithful to the paper code, which gives yaleB15 an
        all-zero image) or drop them (False).
    n_per_subject : int or None, default=64
        First images per subject, in file order (None: all).
    data_dir : str, path or None, default=None
        The data folder; None: $KSSC_DATA_DIR, else `data/` at the repository root.

    Returns
    -------
    X : ndarray of shape (n_images, height * width)
        Values in [0, 1]; each row is one image flattened in row-major (C) order:
        ``X[i].reshape(height, width)`` is the image.
    y : ndarray of shape (n_images,)
        The subject number of each image.

    Raises
    ------
    DataNotFoundError
        If any of the images is missing from the data folder.

    See Also
    --------
    list_yaleb_images : The files read, without reading them.

    Examples
    --------
    >>> from kssc.datasets import load_yaleb
    >>> X, y = load_yaleb([1, 2, 3])  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (192, 8064)
    """
    if size is not None:
        height, width = (int(v) for v in size)
        if height < 1 or width < 1:
            raise ValueError(
                f"size must be (height, width) with positive entries or None; got {size!r}.")
    relpaths, y = list_yaleb_images(subjects, include_bad=include_bad, n_per_subject=n_per_subject)
    paths = require_files("yaleb", relpaths, data_dir)
    rows = []
    for path in paths:
        image = read_pgm(path, shape=SOURCE_SHAPE)
        if size is not None and image.shape != (height, width):
            image = np.asarray(Image.fromarray(image).resize((width, height),
                                                             Image.Resampling.BICUBIC))
        rows.append(image.ravel())
    n_features = rows[0].size if rows else 0
    X = np.asarray(rows, dtype=np.float64).reshape(len(rows), n_features) / 255.0
    return X, y


def read_pgm(path, shape=None):
    """Read a binary (P5) 8-bit PGM file into a (height, width) uint8 array.

    Raises ValueError naming the file if it is not such a PGM, holds fewer pixel bytes than
    its header announces, or (when `shape` is given) is not `shape` = (height, width).
    """
    with open(path, "rb") as fh:
        data = fh.read()
    match = _PGM_HEADER.match(data)
    if match is None:
        raise ValueError(f"{path} is not a binary (P5) PGM file.")
    width, height, maxval = (int(v) for v in match.groups())
    if maxval > 255:
        raise ValueError(f"{path}: 16-bit PGM (maxval {maxval}) is not supported.")
    if shape is not None and (height, width) != tuple(shape):
        raise ValueError(f"{path} is {height} x {width} pixels; expected {shape[0]} x {shape[1]}.")
    n_bytes = len(data) - match.end()
    if n_bytes < width * height:
        raise ValueError(
            f"{path} is truncated: {n_bytes} pixel bytes "
            f"for the {height} x {width} image its header announces."
        )
    pixels = np.frombuffer(data, dtype=np.uint8, count=width * height, offset=match.end())
    return pixels.reshape(height, width)


@cache
def _images_by_subject():
    """{subject: sorted file paths matching *P00A*.pgm*} from the checksum list."""
    by_subject = {subject: [] for subject in SUBJECTS}
    for rel in read_checksums("yaleb"):
        _, folder, filename = rel.split("/")
        if fnmatch.fnmatchcase(filename, _PATTERN):
            by_subject[int(folder.removeprefix("yaleB"))].append(rel)
    return {subject: sorted(files) for subject, files in by_subject.items()}


def _check_subjects(subjects):
    if subjects is None:
        return list(SUBJECTS)
    subjects = [subjects] if isinstance(subjects, (int, np.integer)) else list(subjects)
    bad = [s for s in subjects if s not in SUBJECTS]
    if bad or not subjects:
        raise ValueError(
            f"subjects must be yaleB numbers in 1..39 without 14; "
            f"got {subjects!r} (invalid: {bad})."
        )
    return [int(s) for s in subjects]
