# Everything runs inside .venv, built from this repo's own files.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow test-all lint typecheck bench bench-session bench-floor bench-longterm bench-nodes bench-privacy bench-exam clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[all,dev]'
	touch $(STAMP)

## The offline demo on the embedded defaults (SQLite + embedded Chroma); uses OpenAI only if OPENAI_API_KEY is set.
demo: $(STAMP)
	$(BIN)/python -m graphs.demo

## The test suite CI runs (unit + integration against real SQLite, Postgres and Chroma);
## the soak runs (`slow`: 60 s multi-process writers, 10 SIGKILLs...) each have a short
## variant in it.
test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

## Only the soak runs (several minutes).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

## Everything: test + test-slow.
test-all: $(STAMP)
	$(BIN)/python -m pytest -q

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
