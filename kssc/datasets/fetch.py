"""Download the data sets into the data folder and verify them against recorded SHA-256 sums.

Usage::

    python -m kssc.datasets.fetch [--data-dir DIR] [--url NAME=URL ...] [--quiet] [NAME ...]
    python -m kssc.datasets.fetch --verify [--data-dir DIR] [NAME ...]

NAME is one or more of `tir`, `hopkins155`, `yaleb` (default: all). The data folder is
`--data-dir`, else $KSSC_DATA_DIR, else `data/` at the repository root.

Every source is a URL that serves either the single file of a one-file data set (TIR) or a
zip archive. From an archive only the files named in the data set's checksum list
(`kssc/datasets/checksums/<name>.sha256`) are kept, found at whatever folder prefix the
archive puts them under. Sources are tried in order until every file is present; the
public homes come first, then copies in public git repositories. Each file is written to a
temporary name in its destination folder, checked against its SHA-256 sum and only then
renamed into place (`os.replace`), so an interrupted or corrupt download leaves nothing
behind. Files already present with the right sum are not downloaded again.

Sources can be replaced, e.g. by a local mirror or a test server, with the `urls` argument,
`--url NAME=URL`, or the environment variable `KSSC_<NAME>_URL` (e.g. `KSSC_YALEB_URL`),
which may hold several space-separated URLs. `file://` URLs work too.
"""

import argparse
import hashlib
import http.client
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ._paths import DATASETS, get_data_dir, read_checksums

_KSSC_COMMIT = "9189465e4b14c344fac73756ffb6cf84fb36b68f"
_HOPKINS_MIRROR_COMMIT = "83c60f4c3edf81ded709228ac2a6ed38a414b71d"

DEFAULT_SOURCES = {
    "tir": (
        f"https://github.com/sjtrny/kssc/raw/{_KSSC_COMMIT}/data/TIRlib.mat",
    ),
    "hopkins155": (
        "http://www.vision.jhu.edu/data/hopkins155/Hopkins155.zip",
        "https://github.com/ChristosXeno/Evaluation-of-Geometric-Motion-Segmentation-Methods"
        f"/archive/{_HOPKINS_MIRROR_COMMIT}.zip",
    ),
    "yaleb": (
        "http://vision.ucsd.edu/extyaleb/CroppedYaleBZip/CroppedYale.zip",
        f"https://github.com/sjtrny/kssc/archive/{_KSSC_COMMIT}.zip",
    ),
}
"""Sources of each data set, tried in order: the public home first, then a git copy."""

_CHUNK = 1 << 20
_TIMEOUT = 60


class ChecksumError(ValueError):
    """A file's SHA-256 sum differs from the recorded one."""

    def __init__(self, path, expected, actual, source=None):
        self.path, self.expected, self.actual, self.source = str(path), expected, actual, source
        origin = f" (from {source})" if source else ""
        super().__init__(
            f"checksum mismatch for {self.path}{origin}: expected sha256 {expected}, "
            f"got {actual}. The download is corrupt or incomplete; nothing was kept."
        )


class DownloadError(OSError):
    """A source could not be downloaded or is not a usable archive."""


@dataclass(frozen=True)
class DatasetSpec:
    """A data set to fetch: its name, {relative path: sha256} and its sources in order."""

    name: str
    checksums: Mapping = field(repr=False)
    sources: tuple


@dataclass
class Report:
    """Outcome of checking a data set folder against its checksum list."""

    name: str
    root: Path
    n_files: int
    missing: list = field(default_factory=list)
    mismatched: list = field(default_factory=list)  # (relative path, expected, actual)

    @property
    def ok(self):
        return not self.missing and not self.mismatched

    def summary(self):
        if self.ok:
            return f"{self.name}: OK, {self.n_files} file(s) verified in {self.root}"
        lines = [
            f"{self.name}: {len(self.missing)} missing and {len(self.mismatched)} corrupt "
            f"of {self.n_files} file(s) in {self.root}"
        ]
        lines += [f"  missing: {rel}" for rel in self.missing[:5]]
        if len(self.missing) > 5:
            lines.append(f"  ... and {len(self.missing) - 5} more missing")
        lines += [f"  corrupt: {rel}: expected {exp}, got {act}" for rel, exp, act in self.mismatched]
        return "\n".join(lines)


def get_spec(name, urls=None):
    """The DatasetSpec of `name`, with sources from `urls[name]`, else $KSSC_<NAME>_URL, else defaults."""
    checksums = read_checksums(name)
    override = (urls or {}).get(name) or os.environ.get(f"KSSC_{name.upper()}_URL")
    if override:
        sources = tuple(override.split()) if isinstance(override, str) else tuple(override)
    else:
        sources = DEFAULT_SOURCES[name]
    return DatasetSpec(name, checksums, sources)


