# Two entry points that work on a fresh Debian machine (see README):
#   make run   - set everything up, open SEAR on the bundled demo project
#   make test  - set everything up, run ruff, the import contracts (lint-imports) and the whole test suite;
#                it leaves no file behind in the working tree (no ruff, import-linter or pytest cache)
# Setup installs the optional Ray extra too (sear[ray]), so the batch's Ray parity test runs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   := assets/demo/demo.prj

.PHONY: run test lint setup system-deps clean

run: setup
	$(BIN)/sear $(DEMO)

test: setup
	$(BIN)/ruff check --no-cache .
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/mypy --cache-dir=/dev/null
	$(BIN)/python -m pytest -p no:cacheprovider $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check --no-cache .
	$(BIN)/lint-imports --no-cache --no-logo

setup: system-deps $(STAMP)

system-deps:
	@bash packaging/install-system-deps.sh

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,ray]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .import_linter_cache
