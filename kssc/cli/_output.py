"""Output files of the command line, all or none: checked before the fit, written atomically.

Each output is written to a temporary file in its own folder and moved over its path by
`os.replace` only once every output has been written, so a full disk or a failure leaves no
truncated file and no partial set of outputs. An output that would replace an input (also
through a symlink, a hard link or another spelling of the path) is refused.
"""

import os
import tempfile
from pathlib import Path


class OutputError(ValueError):
    """An output path the command cannot write; the message names it and the problem."""


def _real(path):
    return Path(os.path.realpath(path))


def check_outputs(outputs, inputs):
    """Refuse, before any work, outputs that cannot be written or would replace an input.

    Parameters
    ----------
    outputs : dict
        Option name -> path of each output.
    inputs : list of pathlib.Path
        Files the command reads.
    """
    seen = {}
    for option, path in outputs.items():
        real = _real(path)
        if str(path).endswith(("/", os.sep)) or real.is_dir():
            raise OutputError(f"{option} {path}: is a folder; give a file name.")
        if real.exists() and not real.is_file():
            raise OutputError(f"{option} {path}: exists and is not a regular file.")
        if not real.parent.is_dir():
            raise OutputError(f"{option} {path}: the folder {real.parent} does not exist.")
        for source in inputs:
            if real.exists() and os.path.samefile(real, source):
                raise OutputError(f"{option} {path}: is the input file {source}; "
                                  "choose another output path.")
        if real in seen:
            raise OutputError(f"{option} {path}: the same file as {seen[real]}.")
        seen[real] = option
        try:
            descriptor, probe = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.")
        except OSError as error:
            raise OutputError(f"{option} {path}: cannot write in {real.parent} "
                              f"({error.strerror or error}).") from error
        os.close(descriptor)
        os.unlink(probe)


def _mode(real):
    """The permissions the file would get from open(): those of the file it replaces."""
    if real.exists():
        return real.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_all(writers):
    """Write every output, then move them into place; on failure none is touched.

    Parameters
    ----------
    writers : dict
        Path -> (mode, write) where mode is "w" or "wb" and ``write(handle)`` writes the
        file's contents.

    Raises
    ------
    OutputError
        Naming the path that could not be written (no output is written then).
    """
    staged = []
    try:
        for path, (mode, write) in writers.items():
            real = _real(path)
            try:
                descriptor, temporary = tempfile.mkstemp(dir=real.parent,
                                                         prefix=f".{real.name}.")
                staged.append((temporary, real))
                text = {"newline": "", "encoding": "utf-8"} if mode == "w" else {}
                with os.fdopen(descriptor, mode, **text) as handle:
                    write(handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.chmod(temporary, _mode(real))
            except OSError as error:
                raise OutputError(f"{path}: cannot write it ({error.strerror or error}); "
                                  "no output was written.") from error
        for temporary, real in staged:
            os.replace(temporary, real)
    except BaseException:
        for temporary, _ in staged:
            if os.path.lexists(temporary):
                os.unlink(temporary)
        raise
