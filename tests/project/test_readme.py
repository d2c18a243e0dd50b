"""README is a front page: its example runs on bundled data and prints the accuracy of the
committed digits run; it names every preset and links to the user guide and the
reproduction page, which hold the generated tables (tests/experiments/test_publish.py)."""

import re

import pandas as pd
import pytest

from experiments._checkout import REPO_ROOT
from kssc.presets import PRESETS

README = (REPO_ROOT / "README.md").read_text()


def example():
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
    return next(block for block in blocks if "load_digits" in block)


def test_example_is_at_most_ten_lines_and_reaches_the_committed_accuracy(capsys):
    code = example()
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    printed = re.search(r"accuracy (\d+\.\d) %", capsys.readouterr().out)
    assert printed, "the README example prints no 'accuracy NN.N %'"
    table = pd.read_csv(REPO_ROOT / "results" / "digits_table.csv").set_index("method")
    # printed to one decimal: within half a unit of the committed k-SSC mean
    assert float(printed[1]) == pytest.approx(table.loc["kssc", "accuracy_pct_mean"], abs=0.05)


def test_front_page_names_every_preset_and_links_guide_and_reproduction():
    presets = re.search(r"\| preset \|.*?\n\n", README, flags=re.DOTALL).group(0)
    assert sorted(re.findall(r"^\| `(\w+)`", presets, flags=re.MULTILINE)) == sorted(PRESETS)
    for target in ("docs/index.rst", "docs/reproduction.md"):
        assert f"]({target})" in README and (REPO_ROOT / target).exists()
    assert README.count("```bash\npip install") == 1


def test_reproduction_tables_live_on_the_reproduction_page():
    page = (REPO_ROOT / "docs" / "reproduction.md").read_text()
    for name in ("provenance", "yale", "hopkins155", "peers", "bench_kssc", "scale"):
        assert f"<!-- table: {name} -->" in page and f"<!-- table: {name} -->" not in README
