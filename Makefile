PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test serve lint docs bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m accel_audit.demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

serve: $(STAMP)
	$(BIN)/accel-audit serve

lint: $(STAMP)
	$(BIN)/ruff check .

docs: $(STAMP)
	$(BIN)/python -m checks.docs > docs/checks.md

bench: $(STAMP)
	$(BIN)/python benchmarks/scan_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
