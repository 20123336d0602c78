# Entry points that work on a fresh Debian machine (see README):
#   make run        - set everything up, open SEAR on the bundled demo project
#   make test       - set everything up; ruff, the import contracts (lint-imports), mypy and the default tier
#                     of the test suite (pyproject.toml's -m "not slow", spread over the cores with pytest-xdist; mypy
#                     runs beside it). It prints the 15 slowest tests and fails if any of the four fails;
#                     its last line is pytest's summary again (mypy's report comes after the tests).
#   make test-slow  - the long variants (marker `slow`: every case of the fuzz and kill tests, the Ray
#                     parity test), with the optional Ray extra installed first
# Neither leaves a file behind in the working tree (no ruff, import-linter, mypy or pytest cache).
SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
RAY_STAMP := $(VENV)/.ray-stamp
DEMO   := assets/demo/demo.prj
# Compiled bytecode goes to one folder inside the venv (not beside the sources, so no __pycache__ appears in
# the working tree), written even where PYTHONDONTWRITEBYTECODE is set: without it every process a test
# starts compiled SEAR and its dependencies anew. --no-compile: pip then does not compile every file of every
# dependency at install time (a third of its CPU time); what is imported is compiled once, on first import.
export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
export PYTHONDONTWRITEBYTECODE :=
PIP    := $(BIN)/python -m pip install --quiet --no-compile
# Installs into the venv with uv (a pip-compatible installer from PyPI: it resolves the same versions as pip,
# checked by comparing `pip freeze` of two fresh venvs, and installs them in ~7 s where pip takes ~40 s, most
# of make test's set-up on a fresh clone); pip does it where uv cannot be installed or fails.
INSTALL = { $(PIP) uv && $(BIN)/uv pip install --quiet --python $(BIN)/python $(1); } || $(PIP) $(1)
# --dist loadscope: each test module runs on one worker, so its module-scoped fixtures (a batch, a wheel, a
# reference run) are built once. (xdist_group with --dist loadgroup does not group with pytest 9.2 and
# xdist 3.8: xdist renames nodes through an attribute pytest 9.2 no longer reads.)
PYTEST := $(BIN)/python -m pytest -p no:cacheprovider -n auto --dist loadscope

.PHONY: run test test-slow lint setup system-deps clean

run: setup
	$(BIN)/sear $(DEMO)

test: setup
	$(BIN)/ruff check --no-cache .
	$(BIN)/lint-imports --no-cache --no-logo
	@mypy_out=$$(mktemp); tests_out=$$(mktemp); \
	$(BIN)/mypy --cache-dir=/dev/null >"$$mypy_out" 2>&1 & mypy=$$!; \
	echo "$(PYTEST) --durations=15 $(PYTEST_ARGS)   (mypy beside it)"; \
	$(PYTEST) --durations=15 $(PYTEST_ARGS) | tee "$$tests_out"; tests=$${PIPESTATUS[0]}; \
	wait $$mypy; typed=$$?; \
	echo "$(BIN)/mypy --cache-dir=/dev/null"; cat "$$mypy_out"; \
	tail -n 1 "$$tests_out"; \
	rm -f "$$mypy_out" "$$tests_out"; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

test-slow: setup $(RAY_STAMP)
	$(PYTEST) -m slow --durations=15 $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check --no-cache .
	$(BIN)/lint-imports --no-cache --no-logo

# The tyre kernels compiled ahead of time (sear/physics/tyreaot.py: runs then use compiled tyres from their
# first step without loading numba); ~5-10 s of CPU once, a moment when built already. Optional: where it
# cannot be built (no C compiler), runs load numba's just-in-time kernels instead.
setup: system-deps $(STAMP)
	-@$(BIN)/python -m sear.physics.tyrebuild

system-deps:
	@bash packaging/install-system-deps.sh

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call INSTALL,$(WITH_TEST))
	touch $(STAMP)

# The extras, in variables: a comma written in $(call ...)'s argument would split it. The Ray extra (~20 s of
# CPU time to install) only for the tier that runs its test.
WITH_TEST := -e '.[test,tools]'
WITH_RAY := -e '.[test,tools,ray]'
$(RAY_STAMP): $(STAMP)
	$(call INSTALL,$(WITH_RAY))
	touch $(RAY_STAMP)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .import_linter_cache
