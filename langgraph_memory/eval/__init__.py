"""The planted-fact exam: does the memory remember what it was told, and nothing else?

Facts are planted through simulated past conversations (the real graph, nodes,
saver, store and writer, wired as the README shows) or written straight into
the store, then probed in new sessions; the recall block each probe received
is graded offline by a gist matcher (optionally by an LLM judge) into hit,
false-recall, stale-recall, isolation- and privacy-leak rates per probe kind.
``loaders`` reads LoCoMo- and LongMemEval-shaped files the user supplies.

Run it with ``python -m langgraph_memory.eval``; the data format is
``langgraph_memory/eval/data/SCHEMA.md``.

Example:
    >>> from langgraph_memory.eval import MemorySystem, standard_systems
    >>> [s.name for s in standard_systems(["offline", "seeded"])]
    ['offline', 'seeded']
"""

from __future__ import annotations

# ruff: noqa: E402  (the extra is checked before the imports that need it)
from langgraph_memory._extras import require_extra

# The exam runs the real store (the 'longterm' extra); its plots need the 'eval' extra.
require_extra("longterm", feature="the planted-fact exam (langgraph_memory.eval)")

from langgraph_memory.eval.exam import judge_run, run_exam, select_users
from langgraph_memory.eval.grading import gist_matches, grade_lines, judge_probe, normalize
from langgraph_memory.eval.metrics import RunMetrics, Summary, grade_run
from langgraph_memory.eval.report import ExamResults, write_report
from langgraph_memory.eval.runner import BuildContext, MemorySystem, SystemRun, run_system
from langgraph_memory.eval.schema import Exam, ExamUser, load_exam, load_user
from langgraph_memory.eval.systems import load_chat_model, standard_systems

__all__ = [
    "BuildContext",
    "Exam",
    "ExamResults",
    "ExamUser",
    "MemorySystem",
    "RunMetrics",
    "Summary",
    "SystemRun",
    "gist_matches",
    "grade_lines",
    "grade_run",
    "judge_probe",
    "judge_run",
    "load_chat_model",
    "load_exam",
    "load_user",
    "normalize",
    "run_exam",
    "run_system",
    "select_users",
    "standard_systems",
    "write_report",
]
