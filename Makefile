# Two entry points that work on a fresh Debian machine (see README):
#   make run   - set everything up, open SEAR on the bundled demo project
#   make test  - set everything up, run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   := assets/demo/demo.prj

.PHONY: run test lint setup system-deps clean

run: setup
	$(BIN)/sear $(DEMO)

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .

DEMO_MODELS := assets/demo/terrain.obj

setup: system-deps $(STAMP) $(DEMO_MODELS)

# The demo's meshes are made by a script of ours, not stored in the repository.
$(DEMO_MODELS): sear/demo.py $(STAMP)
	$(BIN)/python -m sear.demo assets/demo

system-deps:
	@bash packaging/install-system-deps.sh

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
