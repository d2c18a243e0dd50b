"""Regenerate the paper's results and the measurements beyond it (what `make figures` runs).

Runs every experiment whose results are missing or stale, then draws every figure from the
CSVs and writes results/REPORT.md (and, when it wrote the committed results/, README's result
tables: experiments/readme.py). Whether a result is current is decided by `_staleness`: its
sidecar must vouch for the CSV's bytes and carry the config this suite would run, nothing
the result executed (its functions, compiled kernels, module constants, data checksum lists,
package versions: the sidecar's `executed`) may have changed, its rows must form its
config's grid and its summary table must be what its rows give. So a fresh clone with the
committed results redraws the figures without recomputing; a comment, a reformat or a
change of code a result never ran costs no rerun. A table that is not what its rows give is
rewritten from the rows (no trial rerun). Results that are current for profile=paper count
as current when profile=default is asked for (COVERED_BY), so `make figures` never replaces
the committed paper-protocol results by fewer trials.

The experiments run are those of conf/experiment/ except the ones whose config says
`feeds.in_suite: false` (long benchmarks run on request with --only). `--check` covers every
result in the results folder: those, the others (at their recorded profile), and every other
CSV with a sidecar (benchmarks, cross-check studies); it prints "current" or the reason per
result and exits 1 when any is not current. `--adopt` gives the committed results written
before sidecars kept an execution record one, where that is sound (`_adopt`), and lists
the ones that must be rerun.

`--rerun [NAME ...]` reruns every stale result, the benchmarks' and cross-check studies' too:
those by the commands their sidecars record (`_rerun`), each after the results it reads.

Usage: python -m experiments.suite [--profile default] [--only NAME ...]
       [--force | --check | --adopt | --rerun [NAME ...]]
"""

import argparse
import sys
import time
from pathlib import Path

from experiments import (
    _adopt,
    _config,
    _executed,
    _io,
    _rerun,
    _runner,
    _staleness,
    plot,
    readme,
    report,
    summarise,
)
from experiments._staleness import compose_config
from experiments.publish import feeds
from kssc.datasets import DataNotFoundError

in_suite = feeds.in_suite


def main(argv=None):
    names = _config.experiment_names()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default", choices=("smoke", "default", "paper"))
    parser.add_argument("--only", nargs="+", choices=names)
    parser.add_argument("--force", action="store_true", help="rerun even if current")
    parser.add_argument("--check", action="store_true",
                        help="only say which results are current (exit 1 if any is not)")
    parser.add_argument("--adopt", action="store_true",
                        help="give committed results without an execution record one, "
                             "where sound; list the stale ones")
    parser.add_argument("--rerun", nargs="*", metavar="NAME",
                        help="rerun every stale result, benchmarks and cross-check studies "
                             "too (by the commands their sidecars record), or the named ones")
    parser.add_argument("--budget", type=float, metavar="MINUTES",
                        help="with --rerun: start only the results whose last run ends within "
                             "these minutes (the rest is left for a later rerun)")
    parser.add_argument("--keep-going", action="store_true",
                        help="with --rerun: go on after a failure (its files put back)")
    parser.add_argument("--results", default="results")
    parser.add_argument("--figures", default="figures")
    parser.add_argument("--no-draw", action="store_true",
                        help="compute only: no figures, REPORT.md or README tables (a later "
                             "run draws them)")
    args = parser.parse_args(argv)
    results = Path(args.results)
    if args.check:
        return check(results, args.profile, args.only)
    if args.adopt:
        return adopt(results, args.only)
    if args.rerun is not None:
        return rerun(results, args, names)
    run_experiments(results, args.only or [name for name in names if in_suite(name)],
                    args.profile, args.force)
    return draw(results, args)


def draw(results, args):
    """The figures, REPORT.md and (for the committed results) README's tables; 0."""
    if args.no_draw:
        return 0
    plot.main(["--results", str(results), "--figures", args.figures])
    report.main(["--results", str(results)])
    if results.resolve() == readme.RESULTS_DIR:  # the committed results: README's tables follow
        readme.main([])
    return 0


def run_experiments(results, names, profile, force, budget=None, keep_going=False,
                    index=None):
    """Run each experiment of `names` whose results are missing or stale (every one with
    `force`); a table its current rows do not give is rewritten from them. {name: why} of
    those left undone: `budget` (`_rerun.Budget`) leaves an experiment whose last run would
    end past it; with `keep_going` a failed run is reported and the next one runs."""
    index, undone = index or _executed.Index(), {}
    for name in names:
        cfg = _config.check_config(compose_config(name, profile, [f"results_dir={results}"]))
        done, verdict = (None, "--force") if force else _staleness.current_profile(
            results, name, profile, index)
        if done is not None:
            stamp = _io.read_meta(results, name)["fingerprint"]
            if verdict == _staleness.RESUMMARISE:
                summarise.resummarise(results, name)
                print(f"{name}: summary table rewritten from the committed rows (it was not "
                      f"what they give; the trials are current)")
            print(f"{name}: results current (profile={done}, {stamp}), not recomputed")
            continue
        why = (budget or _rerun.Budget()).allows(_io.read_meta(results, name))
        if why is not None:
            undone[name] = why
            print(f"{name}: {why}", flush=True)
            continue
        print(f"{name}: running (profile={profile}; {verdict})", flush=True)
        try:
            _runner.run_experiment(cfg, _runner.load(name), committed=True)
        except Exception as error:
            if not keep_going:
                raise
            undone[name] = f"failed: {type(error).__name__}: {error}"
            print(f"{name}: {undone[name]}", flush=True)
    return undone


