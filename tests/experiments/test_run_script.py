"""`python experiments/run.py` runs in its own process: no re-exec as `python -m`."""

import subprocess
import sys

from experiments._checkout import REPO_ROOT


def test_the_script_composes_without_starting_another_process(tmp_path):
    script = REPO_ROOT / "experiments" / "run.py"
    code = ("import os, runpy, sys\n"
            "def refuse(*args): raise SystemExit('re-exec refused')\n"
            "os.execve = os.execv = refuse\n"
            f"sys.argv = [{str(script)!r}, '--cfg', 'job', 'experiment=complexity']\n"
            f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "name: complexity" in result.stdout
