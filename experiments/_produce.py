"""The one writer of a result that no experiment config declares (a benchmark's, a cross-check
study's): its CSV and a sidecar that `--check` reads by the same rule as an experiment's.

A producer's command runs under the tracer (`traced_main(main)` in its `__main__` guard), and
its tail calls `write_result`: the CSV, atomically, then the sidecar binding the CSV's
SHA-256, with the config (its hash is the fingerprint), package versions, revision, timing
and the execution record of the run so far (`_executed.record`). A call outside a trace (a
test calling `main`) writes no record, and `--check` then calls the result stale. After the
run, `traced_main` adds to each sidecar the run wrote the command that ran it (`commands`),
so that `python -m experiments.suite --rerun` can run it again.
"""

import json
import os
import sys
import time
from pathlib import Path

from . import _checkout, _executed, _fingerprint, _io


def traced_main(main, argv=None):
    """Run a producer's `main(argv)` under the tracer, then record in every sidecar the run
    wrote the command that ran it (`record_command`); its exit status."""
    command = producer_command(main, argv)
    with _executed.tracing() as trace:
        status = main(argv)
    for path in dict.fromkeys(trace.sidecars):
        record_command(path, command, trace.earlier.get(path))
    return status


def producer_command(main, argv=None):
    """`[module, *arguments]` that runs `main` again, the module by `python -m` (the
    project module that defines `main`, so also for `python -m crosscheck`, which runs
    `crosscheck.run`'s; outside the project, `main.__module__`)."""
    module = _executed.module_name(main.__code__.co_filename) or main.__module__
    return [module, *map(str, sys.argv[1:] if argv is None else argv)]


def record_command(path, command, earlier=None):
    """Put `commands` into the sidecar at `path`: `[command]`, or, when the run resumed
    rows of an earlier one (its sidecar says `resumed`), the earlier run's commands first
    (`earlier`; None stands for rows whose command nobody recorded). Running them in order
    from scratch recomputes the result (`python -m experiments.suite --rerun`)."""
    path = Path(path)
    if not path.is_file():
        return
    meta = json.loads(path.read_text())
    meta["commands"] = [*(earlier or [None]), command] if "resumed" in meta else [command]
    _io.write_json(meta, path)


def write_result(frame, path, config, *, started, wall_time, extra=None):
    """Write `frame` to `path` (CSV) and its sidecar (`write_sidecar`)."""
    _io.write_csv(frame, path)
    write_sidecar(path, config, started=started, wall_time=wall_time, extra=extra)


def write_benchmark(frame, path, name, settings, *, started, clock, extra=None):
    """A benchmark's tail: `write_result` of `frame` with the config ``{"experiment":
    {"name": name, **settings}}``, the wall time since `clock` (a `time.perf_counter()`
    reading at the start) and, beside `extra`, the load average at the end; then prints
    where it wrote."""
    write_result(frame, path, {"experiment": {"name": name, **settings}}, started=started,
                 wall_time=time.perf_counter() - clock,
                 extra={**(extra or {}), "load_average_end": os.getloadavg()})
    print(f"wrote {path}")


def write_sidecar(path, config, *, started, wall_time, extra=None):
    """The sidecar `<stem>.meta.json` of the CSV at `path`, written after it (see the module
    docstring)."""
    path = Path(path)
    trace = _executed.current()
    executed = _executed.record(trace) if trace is not None else None
    fingerprint = _io.config_hash(_fingerprint.result_config({"experiment": {}, **config}))
    _io.write_meta(config, path.with_name(f"{path.stem}.meta.json"), fingerprint=fingerprint,
                   started=started, wall_time=wall_time,
                   extra={**(extra or {}), "files": {path.name: _io.sha256_file(path)},
                          "executed": executed})


def input_files(*paths):
    """`{path: SHA-256}` of the files a producer read its input from (committed CSVs, saved
    data), for its config: the sidecar says which inputs the result was computed from, and
    `--check` calls it stale when one of them changed. Paths inside the repository are kept
    relative to its root; a missing file is recorded as None."""
    found = {}
    for path in map(Path, paths):
        key = path.resolve()
        key = (key.relative_to(_checkout.REPO_ROOT).as_posix()
               if key.is_relative_to(_checkout.REPO_ROOT) else key.as_posix())
        found[key] = _io.sha256_file(path) if path.is_file() else None
    return found


def resumed_from(path):
    """What a producer that resumes from the CSV at `path` keeps of the earlier run: None
    when there is no CSV (a run from scratch), else the earlier sidecar when it binds the CSV
    as it is now, or `{}` when it does not (rows of unknown code)."""
    path = Path(path)
    if not path.is_file():
        return None
    meta = _io.read_meta(path.parent, path.stem) or {}
    if (meta.get("files") or {}).get(path.name) != _io.sha256_file(path):
        return {}
    return meta


def write_resumed_sidecar(path, config, earlier, *, started, wall_time, extra=None):
    """`write_sidecar` for a producer that kept rows of an earlier run (`earlier`: what
    `resumed_from` said before the run started). The execution record is the union of both
    runs' and the earlier configs are kept (`resumed`); when the kept rows had no record
    (`earlier` is `{}` or has none), the sidecar has none either, so `--check` calls the
    result stale until a run from scratch."""
    write_sidecar(path, config, started=started, wall_time=wall_time, extra=extra)
    if earlier is None:
        return
    sidecar = Path(path).with_name(f"{Path(path).stem}.meta.json")
    meta = _io.read_meta(sidecar.parent, Path(path).stem)
    meta["resumed"] = [*earlier.get("resumed", []), earlier["config"]] if earlier else [
        "rows of an earlier run without a sidecar bound to them"]
    meta["executed"] = (_executed.merge(earlier["executed"], meta["executed"])
                        if earlier.get("executed") and meta.get("executed") else None)
    _io.write_json(meta, sidecar)
