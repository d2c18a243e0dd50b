"""Checksums of data files: hashing cached per process, and the error raised on a mismatch."""

import hashlib
import os

_CHUNK = 1 << 20
_DIGESTS = {}


class DataCorruptError(ValueError):
    """A data file's SHA-256 sum differs from the recorded one (corrupt, truncated or replaced).

    Raised by the loaders of `kssc.datasets` before they parse a file.

    Parameters
    ----------
    path : str or path
        The file.
    expected : str
        The recorded SHA-256 sum (hex).
    actual : str
        The file's SHA-256 sum (hex).
    command : str
        The command that downloads the file again and verifies it.

    Attributes
    ----------
    path : str
        The file.
    expected, actual : str
        The recorded and the actual SHA-256 sum (hex).
    command : str
        The command that downloads the file again and verifies it.

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

    def __init__(self, path, expected, actual, command):
        self.path, self.expected, self.actual, self.command = str(path), expected, actual, command
        super().__init__(
            f"{self.path} is corrupt or incomplete: its SHA-256 is {actual}, the recorded sum is "
            f"{expected}. Repair it with `{command}`, which downloads it again and verifies it."
        )


def sha256_file(path):
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def cached_sha256(path):
    """`sha256_file(path)`, computed once per process per path, size and modification time."""
    stat = os.stat(path)
    key = (os.fspath(path), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = sha256_file(path)
    return _DIGESTS[key]


def verify_file(path, expected, command):
    """Raise DataCorruptError (with the repair `command`) unless `path` has SHA-256 `expected`."""
    actual = cached_sha256(path)
    if actual != expected:
        raise DataCorruptError(path, expected, actual, command)
