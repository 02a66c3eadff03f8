# Everything runs inside .venv, built from this repo's own files.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint typecheck bench bench-session bench-floor bench-longterm bench-nodes bench-privacy bench-exam clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[all,dev]'
	touch $(STAMP)

## The offline demo on the embedded defaults (SQLite + embedded Chroma); uses OpenAI only if OPENAI_API_KEY is set.
demo: $(STAMP)
	$(BIN)/python -m graphs.demo

## The whole test suite (unit + integration against real SQLite, Postgres and Chroma).
test: $(STAMP)
	$(BIN)/python -m pytest -q

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check langgraph_memory tests graphs benchmarks
	$(BIN)/ruff format --check langgraph_memory

typecheck: $(STAMP)
	$(BIN)/mypy

bench: bench-session bench-floor bench-longterm bench-nodes bench-privacy bench-exam

bench-session: $(STAMP)
	$(BIN)/python -m benchmarks.session

bench-floor: $(STAMP)
	$(BIN)/python -m benchmarks.session_floor

bench-longterm: $(STAMP)
	$(BIN)/python -m benchmarks.longterm

bench-nodes: $(STAMP)
	$(BIN)/python -m benchmarks.nodes

bench-privacy: $(STAMP)
	$(BIN)/python -m benchmarks.privacy

## The planted-fact exam (all users, offline / offline-minilm / seeded): benchmarks/RESULTS-exam.md + PNGs.
bench-exam: $(STAMP)
	$(BIN)/python -m benchmarks.exam

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
