"""Whether a committed result is current: decided by what it executed, not by its files' bytes.

A result (any `results/<name>.csv` with its sidecar: an experiment's, a benchmark's or a
cross-check study's) is current when
1. its sidecar is bound to it: the SHA-256 of `<name>.csv` (and of `<name>_table.csv`)
   recorded in the sidecar match the files, and the sidecar's own config hashes to the
   config part of its fingerprint (a pasted fingerprint does not pass);
2. (experiments) the sidecar's config is the config the suite would run;
3. nothing it executed changed (`_executed.changes` of the sidecar's `executed`): no
   function, compiled kernel or module constant it ran, no data set checksum list it read,
   no version of a computing package; a comment, a reformat, a docstring or code it never
   ran do not count;
4. (experiments) its rows form the (cell, trial) grid of its config's `tasks`, and its
   summary table is what its rows give: the table the sidecar vouches for, computed by
   summary code that has not changed since (`summary_executed`), or else the declared
   summary recomputed from the rows.

A table that is not what its rows give is stale under `--check`; the suite repairs it by
rewriting the table from the rows (`summarise`), without rerunning a trial.
"""

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
from hydra import compose, initialize_config_dir

from . import _checkout, _config, _executed, _fingerprint, _io, _runner

CONFIG_DIR = str(_config.CONF_DIR)
# Profiles whose results also answer a run of the key profile (more trials of the same cells).
COVERED_BY = {"default": ("paper",)}
RESUMMARISE = "the summary table is not what its rows give"


def compose_config(name, profile, overrides=()):
    """The config `python -m experiments.run experiment=NAME profile=PROFILE` would run."""
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return compose("config", overrides=[f"experiment={name}", f"profile={profile}",
                                            *overrides])


def sidecar_problem(results, name, meta):
    """Why the sidecar `meta` does not describe results/<name>.csv, or None. (The summary
    table is checked against the rows: `table_problem`.)"""
    if meta is None or not (Path(results) / f"{name}.csv").exists():
        return "missing"
    if f"{name}.csv" not in (meta.get("files") or {}):
        return "the sidecar binds no CSV (written before sidecars did): rerun it"
    if meta["files"][f"{name}.csv"] != _io.sha256_file(Path(results) / f"{name}.csv"):
        return "the CSV differs from the one the sidecar was written with"
    if meta.get("fingerprint") is not None:
        config_part = str(meta["fingerprint"]).split("-")[0]
        if _io.config_hash(_fingerprint.result_config(meta.get("config") or {})) != config_part:
            return "the sidecar's fingerprint is not that of its own config"
    return None


def code_problem(meta, index):
    """What the result executed that differs now ("; "-joined), or None."""
    executed = meta.get("executed")
    if not executed:
        return "the sidecar has no execution record (rerun it, or run the suite's --adopt)"
    changed = _executed.changes(executed, index)
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return "; ".join(changed[:3]) + more
    return None


def _round_trip(frame):
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    buffer.seek(0)
    return pd.read_csv(buffer)


def table_problem(results, name, meta, index=None):
    """RESUMMARISE when `<name>_table.csv` is missing, not the one the sidecar vouches for,
    or not the declared summary of `<name>.csv`; else None. A table the sidecar vouches for
    whose summary code (`summary_executed`: what computing it executed) is unchanged is the
    summary of the rows it was computed from; otherwise the summary is recomputed."""
    declared = _runner.load(name)
    if declared.summary is None:
        return None
    bound = (meta.get("files") or {}).get(f"{name}_table.csv")
    if bound is None or bound != _io.bound_files(results, name).get(f"{name}_table.csv"):
        return RESUMMARISE
    summary = meta.get("summary_executed")
    if summary and not _executed.changes(summary, index or _executed.Index()):
        return None
    return None if table_matches(results, name, meta) else RESUMMARISE


def table_matches(results, name, meta):
    """Whether `<name>_table.csv` is the declared summary recomputed from `<name>.csv`
    (numbers to 1e-9 relative)."""
    rows, table = _io.read_results(results, name), _io.read_results(results, f"{name}_table")
    expected = _round_trip(_runner.load(name).summary(rows, meta["config"]["experiment"]))
    if list(expected.columns) != list(table.columns) or len(expected) != len(table):
        return False
    for column in table.columns:
        want, have = expected[column], table[column]
        if pd.api.types.is_numeric_dtype(want) and pd.api.types.is_numeric_dtype(have):
            same = np.allclose(want.to_numpy(float), have.to_numpy(float), rtol=1e-9,
                               atol=1e-12, equal_nan=True)
        else:
            same = want.astype(str).tolist() == have.astype(str).tolist()
        if not same:
            return False
    return True


