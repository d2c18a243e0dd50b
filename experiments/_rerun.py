"""Rerun the results no experiment config declares (benchmarks, cross-check studies) by the
commands their sidecars record (`commands`, written by `_produce.traced_main`).

`rerun` takes the stale ones (or those named, with `force` even when current), each after
the results whose CSVs it reads (`experiment.input_files` of its config), and for each:
sets its CSV, table and sidecar aside (a producer that resumes rows would otherwise keep
them), runs its commands in order from the repository's root (each module run by `python -m`), and
checks what they wrote: a sidecar bound to a new CSV, current, whose config is the one the
result had (so a command that does not reproduce the result's settings is caught, not
committed). A failure of any kind puts the earlier files back and stops the rerun (with
`keep_going`, leaves that result and its readers and goes on); so does a result with no
recorded command, naming it. A `Budget` leaves the results whose last run would end past
it. A killed rerun's files are put back by the next one, before it starts.
"""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import _checkout, _executed, _io, _staleness

ASIDE = ".rerun"


class RerunError(RuntimeError):
    """A result could not be rerun; the message says which and why."""


class Budget:
    """The minutes a rerun may take (None: no limit): a result starts only when the wall time
    its sidecar recorded for its last run ends within them, so a rerun longer than a working
    session can be done in parts, each leaving every result it finished current."""

    def __init__(self, minutes=None, clock=time.monotonic):
        self.clock = clock
        self.end = None if minutes is None else clock() + 60.0 * minutes

    def allows(self, meta):
        """None when the result may start, else why not."""
        seconds = float((meta or {}).get("wall_time_s") or 0.0)
        if self.end is None or self.clock() + seconds <= self.end:
            return None
        return (f"left for a later rerun: its last run took {seconds / 60:.1f} min, more "
                f"than the {max(0.0, self.end - self.clock()) / 60:.1f} min left")


def wall_minutes(metas):
    """Minutes the results of `metas` (sidecars) took when they last ran."""
    return sum(float((meta or {}).get("wall_time_s") or 0.0) for meta in metas) / 60.0


def inputs(meta, results):
    """The results of the folder `results` whose CSVs the config of `meta` lists as inputs."""
    listed = ((meta.get("config") or {}).get("experiment") or {}).get("input_files") or {}
    folder = Path(results).resolve()
    found = []
    for name in listed:
        path = Path(name) if Path(name).is_absolute() else _checkout.REPO_ROOT / name
        if path.resolve().parent == folder and path.suffix == ".csv":
            found.append(path.stem)
    return found


def ordered(names, metas, results):
    """`names`, each after those of them whose CSVs it reads (`inputs`); otherwise sorted."""
    wanted, done, out = set(names), set(), []

    def visit(name, path=()):
        if name in done or name not in wanted:
            return
        if name in path:
            raise RerunError(f"the inputs of {' -> '.join([*path, name])} form a cycle.")
        for upstream in inputs(metas.get(name) or {}, results):
            visit(upstream, (*path, name))
        done.add(name)
        out.append(name)

    for name in sorted(wanted):
        visit(name)
    return out


def run_command(command):
    """Run a recorded `[module, *arguments]` (the module by `python -m`, with the arguments)
    at the repository's root; a RerunError when it exits non-zero."""
    print(f"  $ python -m {' '.join(command)}", flush=True)
    status = subprocess.run([sys.executable, "-m", *command], cwd=_checkout.REPO_ROOT).returncode
    if status != 0:
        raise RerunError(f"`python -m {' '.join(command)}` exited with status {status}.")


def _files(results, name):
    return [Path(results) / f for f in (f"{name}.csv", f"{name}_table.csv",
                                        f"{name}{_executed.SIDECAR_SUFFIX}")]


def set_aside(results, name):
    """Move the result's files into a folder of its name in the results folder's `.rerun`;
    that folder."""
    aside = Path(results) / ASIDE / name
    if aside.exists():
        shutil.rmtree(aside)
    aside.mkdir(parents=True)
    for path in _files(results, name):
        if path.exists():
            path.replace(aside / path.name)
    return aside


