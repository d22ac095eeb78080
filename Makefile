# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench clean

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

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run.py $(ARGS)
	OMP_NUM_THREADS=1 $(BIN)/python benchmarks/reference_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
