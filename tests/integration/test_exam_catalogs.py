"""The exam's recall is the same on both catalogs: SQLite FTS5 and Postgres.

A few users of the shipped exam data (the test fixtures when the data is absent)
are replayed through the README wiring twice, once on the embedded catalog and
once on a fresh Postgres database (vectors in an embedded Chroma directory in
both), and every probe's injected memory lines are compared. Seeded runs (true
facts written directly) are compared the same way.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings
from langchain_core.embeddings import Embeddings

from langgraph_memory.eval.exam import run_exam, select_users
from langgraph_memory.eval.runner import BuildContext
from langgraph_memory.eval.schema import DEFAULT_DATA_DIR, load_exam
from langgraph_memory.eval.systems import standard_systems
from langgraph_memory.longterm import ChromaMemoryStore

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(300)]

FIXTURES = Path(__file__).parent.parent / "eval" / "data"


def _data() -> Path:
    return DEFAULT_DATA_DIR if any(DEFAULT_DATA_DIR.glob("*.json")) else FIXTURES


@pytest.mark.parametrize("name", ["offline", "seeded"])
def test_probes_recall_the_same_lines_on_both_catalogs(
    name: str, pg_dsn: str, tmp_path: Path
) -> None:
    def postgres_store(ctx: BuildContext, embeddings: Embeddings) -> Any:
        client = chromadb.PersistentClient(
            path=str(ctx.root / "pg-vectors"), settings=Settings(anonymized_telemetry=False)
        )
        return ChromaMemoryStore(
            client=client, catalog=pg_dsn, embeddings=embeddings, clock=ctx.clock
        )

    exam = select_users(load_exam(_data()), 2, 1)
    (system,) = standard_systems([name])
    runs = {
        "sqlite": run_exam(exam, [system], tmp_path / "sqlite", seed=3),
        "postgres": run_exam(
            exam, [replace(system, store=postgres_store)], tmp_path / "postgres", seed=3
        ),
    }
    lines = {
        catalog: {
            (o.observation.user_id, o.observation.probe_id): o.observation.lines
            for o in results.metrics[0].outcomes
        }
        for catalog, results in runs.items()
    }
    assert lines["postgres"].keys() == lines["sqlite"].keys()
    assert len(lines["sqlite"]) >= 10
    assert sum(bool(v) for v in lines["sqlite"].values()) >= len(lines["sqlite"]) // 2
    # Same top-k within tolerance. BM25 agrees to 1e-9; what may differ is the order
    # of exact ties (same importance and time: the profile and the pinned lines),
    # which each catalog breaks its own way, and once in a while which of the tied
    # memories makes a cut-off.
    differ = [p for p in lines["sqlite"] if set(lines["postgres"][p]) != set(lines["sqlite"][p])]
    assert len(differ) <= len(lines["sqlite"]) // 20, differ
    overall = {c: r.metrics[0].overall for c, r in runs.items()}
    assert overall["postgres"].hit_rate == pytest.approx(overall["sqlite"].hit_rate, abs=0.05)
    assert overall["postgres"].false_recalls <= overall["sqlite"].false_recalls + 1