def put_back(results, name, aside):
    """Undo `set_aside`: the earlier files replace whatever the failed rerun wrote."""
    for path in _files(results, name):
        path.unlink(missing_ok=True)
    for path in aside.iterdir():
        path.replace(Path(results) / path.name)
    aside.rmdir()


def put_back_killed(results):
    """Put back the files a killed rerun left set aside (a killed process puts nothing
    back); their names."""
    folder = Path(results) / ASIDE
    names = sorted(path.name for path in folder.iterdir() if path.is_dir()) \
        if folder.is_dir() else []
    for name in names:
        put_back(results, name, folder / name)
        print(f"{name}: put back the files a killed rerun had set aside", flush=True)
    return names


def _settings(meta):
    """The config a result was computed with, less its inputs' digests (a rerun upstream
    changes those)."""
    config = json.loads(json.dumps((meta or {}).get("config") or {}))
    (config.get("experiment") or {}).pop("input_files", None)
    return config


def rerun_one(results, name, meta, index, run=None):
    """Rerun one result by its recorded commands (module docstring)."""
    commands = (meta or {}).get("commands")
    if not commands or any(command is None for command in commands):
        why = ("its sidecar records no command" if not commands else
               "part of its rows came from a run whose command nobody recorded")
        raise RerunError(f"{name}: {why}. Run its producer by hand once (docs/developing.md, "
                         "\"Rerunning results\"); its sidecar then records the command.")
    aside = set_aside(results, name)
    try:
        for command in commands:
            (run or run_command)(command)
        new = _io.read_meta(results, name)
        if new is None:
            raise RerunError(f"{name}: the commands wrote no sidecar into {results}.")
        if _settings(new) != _settings(meta):
            raise RerunError(f"{name}: the rerun's config differs from the committed one's; "
                             f"its recorded command does not reproduce it: now "
                             f"{json.dumps(_settings(new))[:300]}, before "
                             f"{json.dumps(_settings(meta))[:300]}")
        verdict = _staleness.other_status(results, name, index)
        if verdict != "current":
            raise RerunError(f"{name}: not current after its rerun: {verdict}")
    except BaseException:
        put_back(results, name, aside)
        raise
    shutil.rmtree(aside)
    return commands


def rerun(results, names=None, *, force=False, index=None, run=None, budget=None,
          keep_going=False):
    """Rerun the stale results of the folder that no experiment declares (or `names`; with
    `force`, even when current), inputs first. 0 when all are current at the end, else 1 (the
    reason printed). `run` runs one recorded command (default `run_command`); `budget` (a
    `Budget`) leaves the results that would end past it for a later rerun; `keep_going` goes
    on after a failure (its files put back), leaving the results that read its CSV."""
    index = index or _executed.Index()
    budget = budget or Budget()
    put_back_killed(results)
    every = _staleness.other_results(results)
    unknown = sorted(set(names or ()) - set(every))
    if unknown:
        print(f"no result with a sidecar named {', '.join(unknown)} in {results}")
        return 1
    metas = {name: _io.read_meta(results, name) for name in every}
    try:
        order = ordered(names or every, metas, results)
    except RerunError as error:
        print(error)
        return 1
    ran, undone = set(), {}
    for name in order:
        meta = _io.read_meta(results, name)
        key = json.dumps((meta or {}).get("commands"))
        verdict = _staleness.other_status(results, name, index)
        if verdict == "current" and not (force and key not in ran):
            print(f"{name}: current", flush=True)
            continue
        waits = [source for source in inputs(meta or {}, results) if source in undone]
        why = (f"waits for its input {', '.join(waits)}" if waits else None) or \
            budget.allows(meta)
        if why is None:
            print(f"{name}: rerunning ({'--force' if verdict == 'current' else verdict})",
                  flush=True)
            try:
                rerun_one(results, name, meta, index, run)
            except RerunError as error:
                if not keep_going:
                    print(f"rerun stopped: {error}")
                    return 1
                why = f"failed: {error}"
        if why is not None:
            undone[name] = why
            print(f"{name}: {why}", flush=True)
            continue
        ran.add(key)
        print(f"{name}: current after its rerun", flush=True)
    for name, why in undone.items():
        print(f"not rerun: {name}: {why}")
    return int(bool(undone))
