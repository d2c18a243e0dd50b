"""Fill the marked tables of README.md and docs/ from the committed results CSVs.

Each block `<!-- table: NAME -->` ... `<!-- /table -->` of a document in `DOCUMENTS` is the
table NAME declared under `feeds.tables` of an experiment's config (or in
experiments/publish/tables.yaml), built and rendered by `experiments.publish`. Not part of
any experiment's fingerprint: it only reads the results. The suite calls it at the end when
it wrote the committed results/.

Usage: python -m experiments.readme [--check] [--results DIR] [--readme FILE]
(without --readme: every file of `DOCUMENTS`)
(--check writes nothing and exits 1 naming the stale blocks and those it cannot render)
"""

import argparse
import sys

from ._checkout import REPO_ROOT
from .publish import markdown

DOCUMENTS = (REPO_ROOT / "README.md", REPO_ROOT / "docs" / "reproduction.md",
             REPO_ROOT / "docs" / "scaling.md", REPO_ROOT / "docs" / "presets.md")
RESULTS_DIR = REPO_ROOT / "results"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a block is stale or cannot be rendered")
    parser.add_argument("--results", default=str(RESULTS_DIR))
    parser.add_argument("--readme", help="the one file to fill (default: all of DOCUMENTS)")
    args = parser.parse_args(argv)
    stale, errors = [], {}
    for document in [args.readme] if args.readme else DOCUMENTS:
        found, failed = markdown.update(document, args.results, check=args.check)
        stale += found
        errors.update(failed)
    for name, error in errors.items():
        print(f"readme: block {name!r} not rendered: {error}", file=sys.stderr)
    if args.check:
        for name in stale:
            print(f"readme: block {name!r} is stale (python -m experiments.readme)",
                  file=sys.stderr)
        return 1 if stale or errors else 0
    print(f"readme: {len(stale)} block(s) updated" + (f": {', '.join(stale)}" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
