"""What a forget request reaches, without a model (pure), and what it leaves.

A request for a key covers its slot, sub-slots and evidence turns on its topic
(``forget_covers``); a whole-turn "forget that" finds the message before it by
time (``_previous_statement``); a request that reaches part of an evidence turn
leaves the pieces not on its topic (``_left_by_forget``). The reading of the
words is ``nodes/rules/_forget.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Final

from langgraph_memory.nodes.reconcile._similarity import text_similarity
from langgraph_memory.nodes.rules import is_evidence_key, mentions_topic
from langgraph_memory.nodes.rules._evidence import LABEL, updates
from langgraph_memory.nodes.rules._forget import PREVIOUS_STATEMENT_KEY, touches_topic
from langgraph_memory.nodes.rules._profile import HOUSEHOLD_KEY_PARTS
from langgraph_memory.nodes.rules._retire import (
    has_own_subject,
    join_pieces,
    opens_an_ask,
    says_something,
    split_pieces,
)
from langgraph_memory.types import CandidateMemory, MemoryRecord, MemorySource, MemoryStatus


def key_matches(record_key: str | None, key: str) -> bool:
    """``address`` matches ``address`` and ``address.city`` (a forget covers the sub-slots)."""
    return record_key is not None and (record_key == key or record_key.startswith(key + "."))


def _retraction(key: str) -> bool:
    """A forget keyed to one value of a slot ("allergy.aspirin"): the rules' retraction of
    a fact the user now says was never true (``retracted_allergies``); a user's own forget
    request names a whole slot ("allergy")."""
    return key.startswith("allergy.")


# A topic (or an evidence turn) that is about someone other than the user.
_NAMES_A_PERSON: Final = re.compile(
    r"\b(?:he|she|his|her|him|they|their|mum|mom|mother|dad|father|son|daughter|kids?|child|wife|"
    r"husband|partner|brother|sister|grand\w+|baby)\b|他|她|佢|妈|媽|爸|儿子|兒子|女儿|女兒|老婆|老公|"
    r"孩子|哥|姐|弟|妹|奶奶|爷爷|外婆|外公|家人",
    re.IGNORECASE,
)


def forget_covers(record: MemoryRecord, key: str, topic: str = "") -> bool:
    """A forget request for ``key`` covers its slot, sub-slots, and evidence turns on its topic.

    Evidence (a raw user turn, ``evidence.<digest>``) has no slot of its own, so
    "forget my address" also deletes the raw turns that talk about an address. A request
    that names no one else ("之前那个体检贫血的事你删了吧") leaves the household's facts
    ("health.mother.高血压", "她每天早上吃一片氨氯地平").
    """
    about_others = bool(_NAMES_A_PERSON.search(topic)) or not topic
    if key_matches(record.key, key):
        parts = set((record.key or "").split(".")[1:])
        return about_others or not parts & HOUSEHOLD_KEY_PARTS
    return (
        is_evidence_key(record.key)
        and mentions_topic(record.text, key)
        and (about_others or not _NAMES_A_PERSON.search(LABEL.sub("", record.text)))
    )


def _same_turn(targets: Sequence[str], records: Sequence[MemoryRecord]) -> list[str]:
    """Versions of the same evidence turn as a forgotten one (what an update kept of it):
    a forgotten turn goes with every piece it left."""
    keys = {r.key for r in records if r.id in targets and is_evidence_key(r.key)}
    return [r.id for r in records if r.key in keys and r.id not in targets]


def _said_with(
    topic: str, targets: Sequence[str], records: Sequence[MemoryRecord]
) -> tuple[str, ...]:
    """The evidence turns said in the same message as a forgotten memory whose pieces
    name the topic ("帮我记一下我老公穿42码 …" beside "用户要求记住：用户老公穿42码"): the
    raw words go with the fact (their other pieces stay, ``_left_by_forget``)."""
    origins = {m for r in records if r.id in targets for m in r.origin_message_ids}
    return tuple(
        r.id
        for r in records
        if r.id not in targets
        and r.status == MemoryStatus.ACTIVE
        and is_evidence_key(r.key)
        and origins & set(r.origin_message_ids)
        and _goes_on_about(topic, split_pieces(r.text)[1])
    )


def _goes_on_about(topic: str, pieces: Sequence[str]) -> bool:
    """Do an evidence turn's pieces name the forgotten topic, or go on about the fact
    said just before them with no subject of their own ("下周二我有个面试" and then
    "在腾讯；有点紧张")? An ask of its own never goes on about it."""
    if any(touches_topic(topic, p, coarse=False) for p in pieces):
        return True
    return bool(pieces) and not has_own_subject(pieces[0]) and not opens_an_ask(pieces[0])


def _points_back(cand: CandidateMemory) -> bool:
    """A whole-turn "forget that" ("Actually, forget that."), about the message before it."""
    return cand.forget and cand.key == PREVIOUS_STATEMENT_KEY


# How far back "forget that" reaches for the message it points at: one conversation.
_PREVIOUS_STATEMENT_WINDOW: Final = timedelta(hours=12)


def _previous_statement(cand: CandidateMemory, records: Sequence[MemoryRecord]) -> tuple[str, ...]:
    """What the user's message before ``cand``'s left stored ("Actually, forget that."):
    every active user-stated memory of the newest earlier message, if it is recent."""
    mine = set(cand.origin_message_ids)
    said = [
        r
        for r in records
        if r.status == MemoryStatus.ACTIVE
        and r.source == MemorySource.USER_STATED
        and r.origin_message_ids
        and not mine & set(r.origin_message_ids)
        and (cand.observed_at is None or r.valid_from <= cand.observed_at)
    ]
    if not said:
        return ()
    newest = max(said, key=lambda r: r.valid_from)
    if cand.observed_at is not None and cand.observed_at - newest.valid_from > (
        _PREVIOUS_STATEMENT_WINDOW
    ):
        return ()
    message = newest.origin_message_ids[-1]
    return tuple(r.id for r in said if message in r.origin_message_ids)


def _without_names(topic: str) -> str:
    return re.sub(r"(?<![\w'])[A-Z][a-z]+(?:'s)?(?![\w'])", " ", topic).strip()


def _left_by_forget(
    topic: str, reached: Sequence[MemoryRecord], threshold: float
) -> tuple[tuple[str, str], ...]:
    """What a forget request leaves of the evidence turns it reached: the pieces that are
    not on its topic ("我刚入了个华为Mate 70" stays when "我爸拿我旧手机用的事" goes). A turn
    none of whose pieces the request reaches alone (it matched the whole) goes whole."""
    out: list[tuple[str, str]] = []
    for r in reached:
        if r.status != MemoryStatus.ACTIVE or not is_evidence_key(r.key):
            continue
        prefix, pieces = split_pieces(r.text)
        similar = [text_similarity(topic, p) >= threshold for p in pieces]
        # "that thing about Ngozi being pregnant": Ngozi is whose, the pregnancy what goes;
        # "My wife Ngozi will travel with me" stays.
        what = _without_names(topic)
        if what == topic or not touches_topic(what, topic, coarse=False):
            what = topic
        touched = [
            touches_topic(what, p, coarse=False) or s for p, s in zip(pieces, similar, strict=True)
        ]
        if not any(touched):
            # Only a coarse topic in common: "我爸拿我旧手机用的事" names the old phone, and
            # "我刚入了个华为Mate 70" (a phone too) stays once a piece shares its words.
            touched = [touches_topic(topic, p) or s for p, s in zip(pieces, similar, strict=True)]
        if not any(touched):
            continue
        first = touched.index(True)
        # A piece after the forgotten one may go on about it ("Ben 面 London job；成了的话我们
        # 可能要搬"): it stays only when it has a subject of its own.
        left = [
            p for i, p in enumerate(pieces) if not touched[i] and (i < first or has_own_subject(p))
        ]
        # A change asked as a question ("can you do it Saturday mornings instead?") was kept
        # as evidence for what it changes, and stays so.
        if left and len(left) < len(pieces) and any(says_something(p) or updates(p) for p in left):
            out.append((r.id, join_pieces(prefix, left)))
    return tuple(out)


def _forget_topic(cand: CandidateMemory) -> str:
    return re.sub(r"^.*?[:：]\s*", "", cand.text)  # "User asked to forget: X" -> "X"
