"""Download the data sets into the data folder with pooch; verify them by recorded SHA-256 sums.

Usage::

    python -m kssc.datasets.fetch [--data-dir DIR] [--url NAME=URL ...] [--quiet] [NAME ...]
    python -m kssc.datasets.fetch --verify [--data-dir DIR] [NAME ...]

NAME is one or more of the registered data sets (default: all; `--list` names them with their
sources). The data folder is
`--data-dir`, else the one `kssc.datasets.get_data_dir` resolves ($KSSC_DATA_DIR, `data/` in
a checkout, the user cache folder for an installed package). Every data set is tried and
reported (ok, or failed with the reason); the exit status is 1 if any failed.

Each data set is declared once, in its loader module (`DATASET`, see
`kssc.datasets._registry`): its sources, layout and recorded total size; its files and their
sums are its checksum list (`kssc/datasets/checksums/<name>.sha256`), with per-file sizes where
recorded (`kssc/datasets/metadata/sizes.csv`). A download stops at a cap derived from them
(`download_cap`), so a source that never ends (`file:///dev/zero`) cannot fill the disk. A
source serves the declared layout: the file of a one-file data set (TIR) or a zip or tar
archive holding the listed files under any folder prefix; sources are tried in order until
every file is present. `pooch.retrieve`
downloads each source to a temporary name (with a progress bar when tqdm is installed);
the standard library's `zipfile` and `tarfile` then extract only the listed files, to paths
taken from the checksum list (never from a member's name), each stopped at its recorded size
and checked against its sum. Files are gathered in a staging
folder and moved into the data set's folder only once all are there and verified, so a
failed or interrupted fetch leaves no partial data set behind. Files already present with
the right sum are not downloaded again.

Sources can be replaced (a local mirror, a test server) with the `urls` argument,
`--url NAME=URL` (repeatable) or the environment variable `KSSC_<NAME>_URL` (e.g.
`KSSC_YALEB_URL`), which may hold several space-separated URLs. http(s), ftp and `file://`
URLs work.
"""

import argparse
import hashlib
import importlib.util
import logging
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pooch

from ._integrity import cached_sha256
from ._paths import get_data_dir, read_checksums, read_sizes
from ._registry import DATASETS, declarations

# An archive also holds files this package does not use: a download may be this many times
# the data set's recorded size, plus _ARCHIVE_SLACK bytes; a one-file source, its exact size.
_ARCHIVE_FACTOR = 4
_ARCHIVE_SLACK = 512 * 2**20

_CHUNK = 1 << 20
_TIMEOUT = 60
_DOWNLOAD = "download"


class ChecksumError(ValueError):
    """A downloaded file's SHA-256 sum differs from the recorded one."""

    def __init__(self, path, expected, actual, source=None):
        self.path, self.expected, self.actual, self.source = str(path), expected, actual, source
        origin = f" (from {source})" if source else ""
        super().__init__(
            f"checksum mismatch for {self.path}{origin}: expected sha256 {expected}, "
            f"got {actual}. The download is corrupt or incomplete; nothing was kept."
        )


class DownloadError(OSError):
    """A source could not be downloaded, is not a usable archive, or holds an oversized file."""


@dataclass(frozen=True)
class DatasetSpec:
    """A data set to fetch: its files ({relpath: sha256}), the recorded sizes ({relpath:
    bytes}; may be empty), its sources, their layout ("file" or "archive") and the recorded
    total size (None: the sum of `sizes`)."""

    name: str
    checksums: Mapping = field(repr=False)
    sizes: Mapping = field(repr=False)
    sources: tuple
    layout: str = "archive"
    n_bytes: int = None

    @property
    def total(self):
        """The recorded total size of the data set's files in bytes."""
        return sum(self.sizes.values()) if self.n_bytes is None else self.n_bytes

    def size_cap(self, rel):
        """The most bytes file `rel` may have: its recorded size, else the data set's total."""
        return self.sizes.get(rel, self.total)


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
        lines += [f"  corrupt: {rel}: expected {exp}, got {act}"
                  for rel, exp, act in self.mismatched]
        return "\n".join(lines)


