"""The write pipeline: turns in, durable memories out, off the reply path.

* ``writer.py``: ``MemoryWriter`` - redacts and stamps submitted turns, queues
  them, and runs extract + reconcile on a worker (or inline, ``mode="sync"``);
* ``queue.py``: the durable job queue (``SqliteMemoryQueue`` in the checkpoint
  file, ``PostgresMemoryQueue`` in the checkpoint database): idempotent per
  message, debounced per thread, ordered per user, leased, retried, resumable;
* ``_queue_records.py`` (records, keys, backoff), ``_queue_base.py`` (settings,
  connections, transactions), ``_queue_jobs.py`` (enqueue, claim, finish) and
  ``_queue_admin.py`` (audit, inspection, erasure): the parts ``queue.py`` puts together;
* ``_queue_sql.py``: every statement of the queue, named;
* ``sweep.py``: the scheduled sweep (``MemorySweepPolicy``): expiry and decay applied
  to the store on an interval of memory time, run by the writer's worker.

Candidates and ops travel through the queue as ``CandidateMemory.to_dict()`` /
``MemoryOp.to_dict()`` (``langgraph_memory.types``).
"""

from langgraph_memory.pipeline.queue import (
    AuditEntry,
    Job,
    JobInfo,
    MemoryQueue,
    PostgresMemoryQueue,
    SqliteMemoryQueue,
)
from langgraph_memory.pipeline.sweep import MemorySweepPolicy, MemorySweepReport, Sweeper
from langgraph_memory.pipeline.writer import MemoryWriter, WriteReceipt

__all__ = [
    "AuditEntry",
    "Job",
    "JobInfo",
    "MemoryQueue",
    "MemorySweepPolicy",
    "MemorySweepReport",
    "MemoryWriter",
    "PostgresMemoryQueue",
    "SqliteMemoryQueue",
    "Sweeper",
    "WriteReceipt",
]