def grid_problem(results, name, meta):
    """Why the rows of `<name>.csv` are not the (cell, trial) grid of the recorded config's
    tasks, or None (also for an experiment without trials)."""
    declared = _runner.load(name)
    if declared.tasks is None:
        return None
    exp = meta["config"]["experiment"]
    tasks = declared.tasks(exp, str(_config.data_dir(meta["config"].get("data_dir"))))
    keys = sorted({key for cell, _ in tasks for key in cell}) + ["trial"]
    rows = _io.read_results(results, name)
    if not set(keys) <= set(rows.columns):
        return f"the rows lack the grid's column(s) {sorted(set(keys) - set(rows.columns))}"
    wanted = _round_trip(pd.DataFrame([{**cell, "trial": trial} for cell, trial in tasks],
                                      columns=keys))
    have = {tuple(map(str, row)) for row in rows[keys].itertuples(index=False)}
    want = {tuple(map(str, row)) for row in wanted[keys].itertuples(index=False)}
    if have != want:
        return (f"the rows are not the grid its config defines: {len(want - have)} of "
                f"{len(want)} (cell, trial) task(s) missing, {len(have - want)} not in the grid")
    return None


def status(results, name, cfg, index=None):
    """"current", RESUMMARISE (the rows are current, the table is not what they give) or
    why the experiment's results are stale."""
    meta = _io.read_meta(results, name)
    problem = sidecar_problem(results, name, meta)
    if problem:
        return problem
    conf = _config.config_as_dict(cfg)
    if str(meta.get("fingerprint")).split("-")[0] != _io.config_hash(
            _fingerprint.result_config(conf)):
        return "config differs"
    index = index or _executed.Index()
    return (code_problem(meta, index) or grid_problem(results, name, meta)
            or table_problem(results, name, meta, index) or "current")


def current_profile(results, name, profile, index=None):
    """(profile whose config results/<name>.csv answers, status): `profile` itself or one in
    COVERED_BY; (None, why) when the results are missing or stale, why as the profile they
    were run at sees it (else as `profile` does)."""
    verdicts = {}
    for candidate in (profile, *COVERED_BY.get(profile, ())):
        verdict = status(results, name, compose_config(name, candidate,
                                                       [f"results_dir={results}"]), index)
        if verdict in ("current", RESUMMARISE):
            return candidate, verdict
        verdicts[candidate] = verdict
    meta = _io.read_meta(results, name) or {}
    ran = ((meta.get("config") or {}).get("profile") or {}).get("name")
    if ran != profile and ran in verdicts:
        return None, f"{verdicts[ran]} (profile={ran})"
    return None, verdicts[profile]


def other_status(results, name, index=None):
    """"current" or why not, for a result no experiment config declares (a benchmark's, a
    cross-check study's): sidecar bound to the CSV, nothing it executed changed."""
    meta = _io.read_meta(results, name)
    return (sidecar_problem(results, name, meta) or input_problem(meta)
            or code_problem(meta, index or _executed.Index()) or "current")


def input_problem(meta):
    """Which input files the sidecar's config records (`experiment.input_files`, written by
    `_produce.input_files`: a study's committed CSVs) differ now, or None. A relative path is
    the repository's."""
    recorded = ((meta.get("config") or {}).get("experiment") or {}).get("input_files") or {}
    changed = []
    for name, digest in recorded.items():
        path = Path(name) if Path(name).is_absolute() else _checkout.REPO_ROOT / name
        if (_io.sha256_file(path) if path.is_file() else None) != digest:
            changed.append(name)
    return f"input changed since it was computed: {', '.join(changed)}" if changed else None


def other_results(results):
    """The stems of results/*.csv that are neither an experiment's rows nor a summary table."""
    names = set(_config.experiment_names())
    return sorted(path.stem for path in Path(results).glob("*.csv")
                  if path.stem not in names
                  and not (path.stem.endswith("_table") and path.stem[:-6] in names))


def write_record(results, name, executed, *, rebind=False, summary=None):
    """Put an execution record (and `summary`: the summary's, when given) into
    results/<name>.meta.json, dropping the old probe; rebind: also vouch for the files as
    they are now (after the suite rewrote the table)."""
    path = Path(results) / f"{name}.meta.json"
    meta = json.loads(path.read_text())
    meta.pop("probe", None)
    meta["executed"] = executed
    if summary is not None:
        meta["summary_executed"] = summary
    if rebind:
        meta["files"] = _io.bound_files(results, name)
    _io.write_json(meta, path)
