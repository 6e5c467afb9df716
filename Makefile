# judge: two commands matter: `make judge` (the main job on the sample set) and `make test`.
# `make setup` is idempotent: it reinstalls only when pyproject.toml changed.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-done
CONFIG ?= judge.toml

# llama.cpp must be built without Intel AMX here: the default native build enables it and the
# first matrix multiply crashes the process (the VM does not grant AMX). A non-native build is
# also portable: a wheel built on one machine runs on another. See docs/configuration.md.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_BF16=OFF

.PHONY: setup judge nightly test test-fast check fmt bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install --quiet -e ".[embedded,dev,ray]"
	touch $(STAMP)

judge: setup
	$(VENV)/bin/judge --config $(CONFIG) run

# The unattended batch: exits 0 clean, 1 regression (or no baseline), 2 bad input, 3 no judge.
nightly: setup
	@$(VENV)/bin/judge --config $(CONFIG) nightly

test: setup
	$(PY) -m pytest

test-fast: setup
	$(PY) -m pytest -m "not slow"

check: setup
	$(VENV)/bin/ruff format --check judge tests bench examples
	$(VENV)/bin/ruff check judge tests bench examples
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache --no-logo .importlinter

fmt: setup
	$(VENV)/bin/ruff format judge tests bench examples
	$(VENV)/bin/ruff check --fix judge tests bench examples

bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) .judge-cache .pytest_cache .mypy_cache .ruff_cache