def fetch_datasets(datasets=None, data_dir=None, *, urls=None, progress=True):
    """Download, verify and lay out `datasets` (default all) in the data folder.

    Returns {name: folder}. Raises ChecksumError or DownloadError naming the failing file or
    source; files already verified stay in place, nothing unverified is left.
    """
    root = get_data_dir(data_dir)
    return {
        name: fetch_dataset(get_spec(name, urls), root / name, progress=progress)
        for name in _check_names(datasets)
    }


def verify_datasets(datasets=None, data_dir=None):
    """Check `datasets` (default all) in the data folder against their sums: {name: Report}."""
    root = get_data_dir(data_dir)
    return {name: check_folder(get_spec(name), root / name) for name in _check_names(datasets)}


def check_folder(spec, folder):
    """Report which files of `spec` are missing from `folder` or have the wrong sum."""
    folder = Path(folder)
    report = Report(spec.name, folder, len(spec.checksums))
    for rel, expected in spec.checksums.items():
        path = _target(folder, rel)
        if not path.is_file():
            report.missing.append(rel)
            continue
        actual = sha256_file(path)
        if actual != expected:
            report.mismatched.append((rel, expected, actual))
    return report


def fetch_dataset(spec, folder, *, progress=True):
    """Fetch the files of `spec` that are missing or wrong into `folder`; return `folder`."""
    folder = Path(folder)
    report = check_folder(spec, folder)
    todo = report.missing + [rel for rel, _, _ in report.mismatched]
    if not todo:
        _log(progress, f"{spec.name}: all {report.n_files} file(s) present and verified in {folder}")
        return folder
    _log(progress, f"{spec.name}: {len(todo)} of {report.n_files} file(s) to fetch into {folder}")
    folder.mkdir(parents=True, exist_ok=True)
    failures = []
    for url in spec.sources:
        try:
            installed = _fetch_from(spec, folder, url, todo, progress)
        except (DownloadError, ChecksumError) as exc:
            _log(progress, f"{spec.name}: {url} failed: {exc}")
            failures.append((url, exc))
            continue
        todo = [rel for rel in todo if rel not in installed]
        if todo:
            failures.append((url, DownloadError(f"provided {len(installed)} file(s); {len(todo)} still missing")))
        else:
            _log(progress, f"{spec.name}: done, {report.n_files} file(s) verified in {folder}")
            return folder
    checksum_errors = [exc for _, exc in failures if isinstance(exc, ChecksumError)]
    if checksum_errors:
        raise checksum_errors[0]
    tried = "\n".join(f"  {url}: {exc}" for url, exc in failures) or "  (no sources)"
    raise DownloadError(
        f"{spec.name}: {len(todo)} file(s) could not be fetched (e.g. {todo[0]}). "
        f"Sources tried:\n{tried}\nOverride the source with --url {spec.name}=URL or "
        f"${'KSSC_' + spec.name.upper() + '_URL'}."
    )


def sha256_file(path):
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch_from(spec, folder, url, todo, progress):
    """Download `url` and install the files of `todo` it holds; return the set installed."""
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{spec.name}-download-", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            _download(url, out, spec.name, progress)
        if len(spec.checksums) == 1:
            (rel, expected), = spec.checksums.items()
            actual = sha256_file(tmp)
            if actual == expected:
                target = _target(folder, rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, target)
                return {rel}
            if not zipfile.is_zipfile(tmp):
                raise ChecksumError(_target(folder, rel), expected, actual, source=url)
        elif not zipfile.is_zipfile(tmp):
            raise DownloadError(f"{url} is not a zip archive (or the download is truncated).")
        return _install_from_zip(spec, folder, tmp, url, todo)
    finally:
        tmp.unlink(missing_ok=True)


def _install_from_zip(spec, folder, archive, url, todo):
    """Extract the `todo` files found in `archive`, verify all, then move them into place."""
    try:
        with zipfile.ZipFile(archive) as zf:
            located = _locate_members([info.filename for info in zf.infolist() if not info.is_dir()], todo)
            if not located:
                raise DownloadError(
                    f"{url} holds none of the {len(todo)} expected file(s) of {spec.name} "
                    f"(e.g. {todo[0]})."
                )
            staged, bad = [], None
            try:
                for rel, member in located.items():
                    target = _target(folder, rel)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    tmp, actual = _extract_to_temp(zf, member, target)
                    staged.append((tmp, target))
                    if actual != spec.checksums[rel] and bad is None:
                        bad = ChecksumError(target, spec.checksums[rel], actual, source=url)
                if bad is not None:
                    raise bad
                for tmp, target in staged:
                    os.replace(tmp, target)
                staged = []
            finally:
                for tmp, _ in staged:
                    tmp.unlink(missing_ok=True)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise DownloadError(f"{url}: corrupt zip archive ({exc}).") from exc
    return set(located)