def get_spec(name, urls=None):
    """The DatasetSpec of `name` from its declaration; sources: `urls[name]`, else
    $KSSC_<NAME>_URL, else the declared ones."""
    declared = declarations()[name]
    override = (urls or {}).get(name) or os.environ.get(f"KSSC_{name.upper()}_URL")
    if override:
        sources = tuple(override.split()) if isinstance(override, str) else tuple(override)
    else:
        sources = declared.sources
    return DatasetSpec(name, read_checksums(name), read_sizes(name), sources, declared.layout,
                       declared.n_bytes)


def fetch_datasets(datasets=None, data_dir=None, *, urls=None, progress=True):
    """Download, verify and lay out `datasets` (default all) in the data folder.

    Every data set is tried. Returns {name: folder}; if any failed, raises DownloadError
    naming each failed data set and its reason, after the others are in place.
    """
    outcomes = _fetch_each(_check_names(datasets), get_data_dir(data_dir), urls, progress)
    failed = {name: exc for name, exc in outcomes.items() if isinstance(exc, Exception)}
    if failed:
        raise DownloadError("\n".join(f"{name}: {exc}" for name, exc in failed.items()))
    return outcomes


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
        actual = cached_sha256(path)
        if actual != expected:
            report.mismatched.append((rel, expected, actual))
    return report


def fetch_dataset(spec, folder, *, progress=True):
    """Fetch the files of `spec` that are missing or wrong into `folder`; return `folder`.

    Raises ChecksumError or DownloadError naming the failing file or sources; `folder` is
    then left as it was (files are moved in only once every one is present and verified).
    """
    folder = Path(folder)
    report = check_folder(spec, folder)
    todo = report.missing + [rel for rel, _, _ in report.mismatched]
    if not todo:
        _log(progress,
             f"{spec.name}: all {report.n_files} file(s) present and verified in {folder}")
        return folder
    _log(progress, f"{spec.name}: {len(todo)} of {report.n_files} file(s) to fetch into {folder}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{spec.name}-fetch-", dir=folder.parent))
    try:
        failures = []
        for url in spec.sources:
            try:
                _fetch_from(spec, url, staging, folder, todo, progress)
            except (DownloadError, ChecksumError) as exc:
                _log(progress, f"{spec.name}: {url} failed: {exc}")
                failures.append((url, exc))
                continue
            still = [rel for rel in todo if not _target(staging, rel).is_file()]
            if not still:
                _install(staging, folder, todo)
                _log(progress, f"{spec.name}: done, {report.n_files} file(s) verified in {folder}")
                return folder
            failures.append(
                (url, DownloadError(f"{len(still)} file(s) still missing, e.g. {still[0]}")))
        _raise_failure(spec, todo, failures)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _fetch_each(names, root, urls, progress):
    """{name: folder, or the exception that stopped it} for every data set of `names`."""
    outcomes = {}
    for name in names:
        try:
            outcomes[name] = fetch_dataset(get_spec(name, urls), root / name, progress=progress)
        except (DownloadError, ChecksumError) as exc:
            outcomes[name] = exc
    return outcomes


def _fetch_from(spec, url, staging, folder, todo, progress):
    """Download `url` into `staging` with pooch and put the files of `todo` it holds beside it.

    Errors name the files by their place in `folder`, the data set's folder.
    """
    import requests  # pooch's own dependency, imported lazily as pooch does

    wanted = [rel for rel in todo if not _target(staging, rel).is_file()]
    try:
        with _pooch_quiet():
            download = pooch.retrieve(
                url,
                known_hash=None,
                fname=_DOWNLOAD,
                path=staging,
                downloader=_capped(_downloader(url, progress), download_cap(spec)),
            )
        _unpack(spec, wanted, Path(download), staging, _Origin(folder, url))
    except (DownloadError, ChecksumError):
        raise
    except (requests.RequestException, OSError, ValueError, zipfile.BadZipFile, tarfile.TarError,
            zlib.error, EOFError) as exc:
        raise DownloadError(str(exc)) from exc
    finally:
        (staging / _DOWNLOAD).unlink(missing_ok=True)


@dataclass(frozen=True)
class _Origin:
    """Where a download's files go in the end and where they came from, for error messages."""

    folder: Path
    url: str


