"""Property test: whatever the transcript, compress leaves a prompt every provider accepts.

Random transcripts with parallel tool calls, tool loops, human messages arriving
while tool calls are pending, an in-progress last turn, optional user/memory
system messages; after applying compress's update the way
LangGraph does (``add_messages``):

* no ToolMessage without its AI tool call before it;
* no AI tool call without its results (when it had them before);
* the latest human message is present; kept messages are an in-order suffix;
* exactly one summary message, above the conversation.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph.message import add_messages

from langgraph_memory.nodes.compress import SUMMARY_MESSAGE_ID, create_compress_node
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID

CONFIG = {"configurable": {"user_id": "u1", "thread_id": "t1"}}


@st.composite
def transcripts(draw: st.DrawFn) -> list[AnyMessage]:
    counter = iter(range(10_000))

    def nid(prefix: str) -> str:
        return f"{prefix}{next(counter)}"

    msgs: list[AnyMessage] = []
    if draw(st.booleans()):
        msgs.append(SystemMessage("You are helpful.", id="sys"))
    if draw(st.booleans()):
        msgs.append(SystemMessage("<long_term_memory>x</long_term_memory>", id=RECALL_MESSAGE_ID))
    if draw(st.booleans()):
        msgs.append(AIMessage("Welcome!", id=nid("greet")))  # before any human turn
    turns = draw(st.integers(min_value=1, max_value=9))
    for turn in range(turns):
        words = draw(st.integers(min_value=1, max_value=60))
        msgs.append(HumanMessage(f"user {turn} " + "w " * words, id=nid("h")))
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            calls = [
                {"name": "lookup", "args": {"n": i}, "id": nid("call")}
                for i in range(draw(st.integers(min_value=1, max_value=3)))
            ]
            msgs.append(
                AIMessage(
                    draw(st.sampled_from(["", "let me check"])), tool_calls=calls, id=nid("ai")
                )
            )
            results = [
                ToolMessage(
                    "r " * draw(st.integers(1, 80)),
                    tool_call_id=c["id"],
                    name="lookup",
                    id=nid("tool"),
                )
                for c in calls
            ]
            results = list(draw(st.permutations(results)))
            if draw(st.integers(min_value=0, max_value=4)) == 0:
                # A human message lands while tool calls are pending (human-in-the-loop,
                # interrupts): a turn boundary now sits between a call and its results.
                split = draw(st.integers(min_value=0, max_value=len(results)))
                results.insert(split, HumanMessage(f"user interjects {turn}", id=nid("h")))
            msgs.extend(results)
        in_progress = turn == turns - 1 and draw(st.booleans())
        if not in_progress:
            msgs.append(AIMessage("answer " + "a " * draw(st.integers(1, 60)), id=nid("ai")))
    return msgs


def check_prompt(before: list[AnyMessage], after: list[AnyMessage]) -> None:
    seen_calls: set[str] = set()
    answered = {m.tool_call_id for m in after if isinstance(m, ToolMessage)}
    had_results = {m.tool_call_id for m in before if isinstance(m, ToolMessage)}
    for message in after:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                seen_calls.add(call["id"])
                if call["id"] in had_results:
                    assert call["id"] in answered, f"tool call {call['id']} lost its result"
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in seen_calls, f"orphaned tool message {message.id}"
    latest_human = [m for m in before if isinstance(m, HumanMessage)][-1]
    assert latest_human.id in {m.id for m in after}
    before_ids = [m.id for m in before]
    conversation_after = [m.id for m in after if not isinstance(m, SystemMessage)]
    conversation_before = [
        i for i, m in zip(before_ids, before, strict=True) if not isinstance(m, SystemMessage)
    ]
    assert (
        conversation_after
        == conversation_before[len(conversation_before) - len(conversation_after) :]
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    transcript=transcripts(),
    keep=st.integers(min_value=1, max_value=4),
    trigger_messages=st.integers(min_value=1, max_value=12),
    max_tokens=st.sampled_from([200, 800, 5000]),
)
def test_compress_never_breaks_tool_pairs_or_drops_the_latest_human(
    transcript: list[AnyMessage], keep: int, trigger_messages: int, max_tokens: int
) -> None:
    node = create_compress_node(
        model=None,
        max_tokens=max_tokens,
        trigger_messages=trigger_messages,
        keep_last_turns=keep,
        summary_max_tokens=60,
    )
    state: dict[str, Any] = {"messages": transcript}
    update = node.invoke(state, CONFIG)
    after = add_messages(transcript, update["messages"]) if update else transcript
    check_prompt(transcript, after)
    if update:
        assert sum(m.id == SUMMARY_MESSAGE_ID for m in after) == 1
        first_conversation = next(
            i for i, m in enumerate(after) if not isinstance(m, SystemMessage)
        )
        assert [m.id for m in after].index(SUMMARY_MESSAGE_ID) < first_conversation
        # Compressing again right away keeps every invariant too (rolling path).
        again = node.invoke({"messages": after, "summary": update["summary"]}, CONFIG)
        after_again = add_messages(after, again["messages"]) if again else after
        check_prompt(after, after_again)
        assert sum(m.id == SUMMARY_MESSAGE_ID for m in after_again) == 1