def _extract_to_temp(zf, member, target):
    """Copy one archive member to a temporary file next to `target`; return (path, sha256)."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, zf.open(member) as src:
            while chunk := src.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, digest.hexdigest()


def _locate_members(member_names, relpaths):
    """Map relative paths to archive members, under the folder prefix that holds the most of them."""
    wanted = set(relpaths)
    by_prefix = {}
    for member in member_names:
        parts = member.replace("\\", "/").split("/")
        for i in range(len(parts)):
            rel = "/".join(parts[i:])
            if rel in wanted:
                by_prefix.setdefault("/".join(parts[:i]), {})[rel] = member
    if not by_prefix:
        return {}
    best = max(by_prefix, key=lambda prefix: (len(by_prefix[prefix]), -len(prefix)))
    return by_prefix[best]


def _download(url, out, label, progress):
    """Stream `url` into the open file `out`; raise DownloadError on any failure or truncation."""
    request = urllib.request.Request(url, headers={"User-Agent": "kssc-datasets-fetch"})
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            meter = _Progress(f"{label}: {url}", total, enabled=progress)
            received = 0
            while chunk := response.read(_CHUNK):
                out.write(chunk)
                received += len(chunk)
                meter.update(received)
            meter.close(received)
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise DownloadError(f"{url}: {exc.reason}") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise DownloadError(f"{url}: {exc!r}") from exc
    if total is not None and received != total:
        raise DownloadError(f"{url}: download truncated, received {received} of {total} bytes.")


class _Progress:
    """Byte counter on stderr: redrawn in place every 0.5 s on a terminal, a line every 10 s otherwise."""

    def __init__(self, label, total, enabled):
        self.label, self.total, self.enabled = label, total, enabled
        self.live = enabled and sys.stderr.isatty()
        self.interval = 0.5 if self.live else 10.0
        self.last = time.monotonic()

    def update(self, received):
        now = time.monotonic()
        if self.enabled and now - self.last >= self.interval:
            self.last = now
            self._write(received, end="" if self.live else "\n")

    def close(self, received):
        if self.enabled:
            self._write(received, end="\n")

    def _write(self, received, end):
        done = f"{received / 1e6:.1f} MB"
        if self.total:
            done += f" / {self.total / 1e6:.1f} MB"
        start = "\r" if self.live else ""
        sys.stderr.write(f"{start}{self.label}: {done}{end}")
        sys.stderr.flush()


def _target(folder, rel):
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"checksum list entry {rel!r} must be a relative path inside the data set.")
    return Path(folder, *path.parts)


def _check_names(datasets):
    names = list(DATASETS) if not datasets else list(datasets)
    unknown = [name for name in names if name not in DATASETS]
    if unknown:
        raise ValueError(f"unknown data set(s) {unknown}; known: {', '.join(DATASETS)}.")
    return names


def _log(enabled, message):
    if enabled:
        print(message, file=sys.stderr, flush=True)


def _parse_urls(items):
    urls = {}
    for item in items:
        name, sep, url = item.partition("=")
        if not sep or not url:
            raise argparse.ArgumentTypeError(f"--url expects NAME=URL, got {item!r}")
        urls.setdefault(name, []).append(url)
    return urls


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m kssc.datasets.fetch",
        description="Download the k-SSC data sets and verify them against recorded SHA-256 sums.",
    )
    parser.add_argument("datasets", nargs="*", metavar="NAME", help=f"data sets (default all: {' '.join(DATASETS)})")
    parser.add_argument("--data-dir", help="data folder (default: $KSSC_DATA_DIR, else data/ at the repository root)")
    parser.add_argument("--verify", action="store_true", help="only check the files present against the sums")
    parser.add_argument("--url", action="append", default=[], metavar="NAME=URL", help="replace the sources of NAME (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    try:
        if args.verify:
            reports = verify_datasets(args.datasets, args.data_dir)
            for report in reports.values():
                print(report.summary())
            return 0 if all(report.ok for report in reports.values()) else 1
        fetch_datasets(args.datasets, args.data_dir, urls=_parse_urls(args.url), progress=not args.quiet)
    except (ValueError, OSError, argparse.ArgumentTypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
