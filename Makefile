# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO := examples/loss_scaling.py:main

.PHONY: install demo test bench clean

install: $(VENV)/.installed

# torch is pinned to the CPU build that this machine's package index serves;
# asking pip for plain "torch" would fetch a multi-GB CUDA build instead.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# Finds the bundled example's bug (exit 1 means "a bug was found"), then replays it.
demo: install
	rm -rf .dnsse/demo
	$(BIN)/dnsse check $(DEMO) --out .dnsse/demo; test $$? -eq 1
	$(BIN)/dnsse replay .dnsse/demo/bug-1.json; test $$? -eq 1

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python benchmarks/engine_speed.py

clean:
	rm -rf $(VENV) .dnsse .pytest_cache