def _unpack(spec, wanted, download, staging, origin):
    """Extract the files of `wanted` from the zip or tar archive `download` into `staging`, or
    take `download` as the one file of a one-file data set."""
    if zipfile.is_zipfile(download):
        with zipfile.ZipFile(download) as archive:
            names = [info.filename for info in archive.infolist() if not info.is_dir()]
            _extract(spec, wanted, names, archive.open, staging, origin)
    elif tarfile.is_tarfile(download):
        with tarfile.open(download) as archive:
            members = {info.name: info for info in archive.getmembers() if info.isfile()}
            _extract(spec, wanted, list(members),
                     lambda name: archive.extractfile(members[name]), staging, origin)
    elif spec.layout != "file" or len(spec.checksums) != 1:
        raise DownloadError("the download is not a zip or tar archive (or it is truncated).")
    else:
        (rel, expected), = spec.checksums.items()
        actual = cached_sha256(download)
        if actual != expected:
            raise ChecksumError(_target(origin.folder, rel), expected, actual, source=origin.url)
        target = _target(staging, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(download, target)


def _extract(spec, wanted, member_names, open_member, staging, origin):
    """Copy the archive members holding `wanted` into `staging`, each through `_copy`.

    Only the listed files are extracted, to paths built from the checksum list (`_target`),
    never from a member's name, so no member can write outside `staging`.
    """
    located = _locate_members(member_names, wanted)
    if not located:
        raise DownloadError(
            f"the archive holds none of the {len(wanted)} expected file(s) of "
            f"{spec.name} (e.g. {wanted[0]})."
        )
    for rel, member in located.items():
        with open_member(member) as source:
            _copy(spec, source, member, rel, _target(staging, rel), origin)


def _copy(spec, source, member, rel, target, origin):
    """Stream `member` to `target` through a temporary name, at most its recorded size, and
    check its sum."""
    size, expected = spec.size_cap(rel), spec.checksums[rel]
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.part")
    digest, written = hashlib.sha256(), 0
    try:
        with open(tmp, "wb") as out:
            while chunk := source.read(min(_CHUNK, size + 1 - written)):
                written += len(chunk)
                if written > size:
                    raise DownloadError(
                        f"archive member {member} is larger than the {size} bytes "
                        f"recorded for {rel}; extraction stopped."
                    )
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != expected:
            raise ChecksumError(_target(origin.folder, rel), expected, digest.hexdigest(),
                                source=origin.url)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _locate_members(member_names, relpaths):
    """Map relative paths to archive members, under the folder prefix holding the most of them."""
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


def _install(staging, folder, relpaths):
    """Move the verified files of `relpaths` from `staging` into `folder`."""
    for rel in relpaths:
        target = _target(folder, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(_target(staging, rel), target)


def _raise_failure(spec, todo, failures):
    checksum_errors = [exc for _, exc in failures if isinstance(exc, ChecksumError)]
    if checksum_errors:
        raise checksum_errors[0]
    tried = "\n".join(f"  {url}: {exc}" for url, exc in failures) or "  (no sources)"
    raise DownloadError(
        f"{len(todo)} file(s) could not be fetched (e.g. {todo[0]}). Sources tried:\n{tried}\n"
        f"Override the source with --url {spec.name}=URL "
        f"or ${'KSSC_' + spec.name.upper() + '_URL'}, "
        "or place the files in the data folder by hand and run --verify."
    )


def _downloader(url, progress):
    """pooch's downloader for an http(s) or ftp `url`, or a copier for file:// URLs."""
    scheme = urllib.parse.urlparse(url).scheme
    bar = progress and importlib.util.find_spec("tqdm") is not None
    if scheme in ("http", "https"):
        return pooch.HTTPDownloader(progressbar=bar, timeout=_TIMEOUT)
    if scheme == "ftp":
        return pooch.FTPDownloader(progressbar=bar, timeout=_TIMEOUT)
    if scheme == "file":
        return _copy_file_url
    raise DownloadError(f"unsupported URL scheme {scheme!r} (use http, https, ftp or file).")


def _copy_file_url(url, output_file, pooch_instance, check_only=False):
    """A pooch downloader for file:// URLs (a path or, from `_capped`, a writable object)."""
    path = urllib.request.url2pathname(urllib.parse.urlparse(url).path)
    if check_only:
        return os.path.isfile(path)
    with open(path, "rb") as source:
        if hasattr(output_file, "write"):
            shutil.copyfileobj(source, output_file, _CHUNK)
        else:
            with open(output_file, "wb") as out:
                shutil.copyfileobj(source, out, _CHUNK)
    return None


def download_cap(spec):
    """The most bytes a download of `spec` may bring: the recorded size of a one-file data
    set; an archive, _ARCHIVE_FACTOR times the recorded total plus _ARCHIVE_SLACK."""
    return spec.total if spec.layout == "file" else _ARCHIVE_FACTOR * spec.total + _ARCHIVE_SLACK


class _CappedWriter:
    """A file object for pooch's downloaders that refuses to grow past `cap` bytes."""

    def __init__(self, handle, cap, url):
        self.handle, self.cap, self.url, self.written = handle, cap, url, 0

    def write(self, data):
        self.written += len(data)
        if self.written > self.cap:
            raise DownloadError(f"{self.url} sent more than {self.cap} bytes, the most a source "
                                "of this data set may hold; download stopped.")
        return self.handle.write(data)

    def flush(self):
        self.handle.flush()


def _capped(downloader, cap):
    """`downloader`, writing through a _CappedWriter: stops at `cap` bytes."""

    def download(url, output_file, pooch_instance, check_only=False):
        if check_only:
            return downloader(url, output_file, pooch_instance, check_only=True)
        with Path(output_file).open("w+b") as handle:
            return downloader(url, _CappedWriter(handle, cap, url), pooch_instance)

    return download


@contextmanager
def _pooch_quiet():
    """Silence pooch's log messages (this module reports itself); its progress bar stays."""
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _target(folder, rel):
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(
            f"checksum list entry {rel!r} must be a relative path inside the data set.")
    return Path(folder, *path.parts)


def _check_names(datasets):
    names = list(DATASETS) if not datasets else list(datasets)
    unknown = [name for name in names if name not in DATASETS]
    if unknown:
        raise ValueError(f"unknown data set(s) {unknown}; known: {', '.join(DATASETS)}.")
    return names


def describe_datasets():
    """One paragraph per registered data set: its name, title, files, size, layout, sources."""
    blocks = []
    for name, declared in declarations().items():
        served = "one file" if declared.layout == "file" else "an archive"
        blocks.append("\n".join([
            f"{name}: {declared.title}, {len(read_checksums(name))} file(s), "
            f"{declared.n_bytes:,} bytes, each source serves {served}:",
            *(f"  {url}" for url in declared.sources)]))
    return "\n".join(blocks)


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
    parser.add_argument("datasets", nargs="*", metavar="NAME",
                        help=f"data sets (default all: {' '.join(DATASETS)})")
    parser.add_argument("--data-dir", help="data folder (default: $KSSC_DATA_DIR, "
                        "else data/ in a checkout, else the user cache folder)")
    parser.add_argument("--verify", action="store_true",
                        help="only check the files present against the sums")
    parser.add_argument("--url", action="append", default=[], metavar="NAME=URL",
                        help="replace the sources of NAME (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.add_argument("--list", action="store_true",
                        help="print the registered data sets with their sources and exit")
    args = parser.parse_args(argv)
    if args.list:
        print(describe_datasets())
        return 0
    try:
        names = _check_names(args.datasets)
        if args.verify:
            reports = verify_datasets(names, args.data_dir)
            for report in reports.values():
                print(report.summary())
            return 0 if all(report.ok for report in reports.values()) else 1
        root = get_data_dir(args.data_dir)
        outcomes = _fetch_each(names, root, _parse_urls(args.url), progress=not args.quiet)
    except (ValueError, OSError, argparse.ArgumentTypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, outcome in outcomes.items():
        if isinstance(outcome, Exception):
            print(f"{name}: failed: {outcome}")
        else:
            print(f"{name}: ok, {len(read_checksums(name))} file(s) verified in {outcome}")
    return 1 if any(isinstance(outcome, Exception) for outcome in outcomes.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
