# Two commands on a fresh machine: `make demo` and `make test`; `make parity` runs the tests
# that compare with PyTorch, in a venv of its own with torch installed (gradtool never needs it).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TORCH_VENV := .venv-torch
TORCH_BIN := $(TORCH_VENV)/bin
TORCH_VERSION ?= 2.13.0

.PHONY: demo test test-slow parity bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[test]'
	$(BIN)/python -m compileall -q gradtool  # the CLI writes no bytecode itself
	touch $@

demo: $(VENV)/.installed
	$(BIN)/gradtool inspect examples/basics.py::weighted_loss
	$(BIN)/gradtool gradcheck examples/basics.py
	$(BIN)/gradtool render examples/basics.py::weighted_loss --show-saved -o demo.svg

# Bytecode writing on for the test runs (PYTHONDONTWRITEBYTECODE empty), even where the machine
# turns it off: pytest keeps the test modules it rewrites for its assert messages in
# __pycache__ only then, else each worker of each run rewrites all of them again (collecting
# the suite: 21 s of CPU, 6 s from the cache; make parity's two workers: 44 s, 22 s). The first
# run writes them; the others read them. The CLI still writes no bytecode for users' files.
WRITE_BYTECODE = PYTHONDONTWRITEBYTECODE=

# -n auto --dist loadfile: one worker a core, each test file on one worker (its module
# fixtures run once)
PYTEST = -m pytest -q -n auto --dist loadfile

test: $(VENV)/.installed
	$(WRITE_BYTECODE) $(BIN)/python $(PYTEST) -m "not slow and not browser"

# every example through every command, each a process of its own, and the pages in a
# browser: minutes; CI runs it too
test-slow: $(VENV)/.installed
	$(WRITE_BYTECODE) $(BIN)/python $(PYTEST) -m "(slow or browser) and not parity"

$(TORCH_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_BIN)/pip install -q --upgrade pip
	$(TORCH_BIN)/pip install -q -e '.[test]' torch==$(TORCH_VERSION)
	touch $@

# the parity files differ widely in length (a few run real files through torch, one process
# each): work stealing keeps both cores busy to the end (5:17 against 5:45 by file)
parity: $(TORCH_VENV)/.installed
	$(WRITE_BYTECODE) $(TORCH_BIN)/python -m pytest -q -n auto --dist worksteal -m parity

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run.py $(ARGS)
	OMP_NUM_THREADS=1 $(BIN)/python benchmarks/reference_bench.py

clean:
	rm -rf $(VENV) $(TORCH_VENV) build *.egg-info
