"""Whether a committed result is current: decided by what the code computes, not by its bytes.

A results CSV is current for a config when
1. its sidecar is bound to it: the SHA-256 and row count of `<name>.csv` (and of
   `<name>_table.csv`) recorded in the sidecar match the files, and the sidecar's own config
   hashes to the config part of its fingerprint (a pasted fingerprint does not pass);
2. the sidecar's config is the config the suite would run (`_fingerprint.result_config`);
3. the code is the code that wrote it (`_fingerprint.code_digest`: the result sources, the
   data checksum lists and the package versions), or, when the code differs, it still
   computes the same numbers: the experiment's *probe* (its smoke profile, run into a
   temporary folder) gives the same trial rows, timing and machine columns left out, as the
   probe of the code that wrote the result (recorded in the sidecar as `probe`).

So a refactor that changes no number leaves every committed result current, and a change
of any number in a probe marks the result stale. A probe whose rows agree but whose summary
table differs (a new summary column, another interval method) means the summary code
changed: the suite rewrites the table from the committed rows (`summarise`) without rerunning
a trial. Probes are cached per code digest in `.cache/probes.json` (not committed).

A change the probe cannot see (it runs the smoke grid only: small data, the exact
neighbours) is not caught: rerun with `python -m experiments.suite --only NAME --force`.
"""

import hashlib
import io
import json
import tempfile
from pathlib import Path

from hydra import compose, initialize_config_dir

from . import _config, _fingerprint, _io, _runner
from ._checkout import REPO_ROOT

CONFIG_DIR = str(_config.CONF_DIR)
PROBE_CACHE = REPO_ROOT / ".cache" / "probes.json"
# Columns that vary between runs of the same code (times, memory, the machine's load), and
# the warnings a fit raised (their text is not a number; the numbers they explain are kept).
VOLATILE_PREFIXES = ("time_", "rss_", "load_average", "warnings")
# Profiles whose results also answer a run of the key profile (more trials of the same cells).
COVERED_BY = {"default": ("paper",)}


def compose_config(name, profile, overrides=()):
    """The config `python -m experiments.run experiment=NAME profile=PROFILE` would run."""
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return compose("config", overrides=[f"experiment={name}", f"profile={profile}",
                                            *overrides])


def frame_digest(frame):
    """A digest of a results frame's numbers: volatile columns dropped, columns sorted,
    floats to 9 significant digits (the last bits of a sum may follow the thread count)."""
    kept = sorted(c for c in frame.columns if not c.startswith(VOLATILE_PREFIXES))
    buffer = io.StringIO()
    frame[kept].to_csv(buffer, index=False, float_format="%.9g")
    return hashlib.sha256(buffer.getvalue().encode()).hexdigest()[:16]


def digests(results, name):
    """{"rows": digest, "table": digest or None} of results/<name>.csv and its table."""
    rows, table = _io.read_results(results, name), _io.read_results(results, f"{name}_table")
    return {"rows": frame_digest(rows), "table": None if table is None else frame_digest(table)}


def _smoke_result_config(name):
    return _fingerprint.result_config(_config.config_as_dict(compose_config(name, "smoke")))


def probe(name, results=None):
    """The probe of experiment `name` with this code: `digests` of its smoke run, cached per
    code digest and smoke config in PROBE_CACHE. `results`: a folder that already holds a
    smoke run of this code (its digests are the probe's; nothing is rerun)."""
    smoke = _smoke_result_config(name)
    key = f"{name}:{_fingerprint.code_digest(name)}:{_io.config_hash(smoke)}"
    try:
        cache = json.loads(PROBE_CACHE.read_text())
    except (OSError, json.JSONDecodeError):
        cache = {}
    if key not in cache:
        meta = _io.read_meta(results, name) if results is not None else None
        same = meta is not None and _io.config_hash(
            _fingerprint.result_config(meta["config"])) == _io.config_hash(smoke)
        if same:
            cache[key] = digests(results, name)
        else:
            with tempfile.TemporaryDirectory(prefix=f"probe-{name}-") as folder:
                _runner.run(compose_config(name, "smoke", [f"results_dir={folder}"]))
                cache[key] = digests(folder, name)
        _io.write_json(cache, PROBE_CACHE)
    return cache[key]


def sidecar_problem(results, name, meta):
    """Why the sidecar `meta` does not describe results/<name>.csv, or None when it does.

    Only the trial rows are checked here: a summary table that differs from the one the
    sidecar vouches for is rewritten from the rows (`status` says "resummarise")."""
    if meta is None or not (Path(results) / f"{name}.csv").exists():
        return "missing"
    files = _io.bound_files(results, name)
    if (meta.get("files") or {}).get(f"{name}.csv") != files[f"{name}.csv"]:
        return "the CSV differs from the one the sidecar was written with"
    config_part = str(meta.get("fingerprint", "")).split("-")[0]
    if _io.config_hash(_fingerprint.result_config(meta.get("config") or {})) != config_part:
        return "the sidecar's fingerprint is not that of its own config"
    return None


def _table_bound(results, name, meta):
    """Whether the summary table is the one the sidecar vouches for (or both are absent)."""
    return (meta.get("files") or {}).get(f"{name}_table.csv") == \
        _io.bound_files(results, name).get(f"{name}_table.csv")


def status(results, name, cfg):
    """"current", "resummarise" (rows current; the summary code changed, or the table is not
    the one the sidecar vouches for) or why the results are stale."""
    meta = _io.read_meta(results, name)
    problem = sidecar_problem(results, name, meta)
    if problem:
        return problem
    conf = _config.config_as_dict(cfg)
    if meta["fingerprint"].split("-")[0] != _io.config_hash(_fingerprint.result_config(conf)):
        return "config differs"
    code = _fingerprint.code_digest(name)
    recorded = meta.get("probe") or {}
    if meta["fingerprint"].split("-")[-1] == code or recorded.get("code") == code:
        return "current" if _table_bound(results, name, meta) else "resummarise"
    if recorded.get("rows") is None:
        return "code differs and the sidecar records no probe"
    now = probe(name)
    if now["rows"] != recorded["rows"]:
        return "code differs and computes other numbers (probe)"
    same_table = now["table"] == recorded.get("table") and _table_bound(results, name, meta)
    return "current" if same_table else "resummarise"


def current_profile(results, name, profile):
    """(profile whose config results/<name>.csv answers, status): `profile` itself or one in
    COVERED_BY; (None, why) when the results are missing or stale."""
    why = None
    for candidate in (profile, *COVERED_BY.get(profile, ())):
        verdict = status(results, name, compose_config(name, candidate,
                                                       [f"results_dir={results}"]))
        if verdict in ("current", "resummarise"):
            return candidate, verdict
        why = why or verdict
    return None, why


def record_probe(results, name):
    """Write the probe of this code into results/<name>.meta.json, and the files it binds."""
    path = Path(results) / f"{name}.meta.json"
    meta = json.loads(path.read_text())
    meta["probe"] = {"code": _fingerprint.code_digest(name), **probe(name, results)}
    meta["files"] = _io.bound_files(results, name)
    _io.write_json(meta, path)
