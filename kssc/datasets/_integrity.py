"""Checksums of data files: hashing cached per process, and the error raised on a mismatch."""

import hashlib
import os

_CHUNK = 1 << 20
_DIGESTS = {}


class DataCorruptError(ValueError):
    """A data file's size or SHA-256 sum differs from the recorded one (corrupt or replaced).

    Raised by the loaders of `kssc.datasets` before they parse a file. A file whose size
    differs from the recorded one is refused without hashing it (`actual` is then None).

    Parameters
    ----------
    path : str or path
        The file.
    expected : str
        The recorded SHA-256 sum (hex).
    actual : str or None
        The file's SHA-256 sum (hex); None when its size was found wrong first.
    command : str
        The command that downloads the file again and verifies it.
    size, recorded_size : int or None
        The file's and the recorded size in bytes, when they differ.

    Attributes
    ----------
    path : str
        The file.
    expected, actual : str
        The recorded and the actual SHA-256 sum (hex; actual None when not computed).
    command : str
        The command that downloads the file again and verifies it.
    size, recorded_size : int or None
        The file's and the recorded size in bytes, when they differ (else None).

    See Also
    --------
    DataNotFoundError : Raised when a data file is missing rather than corrupt.

    Examples
    --------
    >>> from kssc.datasets import DataCorruptError
    >>> error = DataCorruptError("data/tir/x.mat", "ab12", "cd34", "make data")
    >>> isinstance(error, ValueError), error.path
    (True, 'data/tir/x.mat')
    """

    def __init__(self, path, expected, actual, command, *, size=None, recorded_size=None):
        self.path, self.expected, self.actual, self.command = str(path), expected, actual, command
        self.size, self.recorded_size = size, recorded_size
        found = (f"it has {size} bytes, the recorded size is {recorded_size} (recorded SHA-256 "
                 f"{expected})" if actual is None else
                 f"its SHA-256 is {actual}, the recorded sum is {expected}")
        super().__init__(
            f"{self.path} is corrupt or incomplete: {found}. Repair it with `{command}`, which "
            "downloads it again and verifies it."
        )


def sha256_file(path):
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def cached_sha256(path):
    """`sha256_file(path)`, computed once per process per path and file state: size,
    modification and status-change times, inode. The status-change time (ctime) cannot be set
    back by hand, so an edit of the same size with its modification time restored is hashed
    again."""
    stat = os.stat(path)
    key = (os.fspath(path), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = sha256_file(path)
    return _DIGESTS[key]


def verify_file(path, expected, command, size=None):
    """Raise DataCorruptError (with the repair `command`) unless `path` has SHA-256 `expected`.

    With the recorded `size` (bytes), a file of another size is refused before it is hashed
    (a huge file in a data file's place costs a stat, not a read).
    """
    if size is not None and (found := os.stat(path).st_size) != size:
        raise DataCorruptError(path, expected, None, command, size=found, recorded_size=size)
    actual = cached_sha256(path)
    if actual != expected:
        raise DataCorruptError(path, expected, actual, command)
