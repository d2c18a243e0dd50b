"""`python -m experiments.summarise [--results results] [NAME ...]`: rewrite summary tables.

Recomputes `<name>_table.csv` from the trial rows already in `<name>.csv` with the summary
the experiment declares today and the experiment config recorded in its sidecar: a new
summary column (e.g. a bootstrap interval) reaches committed results without rerunning a
single trial. The sidecar then vouches for the new table and records what computing it
executed (`summary_executed`); its fingerprint and the trials' record stay as the run left
them. Without names, every experiment with a CSV, a sidecar and a declared summary.
"""

import argparse
import sys
from pathlib import Path

from . import _executed, _io
from ._config import experiment_names
from ._runner import load


def resummarise(results_dir, name):
    """Rewrite results_dir/<name>_table.csv from <name>.csv; False when there is nothing to do."""
    results = Path(results_dir)
    frame, meta = _io.read_results(results, name), _io.read_meta(results, name)
    declared = load(name)
    if frame is None or meta is None or declared.summary is None:
        return False
    with _executed.tracing() as trace:
        table = declared.summary(frame, meta["config"]["experiment"])
    _io.write_csv(table, results / f"{name}_table.csv")
    meta["summary_executed"] = _executed.record(trace)
    meta["files"] = _io.bound_files(results, name)
    _io.write_json(meta, results / f"{name}.meta.json")
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    for name in args.names or experiment_names():
        if resummarise(args.results, name):
            print(f"wrote {Path(args.results) / f'{name}_table.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
