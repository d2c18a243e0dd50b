"""Files the experiments write: atomic CSV/JSON writes, the resumable checkpoint, the sidecar,
the lock of a results folder.

Nothing in `results/` is ever half-written: every file is written to a temporary file in
the same folder and moved into place with `os.replace`, which is atomic on POSIX. A killed
run's temporary files are removed by the next run of the same experiment.
"""

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from . import _executed
from ._checkout import REPO_ROOT

_UMASK = os.umask(0)
os.umask(_UMASK)
PACKAGES = ("numpy", "scipy", "scikit-learn", "kssc", "hydra-core", "pandas", "joblib",
            "matplotlib")


@contextlib.contextmanager
def atomic_path(path):
    """A temporary path in `path`'s folder that becomes `path` (`os.replace`) when the block
    ends without an error, and is removed when it raises: the one atomic writer."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file normal permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _atomic_write(path, write):
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        write(handle)
        handle.flush()
        os.fsync(handle.fileno())


def write_csv(frame, path):
    """Write a DataFrame as CSV, atomically."""
    _atomic_write(path, lambda handle: frame.to_csv(handle, index=False))


def write_text(text, path):
    """Write a text file, atomically."""
    _atomic_write(path, lambda handle: handle.write(text))


def write_json(obj, path):
    """Write JSON (indented, NaN allowed), atomically."""
    write_text(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n", path)


def config_hash(obj):
    """Stable short hash of a JSON-serialisable config: decides whether a checkpoint resumes."""
    # Through JSON first: a config read back from a sidecar has string keys where the composed
    # one has integers ({2: ...} -> {"2": ...}), and both must hash alike.
    plain = json.loads(json.dumps(obj, default=str))
    blob = json.dumps(plain, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def git_revision():
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=10, check=True)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def package_versions(names=PACKAGES):
    """{distribution: version, or None when not installed} of `names` (the execution
    record's reading, `_executed.package_versions`)."""
    return _executed.package_versions(names)


def machine():
    """What computed a result's timings: {"cpu": the processor's model name (Linux's
    /proc/cpuinfo, else `platform.processor()`; None when neither says), "blas": each BLAS
    and OpenMP library threadpoolctl finds loaded (its API, implementation, version, threads
    and, for OpenBLAS, the kernel architecture)}."""
    import platform

    from threadpoolctl import threadpool_info

    cpu = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    keys = ("user_api", "internal_api", "version", "num_threads", "architecture")
    return {"cpu": cpu or platform.processor() or None,
            "blas": [{key: info.get(key) for key in keys} for info in threadpool_info()]}


def now():
    return _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds")


def sha256_file(path):
    """The hex SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def bound_files(results_dir, name):
    """{file name: SHA-256} of experiment `name`'s CSV and summary table in results_dir: the
    files a sidecar vouches for."""
    files = [Path(results_dir) / f for f in (f"{name}.csv", f"{name}_table.csv")]
    return {path.name: sha256_file(path) for path in files if path.exists()}


def write_meta(cfg, path, *, fingerprint, started, wall_time, extra=None):
    """The sidecar of one results CSV, written after the CSV and its table: its fingerprint
    (config + code), the files it vouches for (their SHA-256), config, versions, git
    revision, machine (`machine`), timing."""
    config = cfg if isinstance(cfg, dict) else OmegaConf.to_container(cfg, resolve=True)
    meta = {
        "experiment": config.get("experiment", {}).get("name"),
        "fingerprint": fingerprint,
        "files": bound_files(Path(path).parent, config.get("experiment", {}).get("name")),
        "config": config,
        "packages": package_versions(),
        "git_revision": git_revision(),
        "cpu_count": os.cpu_count(),
        "machine": machine(),
        "started": started,
        "finished": now(),
        "wall_time_s": round(wall_time, 3),
    }
    meta.update(extra or {})
    write_json(meta, path)


class Checkpoint:
    """Append-only JSON-lines log of finished trials, so a killed run can resume.

    Line 1 is a header holding the run's hash (the runner passes the fingerprint: config and
    code); each further line is one finished task (`{"key": ..., "rows": [...], "executed":
    {...}}`: its rows and what it executed, `_executed.record`), flushed
    and fsynced as soon as the task ends. A file whose hash differs from the current one (or
    `restart=True`) is discarded; `discarded` then says what was lost:
    `{"hash": the file's hash (None when restarted or unreadable), "n_tasks": its tasks}`.
    """

    def __init__(self, path, chash, restart=False):
        self.path = Path(path)
        self.chash = chash
        self.done = {}
        self.executed = {}
        self.discarded = None
        if restart and self.path.exists():
            self.discarded = {"hash": None, "n_tasks": _count_tasks(self.path)}
            self.path.unlink()
        self._load()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        # Held open for the checkpoint's lifetime and closed by close(), so no `with` block.
        self._handle = open(self.path, "a")  # noqa: SIM115
        if fresh:
            self._write({"config_hash": chash, "created": now()})

    def _load(self):
        if not self.path.exists():
            return
        with open(self.path) as handle:
            lines = handle.read().splitlines()
        try:
            header = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            header = {}
        if header.get("config_hash") != self.chash:
            self.discarded = {"hash": header.get("config_hash"), "n_tasks": len(lines[1:])}
            self.path.unlink()
            return
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by the kill
                continue
            self.done[entry["key"]] = entry["rows"]
            self.executed[entry["key"]] = entry.get("executed")
        # Rewrite without a possibly truncated last line, so appends start on a clean line.
        body = [json.dumps({"config_hash": self.chash, "created": header.get("created")})]
        body += [json.dumps({"key": key, "rows": rows, "executed": self.executed.get(key)})
                 for key, rows in self.done.items()]
        write_text("\n".join(body) + "\n", self.path)

    def _write(self, entry):
        self._handle.write(json.dumps(entry, default=_json_default) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def add(self, key, rows, executed=None):
        """Record a finished task: its rows and what it executed (`_executed.record`)."""
        self.done[key] = rows
        self.executed[key] = executed
        self._write({"key": key, "rows": rows, "executed": executed})

    def close(self):
        self._handle.close()


def _count_tasks(path):
    with open(path) as handle:
        return max(sum(1 for _ in handle) - 1, 0)


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def read_results(results_dir, name):
    """The CSV `name`.csv in results_dir, or None when it has not been written."""
    path = Path(results_dir) / f"{name}.csv"
    return pd.read_csv(path) if path.exists() else None


def read_meta(results_dir, name):
    """The sidecar of experiment `name` as a dict, or None when there is none (or unreadable)."""
    path = Path(results_dir) / f"{name}.meta.json"
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


class ResultsLocked(RuntimeError):
    """Another process is running the same experiment into the same results folder."""


@contextlib.contextmanager
def results_lock(results_dir, name):
    """Hold `results_dir/.partial/<name>.lock` (an flock, released by the kernel when the
    process dies, so a killed run never leaves a stale lock); raise ResultsLocked if another
    run holds it."""
    path = Path(results_dir) / ".partial" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "unknown"
            raise ResultsLocked(
                f"Another run of experiment {name!r} (pid {owner}) is writing to {results_dir}; "
                f"wait for it to finish, or give this run another results_dir=.") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def remove_stale_temporaries(results_dir, name):
    """Delete the temporary files a killed run of `name` left in results_dir; their names."""
    folder = Path(results_dir)
    stale = [*folder.glob(f".{name}.*.tmp"), *folder.glob(f".{name}_table.csv.*.tmp")]
    for path in stale:
        path.unlink(missing_ok=True)
    return sorted(p.name for p in stale)
