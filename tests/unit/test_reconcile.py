"""Reconcile: deterministic same-key updates, one guarded model judgement, offline rules."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes.reconcile import (
    CandidateContext,
    ReconcilePrompts,
    Reconciler,
    op_from_dict,
    op_to_dict,
    plan_ops,
    result_id_for,
    text_similarity,
)
from langgraph_memory.types import (
    CandidateMemory,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)
from tests.unit.test_extract_fakes import FileMemoryStore, ScriptedChatModel, decisions_json

U = "user-1"


def cand(text: str, key: str | None = None, **kw: object) -> CandidateMemory:
    return CandidateMemory(text=text, key=key, origin_message_ids=("h1",), **kw)  # type: ignore[arg-type]


def stored(
    store: FileMemoryStore, text: str, key: str | None = None, user: str = U, **kw: object
) -> MemoryRecord:
    return store.put_memory(MemoryRecord(text=text, key=key, user_id=user, **kw))  # type: ignore[arg-type]


def no_model() -> ScriptedChatModel:
    return ScriptedChatModel(replies=[])  # any call fails the test


# --- deterministic rules ---------------------------------------------------------


def test_same_key_supersedes_without_a_model_call() -> None:
    store = FileMemoryStore()
    old = stored(store, "User's budget is 3000", "budget")
    model = no_model()
    ops = Reconciler(store, model=model).reconcile(U, [cand("User's budget is 5000", "budget")])
    assert [(op.action, op.target_ids) for op in ops] == [("supersede", (old.id,))]
    assert model.calls == []
    active = store.active(U)
    assert [r.text for r in active] == ["User's budget is 5000"]
    assert active[0].supersedes == (old.id,)
    history = store.get_memory(U, old.id)
    assert history is not None and history.status is MemoryStatus.SUPERSEDED
    assert history.valid_to is not None and history.superseded_by == active[0].id


def test_same_key_same_value_is_ignored() -> None:
    store = FileMemoryStore()
    old = stored(store, "User's budget is 3000", "budget")
    ops = Reconciler(store).reconcile(U, [cand("user's budget is 3000.", "budget")])
    assert [(op.action, op.target_ids) for op in ops] == [("ignore", (old.id,))]
    assert len(store.records) == 1


def test_later_value_in_the_same_batch_wins() -> None:
    store = FileMemoryStore()
    ops = Reconciler(store).reconcile(
        U,
        [cand("User's budget is 3000", "budget"), cand("User's budget is 5000", "budget")],
        seed="s",
    )
    assert [op.action for op in ops] == ["add", "supersede"]
    assert ops[1].target_ids == (result_id_for("s", 0),)
    assert [r.text for r in store.active(U)] == ["User's budget is 5000"]
    old = store.get_memory(U, result_id_for("s", 0))
    assert old is not None and old.status is MemoryStatus.SUPERSEDED and old.valid_to is not None


def test_agent_inferred_never_supersedes_user_stated_on_the_same_key() -> None:
    store = FileMemoryStore()
    old = stored(store, "User is vegan", "diet")
    ops = Reconciler(store).reconcile(
        U, [cand("User eats fish", "diet", source=MemorySource.AGENT_INFERRED)]
    )
    assert ops[0].action == "ignore" and "agent_inferred" in ops[0].reason
    assert [r.id for r in store.active(U)] == [old.id]


def test_user_stated_supersedes_agent_inferred() -> None:
    store = FileMemoryStore()
    stored(store, "User eats fish", "diet", source=MemorySource.AGENT_INFERRED)
    Reconciler(store).reconcile(U, [cand("User is vegan", "diet")])
    assert [(r.text, r.source) for r in store.active(U)] == [
        ("User is vegan", MemorySource.USER_STATED)
    ]


def test_user_statement_upgrades_the_same_inferred_value() -> None:
    store = FileMemoryStore()
    guess = stored(store, "User is vegan", "diet", source=MemorySource.AGENT_INFERRED)
    ops = Reconciler(store).reconcile(U, [cand("User is vegan", "diet")])
    assert ops[0].action == "supersede" and ops[0].target_ids == (guess.id,)
    (active,) = store.active(U)
    assert active.source is MemorySource.USER_STATED


def test_forget_by_key_deletes_every_version_and_sub_slots() -> None:
    store = FileMemoryStore()
    other = stored(store, "User's address is 1 Main St", "address", user="someone-else")
    stored(store, "User's address is 1 Main St", "address")
    Reconciler(store).reconcile(U, [cand("User's address is 9 Elm St", "address")])
    stored(store, "User lives in Berlin", "address.city")
    keep = stored(store, "User is vegan", "diet")
    assert len(store.list_memories(U, include_history=True)) == 4
    ops = Reconciler(store, model=no_model()).reconcile(
        U, [cand("User asked to forget: user's address", "address", forget=True)]
    )
    assert ops[0].action == "delete" and len(ops[0].target_ids) == 3
    assert [r.id for r in store.list_memories(U, include_history=True)] == [keep.id]
    assert store.get_memory("someone-else", other.id) is not None


def test_forget_without_key_offline_deletes_close_matches_only() -> None:
    store = FileMemoryStore()
    band = stored(store, "User's favourite band is Muse")
    keep = stored(store, "User is allergic to peanuts", "allergy.peanuts")
    ops = Reconciler(store).reconcile(
        U, [cand("User asked to forget: user's favourite band is Muse", forget=True)]
    )
    assert ops[0].action == "delete" and ops[0].target_ids == (band.id,)
    assert [r.id for r in store.active(U)] == [keep.id]


def test_forget_matching_nothing_deletes_nothing() -> None:
    store = FileMemoryStore()
    keep = stored(store, "User is vegan", "diet")
    ops = Reconciler(store).reconcile(
        U, [cand("User asked to forget: user's address", "address", forget=True)]
    )
    assert ops[0].action == "ignore"
    assert [r.id for r in store.active(U)] == [keep.id]


def test_offline_near_duplicate_is_ignored_and_new_facts_added() -> None:
    store = FileMemoryStore()
    old = stored(store, "User likes green tea", importance=0.9)
    ops = Reconciler(store).reconcile(
        U, [cand("User likes green tea!", importance=0.6), cand("User plays the cello")]
    )
    assert [op.action for op in ops] == ["ignore", "add"]
    assert ops[0].target_ids == (old.id,)
    assert sorted(r.text for r in store.active(U)) == [
        "User likes green tea",
        "User plays the cello",
    ]


def test_offline_near_duplicate_upgrades_agent_inferred_by_merge() -> None:
    store = FileMemoryStore()
    old = stored(store, "User likes green tea", source=MemorySource.AGENT_INFERRED, key="drink")
    ops = Reconciler(store).reconcile(U, [cand("User likes green tea")])
    assert ops[0].action == "merge"
    (active,) = store.active(U)
    assert active.source is MemorySource.USER_STATED and active.key == "drink"
    assert store.get_memory(U, old.id).status is MemoryStatus.SUPERSEDED  # type: ignore[union-attr]


def test_repeated_candidate_in_one_batch_is_stored_once() -> None:
    store = FileMemoryStore()
    ops = Reconciler(store).reconcile(
        U, [cand("User plays the cello"), cand("user plays the cello.")]
    )
    assert [op.action for op in ops] == ["add", "ignore"]
    assert len(store.active(U)) == 1


def test_a_repeat_follows_its_first_occurrence() -> None:
    store = FileMemoryStore()
    fish = stored(store, "User eats fish")  # user_stated, no key
    model = ScriptedChatModel(
        replies=[decisions_json({"new": 1, "label": "contradicts", "targets": ["E1"]})]
    )
    ops = Reconciler(store, model=model).reconcile(
        U,
        [
            # the assistant's guess, ignored: it may not supersede the user's statement
            cand("User is vegan", "diet", source=MemorySource.AGENT_INFERRED),
            # the user says the same later in the batch: it must not be lost with the guess
            cand("User is vegan", "diet"),
            cand("User is vegan", "diet"),
        ],
    )
    assert [op.action for op in ops] == ["ignore", "add", "ignore"]
    assert ops[2].target_ids == (ops[1].result_id,)
    assert sorted(r.text for r in store.active(U)) == ["User eats fish", "User is vegan"]
    assert store.get_memory(U, fish.id).status is MemoryStatus.ACTIVE  # type: ignore[union-attr]


# --- the model judgement ---------------------------------------------------------


def setup_tea() -> tuple[FileMemoryStore, MemoryRecord]:
    store = FileMemoryStore()
    return store, stored(store, "User prefers green tea")


def test_one_model_call_for_the_whole_batch() -> None:
    store, tea = setup_tea()
    stored(store, "User plays the piano")
    model = ScriptedChatModel(
        replies=[
            decisions_json(
                {"new": 1, "label": "contradicts", "targets": ["E1"], "reason": "taste changed"},
                {"new": 2, "label": "adds", "targets": []},
            )
        ]
    )
    ops = Reconciler(store, model=model).reconcile(
        U,
        [
            cand("User now prefers black tea"),
            cand("User plays the piano and the violin"),
            cand("User's budget is 5000", "budget"),  # no neighbour with that key: no need to ask
            cand("User has a cat named Tom"),  # no similar memory: added without asking
        ],
    )
    assert len(model.calls) == 1
    assert [op.action for op in ops] == ["supersede", "add", "add", "add"]
    assert ops[0].target_ids == (tea.id,) and "taste changed" in ops[0].reason
    prompt = model.calls[0][1].text
    assert 'NEW 1 (source: user_stated, key: none): "User now prefers black tea"' in prompt
    assert 'E1: "User prefers green tea"' in prompt

    empty = FileMemoryStore()  # nothing similar stored: no question to ask
    Reconciler(empty, model=no_model()).reconcile(U, [cand("User has a cat named Tom")])
    assert [r.text for r in empty.active(U)] == ["User has a cat named Tom"]
    assert store.get_memory(U, tea.id).status is MemoryStatus.SUPERSEDED  # type: ignore[union-attr]


def test_contradiction_never_hard_deletes() -> None:
    store, tea = setup_tea()
    model = ScriptedChatModel(
        replies=[decisions_json({"new": 1, "label": "contradicts", "targets": [tea.id]})]
    )
    Reconciler(store, model=model).reconcile(U, [cand("User hates tea")])
    old = store.get_memory(U, tea.id)
    assert old is not None and old.status is MemoryStatus.SUPERSEDED  # kept as history


def test_invented_and_foreign_ids_are_ignored_and_the_new_fact_survives() -> None:
    store, tea = setup_tea()
    foreign = stored(store, "User prefers green tea", user="mallory")
    model = ScriptedChatModel(
        replies=[
            decisions_json(
                {"new": 1, "label": "updates", "targets": ["E7", foreign.id, "deadbeef"]},
                {"new": 9, "label": "duplicates", "targets": ["E1"]},
            )
        ]
    )
    ops = Reconciler(store, model=model).reconcile(U, [cand("User prefers oolong tea")])
    assert ops[0].action == "add" and "no valid target" in ops[0].reason
    assert store.get_memory("mallory", foreign.id).status is MemoryStatus.ACTIVE  # type: ignore[union-attr]
    assert store.get_memory(U, tea.id).status is MemoryStatus.ACTIVE  # type: ignore[union-attr]
    assert sorted(r.text for r in store.active(U)) == [
        "User prefers green tea",
        "User prefers oolong tea",
    ]


def test_duplicates_ignore_or_merge() -> None:
    store, tea = setup_tea()
    model = ScriptedChatModel(
        replies=[decisions_json({"new": 1, "label": "duplicates", "targets": ["E1"]})]
    )
    ops = Reconciler(store, model=model).reconcile(U, [cand("User likes green tea")])
    assert ops[0].action == "ignore" and len(store.records) == 1

    merged = "User prefers green tea, especially Longjing; call ann@example.org"
    model = ScriptedChatModel(
        replies=[
            decisions_json(
                {"new": 1, "label": "duplicate", "targets": ["E1"], "merged_text": merged}
            )
        ]
    )
    ops = Reconciler(store, model=model).reconcile(U, [cand("User loves Longjing green tea")])
    assert ops[0].action == "merge"
    (active,) = store.active(U)
    assert active.text == "User prefers green tea, especially Longjing; call [EMAIL:@example.org]"
    assert active.supersedes == (tea.id,)


def test_agent_inferred_cannot_supersede_user_stated_through_the_model() -> None:
    store, tea = setup_tea()
    model = ScriptedChatModel(
        replies=[decisions_json({"new": 1, "label": "contradicts", "targets": ["E1"]})]
    )
    ops = Reconciler(store, model=model).reconcile(
        U, [cand("User dislikes green tea", source=MemorySource.AGENT_INFERRED)]
    )
    assert ops[0].action == "ignore" and "agent_inferred never supersedes" in ops[0].reason
    assert [r.id for r in store.active(U)] == [tea.id]


def test_forget_without_key_uses_the_model_to_choose_targets() -> None:
    store, tea = setup_tea()
    piano = stored(store, "User plays green piano")
    model = ScriptedChatModel(
        replies=[decisions_json({"new": 1, "label": "updates", "targets": ["E1"]})]
    )
    ops = Reconciler(store, model=model).reconcile(
        U, [cand("User asked to forget: user's green tea preference", forget=True)]
    )
    assert "FORGET REQUEST 1" in model.calls[0][1].text
    assert ops[0].action == "delete" and ops[0].target_ids == (tea.id,)
    assert [r.id for r in store.active(U)] == [piano.id]


def test_invalid_label_is_retried_once() -> None:
    store, _tea = setup_tea()
    model = ScriptedChatModel(
        replies=[
            decisions_json({"new": 1, "label": "delete", "targets": ["E1"]}),
            decisions_json({"new": 1, "label": "updates", "targets": ["E1"]}),
        ]
    )
    ops = Reconciler(store, model=model).reconcile(U, [cand("User prefers black tea")])
    assert len(model.calls) == 2 and "label" in model.calls[1][-1].text
    assert ops[0].action == "supersede"


@pytest.mark.parametrize("bad", ["", "no json", '{"decisions": [{"new": "one"}]}', "[1, 2]"])
def test_unusable_judgement_falls_back_to_offline_rules(bad: str) -> None:
    store, _ = setup_tea()
    model = ScriptedChatModel(replies=[bad, bad])
    ops = Reconciler(store, model=model).reconcile(U, [cand("User prefers black tea")])
    assert len(model.calls) == 2
    assert ops[0].action == "add" and "model's judgement was unusable" in ops[0].reason
    assert len(store.active(U)) == 2  # the new fact survived


def test_candidate_the_model_forgot_is_added() -> None:
    store, _ = setup_tea()
    model = ScriptedChatModel(replies=['{"decisions": []}'])
    ops = Reconciler(store, model=model).reconcile(U, [cand("User prefers black tea")])
    assert ops[0].action == "add" and "no decision" in ops[0].reason


async def test_async_twin_matches_sync() -> None:
    store, tea = setup_tea()
    model = ScriptedChatModel(
        replies=[decisions_json({"new": 1, "label": "updates", "targets": ["E1"]})]
    )
    ops = await Reconciler(store, model=model).areconcile(
        U, [cand("User prefers black tea")], thread_id="t"
    )
    assert ops[0].action == "supersede"
    (active,) = store.active(U)
    assert active.origin_thread_id == "t" and active.supersedes == (tea.id,)


# --- idempotent apply, pure pieces -------------------------------------------------


def test_applying_the_same_plan_twice_changes_nothing_the_second_time() -> None:
    store = FileMemoryStore()
    stored(store, "User's budget is 3000", "budget")
    stored(store, "User's address is 1 Main St", "address")
    reconciler = Reconciler(store)
    ops = reconciler.plan(
        U,
        [
            cand("User's budget is 5000", "budget"),
            cand("User plays the cello"),
            cand("User asked to forget: address", "address", forget=True),
        ],
        seed="job-1",
    )
    assert [reconciler.apply_op(U, op) for op in ops] == [True, True, True]
    snapshot = {r.id: r for r in store.list_memories(U, include_history=True)}
    writes = store.writes
    assert [reconciler.apply_op(U, op) for op in ops] == [False, False, False]
    assert store.writes == writes
    assert {r.id: r for r in store.list_memories(U, include_history=True)} == snapshot


def test_plans_are_deterministic_for_a_seed() -> None:
    store = FileMemoryStore()
    stored(store, "User's budget is 3000", "budget")
    batch = [cand("User's budget is 5000", "budget"), cand("User plays the cello")]
    a = Reconciler(store).plan(U, batch, seed="job-9")
    b = Reconciler(store).plan(U, batch, seed="job-9")
    assert a == b
    assert [op_from_dict(op_to_dict(op)) for op in a] == a


def test_serialisation_round_trip_with_dates() -> None:
    when = datetime(2026, 11, 2, tzinfo=UTC)
    op = plan_ops(
        [
            CandidateContext(
                cand("Order 1234 arrived late", type=MemoryType.EPISODIC, event_time=when)
            )
        ],
        seed="s",
    )[0]
    assert op_from_dict(op_to_dict(op)) == op


def test_text_similarity() -> None:
    assert text_similarity("User likes tea", "user likes tea!") == 1.0
    assert text_similarity("User's budget is 3000", "User's budget is 5000") == 0.0
    assert text_similarity("用户对海鲜过敏", "用户对海鲜过敏。") == 1.0
    assert text_similarity("abc", "") == 0.0
    assert 0 < text_similarity("User likes green tea", "User likes black tea") < 0.9


def test_pure_plan_ignores_unshown_records() -> None:
    record = MemoryRecord(text="User prefers tea", user_id=U)
    ctx = CandidateContext(cand("User prefers coffee"), similar=(ScoredMemory(record, 0.8),))
    ops = plan_ops([ctx], seed="s")
    assert ops[0].action == "add"


def test_bad_arguments() -> None:
    store = FileMemoryStore()
    with pytest.raises(ConfigurationError, match="neighbours"):
        Reconciler(store, neighbours=0)
    with pytest.raises(ConfigurationError, match="duplicate_threshold"):
        Reconciler(store, duplicate_threshold=0)
    with pytest.raises(ConfigurationError, match="BaseChatModel"):
        Reconciler(store, model="gpt")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="items"):
        ReconcilePrompts(user_template="nothing")


def test_model_text_quoted_in_logs_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    # A malformed answer and an unknown target id both quote the model's text in
    # a warning; identifiers in it must not reach the log.
    store, _ = setup_tea()
    bad = '{"decisions": [{"new": "call me on 13812345678"}]}'
    unknown_target = decisions_json({"new": 1, "label": "updates", "targets": ["ann@example.org"]})
    with caplog.at_level(logging.WARNING, logger="langgraph_memory.nodes.reconcile"):
        Reconciler(store, model=ScriptedChatModel(replies=[bad, bad])).reconcile(
            U, [cand("User prefers black tea")]
        )
        Reconciler(store, model=ScriptedChatModel(replies=[unknown_target])).reconcile(
            U, [cand("User prefers green tea")]
        )
    assert "unusable model judgement" in caplog.text
    assert "not shown" in caplog.text
    assert "13812345678" not in caplog.text and "[PHONE" in caplog.text
    assert "ann@example.org" not in caplog.text and "[EMAIL" in caplog.text
