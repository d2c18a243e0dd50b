"""The checkout's folders: the one place that knows where the repository root is.

The experiments, the cross-check, the benchmarks and the tests run from a checkout and import
these; the installed library cannot (it imports neither), so `kssc.datasets` asks only
whether it runs from a checkout, for its default data folder. Standard library only: the
tests import this without the experiments' extra installed.
"""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = REPO_ROOT / "conf"
