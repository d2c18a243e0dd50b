"""Regenerate the paper's results and the measurements beyond it (what `make figures` runs).

Runs every experiment whose results are missing or stale, then draws every figure from the
CSVs and writes results/REPORT.md (and, when it wrote the committed results/, README's result
tables: experiments/readme.py). Whether a result is current is decided by `_currency`: its
sidecar must vouch for the CSV's bytes and carry the config this suite would run, and the
code must either be the code that wrote it or still compute the same numbers on the
experiment's probe (its smoke profile). So a fresh clone with the committed results redraws
the figures without recomputing; a refactor that changes no number costs no rerun; a
config change, a change of numbers, or results written by a run with another config (a
smoke run, an override) are recomputed. The full protocol covers the default one: results
that are current for profile=paper count as current when profile=default is asked for
(COVERED_BY), so `make figures` never replaces the committed paper-protocol results by fewer
trials. After a run the suite records the probe of the code that wrote the results in
their sidecar.

The experiments run are those of conf/experiment/ except the ones whose config says
`feeds.in_suite: false` (long benchmarks run on request with --only).

Usage: python -m experiments.suite [--profile default] [--only NAME ...] [--force | --check]
"""

import argparse
import sys
from pathlib import Path

from experiments import _config, _currency, _io, _runner, plot, readme, report, summarise
from experiments._currency import compose_config
from experiments.publish import feeds
from kssc.datasets import DataNotFoundError

in_suite = feeds.in_suite


def main(argv=None):
    names = _config.experiment_names()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default", choices=("smoke", "default", "paper"))
    parser.add_argument("--only", nargs="+", choices=names,
                        default=[name for name in names if in_suite(name)])
    parser.add_argument("--force", action="store_true", help="rerun even if current")
    parser.add_argument("--check", action="store_true",
                        help="only say which results are current (exit 1 if any is not)")
    parser.add_argument("--results", default="results")
    parser.add_argument("--figures", default="figures")
    args = parser.parse_args(argv)

    results = Path(args.results)
    stale = False
    for name in args.only:
        cfg = _config.check_config(compose_config(name, args.profile, [f"results_dir={results}"]))
        done, verdict = (None, "--force") if args.force else _currency.current_profile(
            results, name, args.profile)
        if args.check:
            print(f"{name}: {verdict}" + (f" (profile={done})" if done else ""), flush=True)
            stale = stale or done is None
            continue
        if done is not None:
            stamp = _io.read_meta(results, name)["fingerprint"]
            if verdict == "resummarise":
                summarise.resummarise(results, name)
                _currency.record_probe(results, name)
                print(f"{name}: summary table rewritten from the committed rows (the summary "
                      f"code changed, the numbers of the trials did not)")
            print(f"{name}: results current (profile={done}, {stamp}), not recomputed")
            continue
        print(f"{name}: running (profile={args.profile}; {verdict})", flush=True)
        _runner.run_experiment(cfg, _runner.load(name))
        _currency.record_probe(results, name)
    if args.check:
        return int(stale)
    plot.main(["--results", str(results), "--figures", args.figures])
    report.main(["--results", str(results)])
    if results.resolve() == readme.RESULTS_DIR:  # the committed results: README's tables follow
        readme.main([])


if __name__ == "__main__":
    try:
        sys.exit(main())
    except DataNotFoundError as error:  # the message says how to fix it: no traceback
        sys.exit(f"experiments.suite: error: {error}")
