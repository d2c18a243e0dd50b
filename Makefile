# Reproduction entry points. Every target sets up .venv (in this folder) when it is missing
# or older than pyproject.toml, so `make test` and `make figures` work on a fresh machine
# that has only Python 3 and make.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help venv test test-e2e test-all lint bench heldout data data-verify figures rerun plots report crosscheck docs clean

help:
	@echo "make test      run the default test tier: unit tests, no end-to-end (e2e) or slow runs"
	@echo "make figures   run every experiment whose results are missing or stale, then draw all figures (PROFILE=default|paper|smoke)"
	@echo "make rerun     rerun every stale result, benchmarks and studies too (BUDGET=minutes: what fits)"
	@echo "make plots     redraw every figure from results/*.csv only"
	@echo "make data      download the registered data sets (TIR, Hopkins 155, Extended Yale B, ...) into data/ (checksummed)"
	@echo "make data-verify  check the data folder against the recorded checksums"
	@echo "make bench     print the speed and memory benchmarks"
	@echo "make heldout   the held-out check on Fashion-MNIST (HELDOUT_DIR: its folder, never stored here)"
	@echo "make test-e2e  run the end-to-end tests: experiment smoke runs, the suite, kill tests, benchmarks"
	@echo "make test-all  run every tier: default, e2e and slow (what CI runs, .ci/run)"
	@echo "make lint      check the code with ruff and the layering with import-linter (pyproject.toml)"
	@echo "make crosscheck  compare with the authors' MATLAB code in GNU Octave (skipped without Octave)"

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[experiments,test,bench,docs]'
	$(PY) -m kssc compile
	touch $@

venv: $(STAMP)

LINT_STAMP := $(VENV)/.lint-installed

$(LINT_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[lint]'
	touch $@

lint: $(LINT_STAMP)
	$(VENV)/bin/ruff check .
	PYTHONPATH=. $(VENV)/bin/lint-imports

# The tiers are pytest markers (pyproject.toml): e2e and slow are left out of `make test`.
# The default tier runs on every core (pytest-xdist, TEST_WORKERS=auto): the one file its
# tests share, the execution-record index cache, is written atomically. The e2e and slow tiers
# time and size whole runs, so they run one process at a time.
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m pytest -m "not slow and not e2e" -n $(TEST_WORKERS)

test-e2e: $(STAMP)
	$(PY) -m pytest -m "e2e"

test-all: $(STAMP)
	$(PY) -m pytest

# BENCH_LARGE: points of bench_kssc's second fit, on the scale experiment's data (0: none).
BENCH_LARGE ?= 1000000

bench: $(STAMP)
	$(PY) -m benchmarks.bench_kssc --large $(BENCH_LARGE)
	$(PY) -m benchmarks.bench_coefficients
	$(PY) -m benchmarks.bench_options
	$(PY) -m benchmarks.bench_baselines
	$(PY) -m benchmarks.bench_predict
	$(PY) -m benchmarks.bench_recall_agreement
	$(PY) -m benchmarks.bench_ivf_share
	$(PY) -m benchmarks.bench_path
	$(PY) -m benchmarks.bench_auto
	$(PY) -c "import spams, progressbar" 2>/dev/null || $(PY) -m pip install --quiet -e '.[peers]' || true
	$(PY) -m benchmarks.bench_peers --max-n ensc=5000

# The held-out check (docs/presets.md): Fashion-MNIST's test images from HELDOUT_DIR (default:
# the Debian/Ubuntu package dataset-fashion-mnist's folder); the peer's SSC-OMP beside k-SSC; then
# the fast and exact paths' agreement on all 70,000 images (bench_agreement --data fashion),
# and again with the IVF aiming at recall 0.95 (IVF's default before the own data chose 0.99).
HELDOUT_DIR ?= /usr/share/datasets/fashion-mnist

heldout: $(STAMP)
	$(PY) -c "import spams, progressbar" 2>/dev/null || $(PY) -m pip install --quiet -e '.[peers]' || true
	$(PY) -m benchmarks.bench_heldout --data $(HELDOUT_DIR)
	$(PY) -m benchmarks.bench_agreement --data fashion --heldout-dir $(HELDOUT_DIR) --output results/heldout_agreement.csv
	$(PY) -m benchmarks.bench_agreement --data fashion --heldout-dir $(HELDOUT_DIR) --target-recall 0.95 --output results/heldout_agreement_recall95.csv

data: $(STAMP)
	$(PY) -m kssc.datasets.fetch

data-verify: $(STAMP)
	$(PY) -m kssc.datasets.fetch --verify

# Runs every experiment whose results/<name>.csv is missing or stale (docs/results.md: "When a
# result is current"), then draws every figure from the CSVs and writes results/REPORT.md;
# last, says whether the cross-check is stale (it needs GNU Octave: `make crosscheck`).
# PROFILE=paper runs the full protocol.
PROFILE ?= default

figures: $(STAMP)
	$(PY) -m experiments.suite --profile $(PROFILE)
	-$(PY) -m crosscheck --check

# Every result `python -m experiments.suite --check` calls stale, experiments first, then the
# benchmarks and cross-check studies by the commands their sidecars record, going on past a
# failure; BUDGET=120 starts only what its last run says ends within 120 minutes
# (docs/developing.md, "Rerunning results").
BUDGET ?=

rerun: $(STAMP)
	$(PY) -m experiments.suite --rerun --keep-going $(if $(BUDGET),--budget $(BUDGET))

plots: $(STAMP)
	$(PY) -m experiments.plot

report: $(STAMP)
	$(PY) -m experiments.report

# Side by side with the authors' code (../shared/reference/kssc-matlab or KSSC_REFERENCE_DIR)
# in GNU Octave; writes results/crosscheck.csv and its sidecar (about 5 minutes). Prints why and
# succeeds when either is absent. Real inputs read $KSSC_DATA_DIR. CHECK=1 only says whether the
# committed CSV is current with the solvers (exit 1 when stale; no Octave needed).
crosscheck: $(STAMP)
	$(PY) -m crosscheck $(if $(CHECK),--check)

clean:
	@read -r -p "Remove .venv and Python caches (results/ and figures/ are kept)? [y/N] " answer; \
	if [[ "$$answer" == [yY] ]]; then rm -rf $(VENV) .pytest_cache; find . -name __pycache__ -prune -exec rm -rf {} +; fi

# One site: the user guide, the API reference (Sphinx + numpydoc), the examples gallery and the
# Markdown notes of docs/ (myst-parser), into docs/_build/html. Offline (no intersphinx), warnings are errors; the docs extra is
# installed on first use.
.PHONY: docs
docs: $(STAMP)
	$(PY) -c "import sphinx, numpydoc, pydata_sphinx_theme, myst_parser" 2>/dev/null || $(PY) -m pip install --quiet -e '.[docs]'
	$(PY) -m sphinx -b html -E -W --keep-going -q docs docs/_build/html
	@echo "open docs/_build/html/index.html"

# The user guide's pictures and tables (docs/_static/guide/) from real runs with kssc.plot:
# digits (bundled), Extended Yale B ($KSSC_DATA_DIR) and results/predict_table.csv.
.PHONY: docs-figures
docs-figures: $(STAMP) docs/make_figures.py results/predict_table.csv
	$(PY) docs/make_figures.py
