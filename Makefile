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

.PHONY: help venv test test-all bench data data-verify figures clean

help:
	@echo "make test      run the default test suite (about 5 minutes)"
	@echo "make figures   run every experiment whose results are missing or stale, then draw all figures"
	@echo "make data      download the TIR, Hopkins 155 and Extended Yale B data into data/ (checksummed)"
	@echo "make data-verify  check the data folder against the recorded checksums"
	@echo "make bench     print the speed and memory benchmarks"
	@echo "make test-all  also run the tests marked slow"

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

venv: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -m "not slow"

test-all: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/bench_kssc.py
	$(PY) benchmarks/bench_baselines.py

data: $(STAMP)
	$(PY) -m kssc.datasets.fetch

data-verify: $(STAMP)
	$(PY) -m kssc.datasets.fetch --verify

figures: $(STAMP)
	@echo "make figures: the experiment suite is not wired yet (see the experiment-suite issue)." >&2
	@exit 1

clean:
	@read -r -p "Remove .venv and Python caches (results/ and figures/ are kept)? [y/N] " answer; \
	if [[ "$$answer" == [yY] ]]; then rm -rf $(VENV) .pytest_cache; find . -name __pycache__ -prune -exec rm -rf {} +; fi
