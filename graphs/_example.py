"""What the two example agents share: the model choice, the three memory layers,
the ``langgraph dev`` factory and the terminal chat.

* **Model.** ``ChatOpenAI`` when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set
  (any OpenAI-compatible server: a local Ollama or vLLM; ``OPENAI_MODEL`` names
  the model). Otherwise a scripted offline model (rules, no network) that calls
  the agent's tools and visibly uses the recalled memories; the chat says so in
  its first line.
* **Layers.** Session: our ``SqliteSaver`` (the terminal chat; ``langgraph dev``
  brings its own checkpointer). Long-term: an embedded ``ChromaMemoryStore`` with
  the offline ``HashingEmbeddings``. Nodes: recall before the model, extract and
  compress after it (``add_memory_nodes``), extraction by the rule-based
  extractor offline or the chat model online.
* Data lives in ``$LGM_EXAMPLE_DATA/<agent>`` (default
  ``~/.local/share/langgraph-memory-examples/<agent>``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from graphs._models import MemoryAwareChatModel, memory_lines
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes import MemoryWriter
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.wiring import MemoryState, add_memory_nodes

OFFLINE_NOTICE = (
    "offline: a scripted rule-based model answers (no LLM); set OPENAI_API_KEY, or "
    "OPENAI_BASE_URL for a local OpenAI-compatible server, to use a real model."
)


def online_model() -> BaseChatModel | None:
    """``ChatOpenAI`` if the environment names a key or a server, else ``None``."""
    if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        return None
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        # A local server needs no key, but the client insists on one.
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
        temperature=0,
        max_retries=1,  # a wrong key or a server that is down: fail in seconds, once
    )


# A rule of the scripted model: (pattern on the latest user message, tool name,
# arguments from the match). The first matching rule calls its tool once.
ToolRule = tuple[re.Pattern[str], str, Callable[[re.Match[str]], dict[str, Any]]]


_CALLED = re.compile(r"\bcalled ([A-Z]\w*)")


class ScriptedToolModel(MemoryAwareChatModel):
    """Offline: calls a tool when a rule matches the user's message, then answers
    from the tool result and the recalled memories, visibly (a standing "no
    honorifics" instruction drops the formal greeting; an allergy is named)."""

    rules: list[Any] = Field(default_factory=list)
    # The greeting without a "no honorifics" memory (it then drops it).
    formal: str = "Dear customer,"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        from langchain_core.outputs import ChatGeneration, ChatResult

        self._calls.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        last = messages[-1] if messages else None
        latest = next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        if not isinstance(last, ToolMessage):
            for pattern, tool, arguments in self.rules:
                if match := pattern.search(latest):
                    call = {
                        "name": tool,
                        "args": arguments(match),
                        "id": f"call-{len(self._calls)}",
                    }
                    return AIMessage("", tool_calls=[call])
        memories = memory_lines(messages)
        parts = [self.greeting(memories)]
        if isinstance(last, ToolMessage):
            parts.append(last.text)
        else:
            allergies = [m for m in memories if "allergic" in m.lower()]
            if allergies:
                parts.append(f"Keeping in mind: {'; '.join(allergies)}.")
            parts.append(f"Noted: {latest}")
        if memories:
            parts.append(f"(memory used: {len(memories)} item{'s' if len(memories) != 1 else ''})")
        return AIMessage(" ".join(p for p in parts if p))

    def greeting(self, memories: Sequence[str]) -> str:
        names = [m.group(1) for line in memories if (m := _CALLED.search(line))]
        if any("honorific" in line.lower() for line in memories):
            return f"{names[-1]}," if names else ""
        return f"Dear {names[-1]}," if names else self.formal


# (agent, data directory) -> compiled graph, see Example.factory.
_COMPILED: dict[tuple[str, str], Any] = {}


@dataclass
class Example:
    """One example agent, as the terminal chat and ``langgraph dev`` build it."""

    name: str
    system_prompt: str
    tools: list[BaseTool]
    rules: list[ToolRule]
    # The terminal chat's scripted conversation: (session/thread, user message).
    script: tuple[tuple[str, str], ...]
    # The offline model's greeting when no memory says "no honorifics".
    formal_greeting: str = "Dear customer,"

    def data_dir(self) -> Path:
        """``$LGM_EXAMPLE_DATA/<agent>``, by default under the user's data directory:
        not in the project, where ``langgraph dev`` would reload on every write."""
        default = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        root = os.environ.get("LGM_EXAMPLE_DATA") or default / "langgraph-memory-examples"
        return Path(root) / self.name

    def build(
        self, *, store: ChromaMemoryStore, model: BaseChatModel | None = None
    ) -> StateGraph[Any, Any, Any, Any]:
        """The uncompiled graph: recall -> agent <-> tools -> extract -> compress."""
        chat = (
            model
            or online_model()
            or ScriptedToolModel(rules=self.rules, formal=self.formal_greeting)
        )
        bound = chat.bind_tools(self.tools)
        system = SystemMessage(self.system_prompt)

        def agent(state: MemoryState) -> dict[str, Any]:
            return {"messages": [bound.invoke([system, *state["messages"]])]}

        writer = MemoryWriter(
            store,
            extractor=RuleBasedExtractor() if isinstance(chat, ScriptedToolModel) else chat,
            mode="sync",
        )
        builder = StateGraph(MemoryState)
        builder.add_node("agent", agent)
        builder.add_node("tools", ToolNode(self.tools))
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        return add_memory_nodes(builder, model_node="agent", store=store, writer=writer)

    def open_store(self) -> ChromaMemoryStore:
        path = self.data_dir() / "memory"
        path.mkdir(parents=True, exist_ok=True)
        return ChromaMemoryStore.embedded(path, embeddings=HashingEmbeddings())

    def factory(self) -> Any:
        """What ``langgraph dev`` calls (see ``langgraph.json``): the compiled graph,
        without a checkpointer (the server brings its own); the memory nodes use
        this agent's own long-term store.

        Built once per process and data directory: the server calls a factory
        for every run, inside its event loop, where opening the store (a
        directory, a SQLite file) would be a blocking call.
        """
        key = (self.name, str(self.data_dir().resolve()))
        if key not in _COMPILED:
            if online_model() is None:
                sys.stderr.write(f"{self.name}: {OFFLINE_NOTICE}\n")
            _COMPILED[key] = self.build(store=self.open_store()).compile(name=self.name)
        return _COMPILED[key]

    def chat(
        self,
        lines: Iterable[tuple[str, str]] | None = None,
        *,
        user_id: str = "demo-user",
        out: TextIO = sys.stdout,
        model: BaseChatModel | None = None,
    ) -> list[str]:
        """A terminal chat (the scripted conversation when ``lines`` is None, or
        ``(session, text)`` pairs); returns the assistant's answers."""
        from langgraph_memory.session import SqliteSaver

        online = model or online_model()
        if online is None:
            out.write(OFFLINE_NOTICE + "\n")
        data = self.data_dir()
        data.mkdir(parents=True, exist_ok=True)
        answers: list[str] = []
        with (
            self.open_store() as store,
            SqliteSaver.from_conn_string(data / "checkpoints.sqlite") as saver,
        ):
            graph = self.build(store=store, model=online).compile(checkpointer=saver, store=store)
            for session, text in lines if lines is not None else self.script:
                config: RunnableConfig = {
                    "configurable": {"thread_id": f"{user_id}:{session}", "user_id": user_id}
                }
                out.write(f"[{session}] you: {text}\n")
                try:
                    result = graph.invoke({"messages": [HumanMessage(text)]}, config)
                except Exception as exc:  # a real model's auth/connection error: one line
                    if type(exc).__module__.split(".")[0] not in (
                        "openai",
                        "httpx",
                        "langchain_openai",
                    ):
                        raise
                    out.write(
                        f"the model refused: {type(exc).__name__}: {exc}. Check OPENAI_API_KEY / OPENAI_BASE_URL.\n"
                    )
                    return answers
                answer = result["messages"][-1].text
                recalled = memory_lines(result["messages"])
                if recalled:
                    out.write(f"  (recalled: {'; '.join(recalled)})\n")
                out.write(f"[{session}] {self.name}: {answer}\n")
                answers.append(answer)
        return answers


def interactive_lines(session: str = "chat") -> Iterable[tuple[str, str]]:
    """Lines typed at the terminal, until an empty line or end of input."""
    while True:
        try:
            text = input("> ").strip()
        except EOFError:
            return
        if not text:
            return
        yield session, text


def main(example: Example, argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=f"The {example.name} example agent.")
    parser.add_argument("--interactive", action="store_true", help="type your own messages")
    parser.add_argument("--user", default="demo-user")
    args = parser.parse_args(argv)
    example.chat(interactive_lines() if args.interactive else None, user_id=args.user)
    return 0
