"""The one writer of a result that no experiment config declares (a benchmark's, a cross-check
study's): its CSV and a sidecar that `--check` reads by the same rule as an experiment's.

A producer's command runs under the tracer (`traced_main(main)` in its `__main__` guard), and
its tail calls `write_result`: the CSV, atomically, then the sidecar binding the CSV's
SHA-256, with the config (its hash is the fingerprint), package versions, revision, timing
and the execution record of the run so far (`_executed.record`). A call outside a trace (a
test calling `main`) writes no record, and `--check` then calls the result stale.
"""

import os
import time
from pathlib import Path

from . import _executed, _fingerprint, _io


def traced_main(main, argv=None):
    """Run a producer's `main(argv)` under the tracer; its exit status."""
    with _executed.tracing():
        return main(argv)


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
