# NeurIPS 2026, Executable — build the book and run every test from a fresh clone.
#   make book   set up .venv, execute every notebook at the default scale (cached), build _build/html
#   make test   set up .venv, then ruff, unit tests (and the committed-checkpoint ones again under a foreign
#               CPU's kernels), notebooks at smoke (in parallel, into the smoke build's cache), smoke book
#               build (renders only), page checks
#   make nbval  the papermill route: scale="smoke" injected after each parameters cell, nbval runs the cells
#   make verify build the book, then fail on any default-scale verdict that differs from the committed one
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
PIP_EXTRA ?=
JOBS ?= 2
STAMP := $(VENV)/.neurips26-installed
SMOKE_OUT := _build/smoke
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PYTHONHASHSEED := 0
# The budgets assume two cores. NumPy's OpenBLAS gets one thread: the book's matrices are small and a
# second BLAS thread mostly spins (several times slower on a busy machine); torch keeps two.
export OMP_NUM_THREADS ?= 2
export MKL_NUM_THREADS ?= 2
export OPENBLAS_NUM_THREADS ?= 1
# Idle OpenMP threads sleep instead of spinning: on a busy machine spinning made torch 30x slower.
export OMP_WAIT_POLICY ?= PASSIVE
# Kernels start from the book's own spec (book/jupyter/kernels/python3): the venv's ipykernel with its
# start-up log at ERROR, so a build does not print ipykernel's "running over TCP without encryption"
# warning for every notebook (the kernels only ever talk to this machine's loopback interface).
export JUPYTER_PATH := $(CURDIR)/book/jupyter

.PHONY: help setup book verify test lint unit foreign-cpu notebooks nbval smoke-book pages twins format-notebooks lab lock clean

help:
	@echo "make book   - build the book at the default scale into _build/html"
	@echo "make test   - lint, unit tests, notebooks at smoke, smoke book build, rendered-page checks"
	@echo "make verify - build the book, then fail on any verdict that differs from the committed one"
	@echo "make nbval  - every notebook at smoke through papermill's parameter injection and nbval (not in test)"
	@echo "make lab    - open the chapters in JupyterLab (installs it into .venv on first use)"
	@echo "make twins  - regenerate the .ipynb twins of the chapter notebooks (for Colab)"
	@echo "make format-notebooks - format the notebooks' code cells to the page width (88 characters)"
	@echo "make clean  - remove build outputs (keeps .venv)"

setup: $(STAMP)

$(STAMP): requirements/lock.txt pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.11 not found (set PYTHON=/path/to/python3.11)"; exit 1; }
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 needed"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(PIP_EXTRA) -r requirements/lock.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# The execution cache (jupyter-cache) is keyed by each notebook's code cells, and the book's extension adds
# to them a fingerprint of the library code the notebook can reach (neurips26_book.library_fingerprint):
# a change to one chapter's package re-executes that chapter's notebooks, a change to a shared module the
# notebooks that import it, and nothing else. Expensive results come from neurips26.cache, keyed by the
# source of the package that computes them.

book: setup
	NEURIPS26_PROGRESS=0 $(BIN)/jupyter-book build . -W -n --keep-going
	@echo
	@echo "The book is built: open file://$(CURDIR)/_build/html/index.html"

# The book always builds and marks a changed verdict; this is the check that fails on one (weekly workflow,
# and before a chapter is called done).
verify: book
	$(PY) -m neurips26_book.verify _build/html/claims.json

lint: setup
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

unit: setup
	$(BIN)/pytest -q -n $(JOBS) --dist loadfile tests/unit tests/test_repository.py

# The tests of committed checkpoints and committed numbers once more with another CPU's kernels: torch's
# element-wise kernels without AVX and MKL's compatible code path change the low bits of every result, as a
# reader's laptop would. A chapter whose checks rely on bit-exact training fails here, not on a reader's.
FOREIGN_CPU := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE
foreign-cpu: setup
	$(FOREIGN_CPU) $(BIN)/pytest -q -n $(JOBS) --dist loadfile -m committed -p no:cacheprovider tests/unit

# Every notebook at smoke, JOBS at a time, into the smoke build's execution cache: neurips26_book.prefill
# builds each notebook of _toc.yml exactly as the book build does (fingerprint cell included), executes the
# ones the cache lacks and stores them as myst-nb would, so smoke-book executes none (the page checks fail if
# it did). Each notebook prints a line as it finishes; a failure names the notebook and the cell, with the
# traceback, and the target fails once every notebook ran.
notebooks: setup
	NEURIPS26_SCALE=smoke NEURIPS26_PROGRESS=0 $(PY) -m neurips26_book.prefill --out $(SMOKE_OUT) --jobs $(JOBS)

# The route readers and teachers use to change a scale: papermill injects scale="smoke" right after each
# notebook's parameters cell (tests/notebooks/prepare.py) and nbval executes the notebooks cell by cell
# under pytest, JOBS at a time. Not part of make test (the smoke build's notebooks are); a repository test
# checks that papermill's injection lands right after every parameters cell.
nbval: setup
	rm -rf _build/nbtest
	$(PY) tests/notebooks/prepare.py --scale smoke --out _build/nbtest
	cd _build/nbtest && ../../$(BIN)/pytest -q -p no:cacheprovider --nbval-lax --nbval-current-env \
		--nbval-cell-timeout=300 -n $(JOBS) --dist loadfile --rootdir . .

# The smoke book only renders: every notebook comes from the cache that notebooks filled (a prerequisite, so
# make smoke-book run alone fills it first).
smoke-book: notebooks
	mkdir -p $(SMOKE_OUT)
	NEURIPS26_SCALE=smoke NEURIPS26_PROGRESS=0 $(BIN)/jupyter-book build . --path-output $(SMOKE_OUT) -W -n --keep-going \
		2>&1 | tee $(SMOKE_OUT)/build.log

pages: setup
	NEURIPS26_HTML_DIR=$(SMOKE_OUT)/_build/html NEURIPS26_SCREENSHOTS_DIR=_build/screenshots \
		NEURIPS26_BUILD_LOG=$(SMOKE_OUT)/build.log \
		$(BIN)/pytest -q -rs tests/pages

test: lint unit foreign-cpu notebooks smoke-book pages
	@echo "make test: all checks passed"

lab: setup
	$(BIN)/jupyter-lab --version >/dev/null 2>&1 || $(PY) -m pip install --quiet -c requirements/lock.txt -r requirements/lab.txt
	$(BIN)/jupyter-lab chapters

twins: setup
	$(PY) tests/notebooks/twins.py --write

# ruff format on the notebooks' code cells, at the width of the rendered code cells (88 characters).
format-notebooks: setup
	$(PY) tests/notebooks/format_code.py --write

lock:
	rm -rf _build/lockenv && $(PYTHON) -m venv _build/lockenv
	_build/lockenv/bin/pip install --quiet $(PIP_EXTRA) "torch==2.13.0" -e ".[book,test]"
	{ head -3 requirements/lock.txt; _build/lockenv/bin/pip freeze --exclude-editable | grep -v '^neurips26' \
		| sed 's/^torch==2.13.0+cpu/torch==2.13.0/'; } > requirements/lock.new && mv requirements/lock.new requirements/lock.txt

clean:
	rm -rf _build
