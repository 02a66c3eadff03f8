"""The summariser's redaction is done turn by turn and reused when the turn summarises."""

from __future__ import annotations

import doctest
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from graphs._models import ScriptedChatModel
from langgraph_memory.nodes import _redaction_memo, create_compress_node
from langgraph_memory.nodes._redaction_memo import RedactionMemo
from langgraph_memory.privacy import Redactor

CONFIG: Any = {"configurable": {"user_id": "u1", "thread_id": "t1"}}


class CountingRedactor(Redactor):
    """A real redactor that counts the messages it was asked to redact."""

    def __init__(self) -> None:
        super().__init__()
        self.redacted = 0

    def redact_messages(self, messages: Any) -> list[BaseMessage]:
        self.redacted += len(messages)
        return super().redact_messages(messages)


def test_doctests() -> None:
    assert doctest.testmod(_redaction_memo).failed == 0


def test_each_message_is_redacted_once_and_an_edited_one_again() -> None:
    redactor = CountingRedactor()
    memo = RedactionMemo(redactor)
    first = [HumanMessage("my phone is 13812345678", id="h1"), AIMessage("noted", id="a1")]
    memo.prepare(first)
    again = memo.redact_messages(first)
    assert redactor.redacted == 2
    assert again[0].content == "my phone is [PHONE:*5678]"
    edited = memo.redact_messages([HumanMessage("my phone is 13998765432 now", id="h1")])
    assert redactor.redacted == 3 and edited[0].content == "my phone is [PHONE:*5432] now"
    memo.redact_messages([HumanMessage("no id: 13812345678")])  # no id: never remembered
    memo.redact_messages([HumanMessage("no id: 13812345678")])
    assert redactor.redacted == 5


def test_the_summarising_turn_reuses_what_quiet_turns_redacted(monkeypatch: Any) -> None:
    """Turn by turn through a compress node: the summariser still gets placeholders,
    and the turn that summarises redacts (almost) nothing itself."""
    redacted: list[str] = []
    real = Redactor.redact_messages

    def counting(self: Redactor, messages: Any) -> list[BaseMessage]:
        redacted.extend(str(m.id) for m in messages)
        return real(self, messages)

    monkeypatch.setattr(Redactor, "redact_messages", counting)
    seen: list[str] = []

    def summarise(prompt: list[BaseMessage]) -> str:
        seen.append("\n".join(str(m.content) for m in prompt))
        return "The user shared a phone number."

    node = create_compress_node(
        model=ScriptedChatModel(script=[summarise]),
        max_tokens=100_000,
        trigger_messages=9,
        keep_last_turns=1,
    )
    messages: list[Any] = []
    on_turn: list[int] = []
    for turn in range(6):
        messages += [
            HumanMessage(f"turn {turn}: call me on 1381234567{turn}", id=f"h{turn}"),
            AIMessage(f"ok, turn {turn}", id=f"a{turn}"),
        ]
        before = len(redacted)
        update = node.invoke({"messages": messages}, CONFIG)
        on_turn.append(len(redacted) - before)
        if update:
            break
    assert seen, "the node never summarised"
    assert "13812345670" not in seen[0] and "[PHONE" in seen[0]
    assert on_turn[-1] == 0, f"the summarising turn redacted {on_turn[-1]} messages again"
    assert sorted(redacted) == sorted(set(redacted)), "a message was redacted twice"
