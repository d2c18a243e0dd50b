"""Execution records for results written before the sidecar kept one (a one-off migration).

`trace_pass` runs, serially and under the tracer, the first trial of a grid's extreme cells
(`extreme_tasks`: every value of a non-numeric cell key, the largest and smallest value of a
numeric one) into a temporary folder, so that the trace reaches the branches of the largest
cells; the rows are discarded and only the execution record is kept.

`adopt` gives such a result a record without recomputing it, when that is sound. Its sidecar
names the revision C that ran it and the byte digest of its code then (the fingerprint's code
part). The result is adopted when
(a) C's own `code_digest` (run in a checkout of C) gives that digest: the run's code was C's;
(b) a trace pass at this checkout gives the functions, kernels, constants and data files the
    result needs; and
(c) each of them is the same in C's tree as here (`_executed.changes` against C's tree).
Else it is stale, with the reasons; it must be rerun.
"""

import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from . import _config, _executed, _io, _runner
from ._checkout import REPO_ROOT

_TREES = {}


def extreme_tasks(tasks):
    """The first trial of every cell holding an extreme value of a cell key: each value of a
    non-numeric key, the smallest and largest of a numeric one."""
    first = {}
    for cell, trial in tasks:
        key = json.dumps(cell, sort_keys=True, default=str)
        if key not in first or trial < first[key][1]:
            first[key] = (cell, trial)
    chosen = {}
    keys = sorted({name for cell, _ in first.values() for name in cell})
    for name in keys:
        having = [(cell, trial) for cell, trial in first.values() if name in cell]
        numeric = all(isinstance(cell[name], (int, float)) and not isinstance(cell[name], bool)
                      for cell, _ in having)
        if numeric:
            picks = [min(having, key=lambda task: task[0][name]),
                     max(having, key=lambda task: task[0][name])]
        else:
            picks = list({json.dumps(cell[name], default=str): (cell, trial)
                          for cell, trial in having}.values())
        for cell, trial in picks:
            chosen[json.dumps(cell, sort_keys=True, default=str)] = (cell, trial)
    return list(chosen.values()) or list(first.values())[:1]


def trace_pass(conf):
    """The execution record of the extreme cells' first trials (or of `compute`) of the
    experiment a config names, rows discarded; with the tasks traced and the seconds."""
    conf = _config.config_as_dict(conf)
    declared = _runner.load(conf["experiment"]["name"])
    folder = str(_config.data_dir(conf.get("data_dir")))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="trace-") as scratch:
        conf = {**conf, "results_dir": scratch}
        if declared.compute is not None:
            with _executed.tracing() as trace:
                declared.compute(conf["experiment"], folder)
            return _executed.record(trace), ["compute"], time.perf_counter() - start
        context = _runner.experiment_context(conf, folder)
        chosen = extreme_tasks(declared.tasks(conf["experiment"], folder))
        records = [_runner._run_traced_task(declared.trial, context, cell, trial, None,
                                             os.getpid())[2]
                   for cell, trial in chosen]
    return _executed.merge(*records), chosen, time.perf_counter() - start


def checkout(revision):
    """A temporary folder holding the tree of `revision` (`git archive`), kept per process."""
    if revision not in _TREES:
        folder = tempfile.mkdtemp(prefix=f"tree-{revision[:10]}-")
        archive = subprocess.run(["git", "archive", "--format=tar", revision], cwd=REPO_ROOT,
                                 capture_output=True, check=True).stdout
        with tempfile.TemporaryFile() as handle:
            handle.write(archive)
            handle.seek(0)
            with tarfile.open(fileobj=handle) as tar:
                tar.extractall(folder, filter="data")
        _TREES[revision] = Path(folder)
    return _TREES[revision]


def old_code_digest(revision, name, crosscheck=False):
    """The byte code digest `name`'s results had at `revision`, by that revision's own rule
    (`experiments._fingerprint.code_digest`, or the cross-check's `code_digest`, which the
    revisions that had one kept in the module `crosscheck.currency`, now
    `crosscheck/sidecar.py`)."""
    root = checkout(revision)
    call = ("from crosscheck.currency import code_digest; print(code_digest())" if crosscheck
            else f"from experiments._fingerprint import code_digest; print(code_digest({name!r}))")
    done = subprocess.run([sys.executable, "-c", call], cwd=root, capture_output=True,
                          text=True, check=False, env={"PATH": "/usr/bin:/bin",
                                                       "PYTHONPATH": str(root)})
    return done.stdout.strip().splitlines()[-1] if done.returncode == 0 and done.stdout else None


def adopt(results, name):
    """(record, reasons): the execution record to write into results/<name>.meta.json when
    the committed result is current by (a)-(c) above, else None and why not."""
    meta = _io.read_meta(results, name)
    revision = (meta or {}).get("git_revision")
    fingerprint = (meta or {}).get("fingerprint")
    if not revision or revision == "unknown" or not fingerprint:
        return None, ["the sidecar records no revision or code digest: the code that ran is "
                      "unknown"]
    recorded = fingerprint.split("-")[-1]
    then = old_code_digest(revision, name)
    if then != recorded:
        return None, [f"the code that ran is not {revision[:10]}'s (code digest {recorded} "
                      f"recorded, {then} at that revision): it ran from a modified tree"]
    record, chosen, seconds = trace_pass(meta["config"])
    reasons = _executed.changes(record, _executed.Index(checkout(revision), cache=False),
                                packages=False)
    record["adopted"] = {"revision": revision, "traced": [
        task if isinstance(task, str) else {"cell": task[0], "trial": task[1]}
        for task in chosen], "trace_seconds": round(seconds, 1)}
    return (None if reasons else record), reasons