def rerun(results, args, names):
    """`--rerun [NAME ...]`: every stale result of the folder, the experiments first (those
    of the suite and the others that have results there), then the benchmarks' and studies'
    by their recorded commands (`_rerun`), inputs before the results that read them; or the
    named ones (with --force even when current). An experiment reruns at the profile its
    results were computed at. `--budget MINUTES` starts only what its last run says ends
    within them, `--keep-going` goes on after a failure. Then draws (unless --no-draw); 1
    when anything was left undone."""
    named, budget = args.rerun, _rerun.Budget(args.budget)
    experiments = [name for name in named if name in names] if named else [
        name for name in names if in_suite(name) or _io.read_meta(results, name) is not None]
    others = [name for name in named if name not in names]
    undone, index = {}, _executed.Index()  # one parse of the project for the whole rerun
    for name in experiments:  # a rerun keeps the profile a result was computed at
        meta = _io.read_meta(results, name) or {}
        ran = ((meta.get("config") or {}).get("profile") or {}).get("name")
        undone.update(run_experiments(results, [name], ran or args.profile, args.force,
                                      budget, args.keep_going, index))
    status = 0
    if others or not named:
        status = _rerun.rerun(results, others or None, force=args.force, index=index,
                              budget=budget, keep_going=args.keep_going)
    for name, why in undone.items():
        print(f"not rerun: {name}: {why}")
    draw(results, args)  # what finished is drawn; what did not is as it was
    return int(bool(status or undone))


def check(results, profile, only=None):
    """Print every result's verdict; 1 when any is not current."""
    index, stale = _executed.Index(), []
    for name in only or _config.experiment_names():
        meta = _io.read_meta(results, name)
        if in_suite(name):
            done, verdict = _staleness.current_profile(results, name, profile, index)
        elif meta is None:
            continue  # a long benchmark not run into this folder
        else:
            done = meta["config"].get("profile", {}).get("name")
            verdict = _staleness.status(results, name, compose_config(
                name, done, [f"results_dir={results}"]), index)
            done = done if verdict == "current" else None
        if verdict != "current":
            done = None
        print(f"{name}: {verdict}" + (f" (profile={done})" if done else ""), flush=True)
        if done is None:
            stale.append(name)
    for name in [] if only else _staleness.other_results(results):
        verdict = _staleness.other_status(results, name, index)
        print(f"{name}: {verdict}", flush=True)
        if verdict != "current":
            stale.append(name)
    if stale:
        minutes = _rerun.wall_minutes(_io.read_meta(results, name) for name in stale)
        print(f"{len(stale)} not current; their last runs took {minutes:.0f} min in all "
              "(python -m experiments.suite --rerun)")
    return int(bool(stale))


def adopt(results, only=None):
    """Give each result without an execution record one where sound (`_adopt.adopt`), and
    each adopted result's table the record of the summary that recomputes it."""
    stale = []
    names = set(_config.experiment_names())
    for name in only or [p.stem.removesuffix(".meta") for p in sorted(
            Path(results).glob("*.meta.json"))]:
        meta = _io.read_meta(results, name)
        summarised = name in names and _runner.load(name).summary is not None
        if meta is None or meta.get("executed") and (
                meta.get("summary_executed") or not summarised):
            continue
        start = time.perf_counter()
        if meta.get("executed"):
            record, reasons = meta["executed"], []
        elif name not in names:
            record, reasons = None, ["not an experiment: its producer cannot be traced here, "
                                     "and its sidecar records no code digest to verify (rerun "
                                     "it)"]
        else:
            record, reasons = _adopt.adopt(results, name)
        summary = None
        if record is not None and summarised:
            with _executed.tracing() as trace:
                same = _staleness.table_matches(results, name, meta)
            record, reasons = (record, []) if same else (None, [_staleness.RESUMMARISE])
            summary = _executed.record(trace)
        seconds = time.perf_counter() - start
        if record is not None:
            _staleness.write_record(results, name, record, summary=summary)
            print(f"{name}: adopted ({seconds:.0f} s)", flush=True)
        else:
            stale.append(name)
            more = f"; and {len(reasons) - 5} more" if len(reasons) > 5 else ""
            print(f"{name}: STALE ({seconds:.0f} s): {'; '.join(reasons[:5])}{more}",
                  flush=True)
    print(f"stale: {', '.join(stale) or 'none'}")
    return int(bool(stale))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except DataNotFoundError as error:  # the message says how to fix it: no traceback
        sys.exit(f"experiments.suite: error: {error}")
