"""Scripted chat models for the exam's CLI tests (``module:factory`` paths).

``extractor`` answers the LLM extractor's JSON with one memory per user line
it sees; ``judge`` reads the ids in the judge's request and says every needed
fact is present and no forbidden one is, so the real parsing paths run.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class _Scripted(BaseChatModel):
    kind: str

    @property
    def _llm_type(self) -> str:
        return f"exam-test-{self.kind}"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        prompt = "\n".join(m.text for m in messages)
        text = _judge(prompt) if self.kind == "judge" else json.dumps({"memories": []})
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def _ids(prompt: str, heading: str) -> list[str]:
    section = prompt.split(heading, 1)[1].split("\n\n", 1)[0] if heading in prompt else ""
    return re.findall(r"^- ([^:\n]+):", section, flags=re.MULTILINE)


def _judge(prompt: str) -> str:
    needs = {i: True for i in _ids(prompt, "Needed facts (id: fact):")}
    forbidden = {i: False for i in _ids(prompt, "Forbidden facts (id: fact):")}
    answer = None if "No answer to grade" in prompt else True
    return json.dumps(
        {"needs_present": needs, "forbidden_present": forbidden, "answer_correct": answer}
    )


def extractor() -> BaseChatModel:
    return _Scripted(kind="extractor")


def judge() -> BaseChatModel:
    return _Scripted(kind="judge")
