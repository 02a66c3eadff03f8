"""The core profile: which of a user's memories are shown on every turn, whatever the query.

Word overlap alone misses the facts that matter most: "what should I cook
tonight?" shares no word with "User is allergic to seafood", and "what do you
know about me?" shares none with anything. So recall injects a small profile of
critical facts every turn, the way standing instructions are pinned, inside its
own share of the memory block so it never crowds out query-relevant memories.

How a memory qualifies (:func:`profile_reason`), in priority order:

1. ``safety``: allergies, health and safety facts, the user's own or a family
   member's (a key with a family word such as ``allergy``, ``health``,
   ``medication``; or such words in the text: "allergic", "过敏", "asthma",
   "糖尿病"). Any importance and any type: an allergy kept only as low-importance
   evidence is still shown.
2. ``instruction``: standing instructions (procedural memories, up to the
   node's ``pinned_k``). They were pinned before the profile existed and keep
   that right: they count against the whole memory budget, not the profile's
   share, so a tight budget still shows "never use honorifics".
3. ``identity``: name and how to address the user (``name``,
   ``preferred_name``, ``address_form`` ...; "call me", "称呼", "叫我").
4. ``slot``: the current value of a key slot: diet, home city and address,
   budget, language, household, job, contact channel ...
5. ``important``: any other fact the user stated with importance
   ``>= high_importance`` (0.6; a plain ``MemoryRecord`` has 0.5, the rules give
   stated facts 0.6-0.95, low-importance evidence stays out), and upcoming or
   time-boxed events of that importance (a past event without an end date could be
   long over, so it is left to the query).

Families 2 and 4 need importance ``>= min_importance`` (0.6). Agent-inferred
memories qualify only with confidence ``>= min_agent_confidence`` and rank
after what the user said. Never a memory that is not current: status active,
``valid_to`` and ``expires_at`` (if any) after now. Within a family: user-stated
first, then importance, then the newest update. A family word is matched on
the key's parts (``allergy:child``, ``address.city``, ``home_city``), so keys
written by the rules, by an LLM extractor or by an app all work.

"About me" questions (:func:`is_about_me`: "what do you know about me?",
"who am I", "我是谁", "你记得我什么") get a larger share and more items.

Example:
    >>> from langgraph_memory.types import MemoryRecord
    >>> profile_reason(MemoryRecord("User is allergic to seafood", key="allergy.seafood"))
    'safety'
    >>> profile_reason(MemoryRecord("User likes jazz", importance=0.5)) is None
    True
    >>> is_about_me("你记得我什么？"), is_about_me("what should I cook?")
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.types import MemoryRecord, MemorySource, MemoryStatus, MemoryType

__all__ = [
    "PROFILE_FAMILIES",
    "ProfileEntry",
    "ProfilePolicy",
    "is_about_me",
    "profile_reason",
    "select_profile",
]

# Families in priority order (the index is the rank).
PROFILE_FAMILIES: tuple[str, ...] = ("safety", "instruction", "identity", "slot", "important")

_SAFETY_KEY_WORDS = frozenset(
    {
        "allergy",
        "allergies",
        "allergic",
        "allergen",
        "health",
        "medical",
        "medication",
        "medications",
        "medicine",
        "condition",
        "disease",
        "illness",
        "safety",
        "emergency",
        "pregnancy",
        "pregnant",
        "disability",
        "intolerance",
        "blood",
    }
)
_IDENTITY_KEY_WORDS = frozenset(
    {
        "name",
        "preferred_name",
        "nickname",
        "address_form",
        "honorific",
        "honorifics",
        "salutation",
        "title",
        "pronoun",
        "pronouns",
        "identity",
        "called",
    }
)
_SLOT_KEY_WORDS = frozenset(
    {
        "diet",
        "dietary",
        "vegetarian",
        "vegan",
        "food",
        "home",
        "city",
        "address",
        "location",
        "residence",
        "hometown",
        "budget",
        "language",
        "timezone",
        "occupation",
        "job",
        "work",
        "employer",
        "company",
        "family",
        "household",
        "spouse",
        "wife",
        "husband",
        "partner",
        "child",
        "children",
        "kid",
        "kids",
        "son",
        "daughter",
        "pet",
        "pets",
        "age",
        "birthday",
        "religion",
        "contact",
        "channel",
        "currency",
        "membership",
        "tier",
    }
)
# Keys of things that are not standing facts about the user.
_NEVER_KEY_WORDS = frozenset({"temporary", "evidence", "summary"})

_SAFETY_TEXT = re.compile(
    r"allerg|anaphyla|intoleran|celiac|coeliac|asthma|diabet|epilep|pregnan|"
    r"blood pressure|hypertension|heart condition|medication|epipen|inhaler|"
    r"过敏|不耐受|哮喘|糖尿病|癫痫|怀孕|孕期|高血压|心脏病|乳糜泻|服药|用药|忌口",
    re.IGNORECASE,
)
_IDENTITY_TEXT = re.compile(
    r"\bcall (?:me|him|her|them|the user)\b|\bcalled\b|\bname is\b|\bnamed\b|\baddress(?:ed)? as\b|"
    r"\bhonorific|\bpronouns?\b|称呼|叫我|叫做|名字|称为|姓",
    re.IGNORECASE,
)
_SLOT_TEXT = re.compile(
    r"\blives? in\b|\bmoved to\b|\bbased in\b|\bvegetarian\b|\bvegan\b|\bbudget\b|"
    r"\bworks? (?:as|at)\b|住在|搬到|吃素|素食|预算|在.{1,8}工作",
    re.IGNORECASE,
)
_KEY_SPLIT = re.compile(r"[.:/\-\s]+")

_ABOUT_ME = re.compile(
    r"\b(?:what|how much) do you (?:know|remember) about me\b|\bwho am i\b|"
    r"\btell me (?:about|what you know about) (?:me|myself)\b|"
    r"\bwhat do you remember\b|\bwhat have i told you\b|\bwhat do you have on me\b|"
    r"\bmy profile\b|\babout myself\b|"
    r"我是谁|你记得我|你知道我(?:什么|多少|哪些)|你对我.{0,4}了解|关于我的|我的(?:资料|档案|信息)|"
    r"你还记得我|我跟你说过(?:什么|哪些)",
    re.IGNORECASE,
)


def is_about_me(query: str) -> bool:
    """Whether the turn asks what the assistant knows about the user.

    Example:
        >>> is_about_me("Hey, what do you know about me?"), is_about_me("我是谁？")
        (True, True)
    """
    return bool(_ABOUT_ME.search(query))


@dataclass(frozen=True, slots=True)
class ProfilePolicy:
    """How large the core profile is and which memories qualify (see the module doc).

    Attributes:
        share: Share of the memory block's token budget the profile may use.
        max_items: At most this many profile facts (instructions are counted by
            the node's ``pinned_k``).
        about_me_share: The share for "about me" questions.
        about_me_items: The item cap for "about me" questions.
        min_importance: Importance an identity or slot memory needs.
        high_importance: Importance that qualifies any user-stated fact of
            ``important_types`` (events only when upcoming or time-boxed).
        important_types: Memory types the ``important`` family takes.
        min_agent_confidence: Confidence an agent-inferred memory needs.
        pool: How many candidates (ranked by importance) recall asks the store for.

    Example:
        >>> ProfilePolicy(share=0.2).share
        0.2
    """

    share: float = 0.25
    max_items: int = 16
    about_me_share: float = 0.6
    about_me_items: int = 20
    min_importance: float = 0.6
    high_importance: float = 0.6
    min_agent_confidence: float = 0.8
    pool: int = 16
    important_types: tuple[MemoryType, ...] = (MemoryType.SEMANTIC, MemoryType.EPISODIC)
    extra_key_words: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for name in ("share", "about_me_share"):
            value = getattr(self, name)
            if not 0 < value < 1:
                raise ConfigurationError(
                    f"ProfilePolicy.{name}={value!r} is out of range; use a share in (0, 1) so "
                    "query-relevant memories keep room (0.25 / 0.6 are the defaults)."
                )
        for name in ("min_importance", "high_importance", "min_agent_confidence"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ConfigurationError(
                    f"ProfilePolicy.{name}={value!r} is out of range; use a value between 0 and 1."
                )
        object.__setattr__(self, "important_types", tuple(self.important_types))
        for name in ("max_items", "about_me_items", "pool"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"ProfilePolicy.{name}={value!r}; use an integer >= 1.")
        if not isinstance(self.extra_key_words, frozenset):
            object.__setattr__(self, "extra_key_words", frozenset(self.extra_key_words))


DEFAULT_PROFILE_POLICY = ProfilePolicy()


def _key_words(key: str | None) -> set[str]:
    if not key:
        return set()
    lowered = key.lower()
    words = {w for w in _KEY_SPLIT.split(lowered) if w}
    # "home_city" -> home, city; "preferred_name" stays whole too.
    return words | {part for w in words for part in w.split("_") if part}


def is_current(record: MemoryRecord, now: datetime | None) -> bool:
    """Active, and (when ``now`` is known) not ended or expired by then."""
    if record.status != MemoryStatus.ACTIVE:
        return False
    if now is None:
        return True
    if record.valid_to is not None and record.valid_to <= now:
        return False
    return record.expires_at is None or record.expires_at > now


def profile_reason(
    record: MemoryRecord,
    policy: ProfilePolicy = DEFAULT_PROFILE_POLICY,
    *,
    now: datetime | None = None,
) -> str | None:
    """The profile family a memory belongs to, or ``None`` when it does not qualify.

    Example:
        >>> from langgraph_memory.types import MemoryRecord
        >>> profile_reason(MemoryRecord("用户希望被称为老王", key="preferred_name", importance=0.9))
        'identity'
    """
    if not is_current(record, now) or not record.text.strip():
        return None
    if (
        record.source is MemorySource.AGENT_INFERRED
        and record.confidence < policy.min_agent_confidence
    ):
        return None
    signals = _signals(record.text, record.key, policy.extra_key_words)
    if "never" in signals:
        return None
    if "safety" in signals:
        return "safety"
    if record.type is MemoryType.PROCEDURAL:
        return "instruction"
    important = record.importance >= policy.min_importance
    if important and "identity" in signals:
        return "identity"
    if important and record.type is MemoryType.SEMANTIC and "slot" in signals:
        return "slot"
    if (
        record.type in policy.important_types
        and record.importance >= policy.high_importance
        and record.source is MemorySource.USER_STATED
        and (record.type is not MemoryType.EPISODIC or _upcoming(record, now))
    ):
        return "important"
    return None


@lru_cache(maxsize=16384)
def _signals(text: str, key: str | None, extra_key_words: frozenset[str]) -> frozenset[str]:
    """Which families a memory's key and text point to (cached: the same memories
    come back turn after turn, and the regexes are the planner's main cost)."""
    words = _key_words(key)
    found: set[str] = set()
    if words & _NEVER_KEY_WORDS:
        found.add("never")
    if words & _SAFETY_KEY_WORDS or _SAFETY_TEXT.search(text):
        found.add("safety")
    if words & _IDENTITY_KEY_WORDS or _IDENTITY_TEXT.search(text):
        found.add("identity")
    if words & (_SLOT_KEY_WORDS | extra_key_words) or _SLOT_TEXT.search(text):
        found.add("slot")
    return frozenset(found)


def _upcoming(record: MemoryRecord, now: datetime | None) -> bool:
    """An event worth showing every turn: time-boxed (and, being current, not lapsed)
    or still ahead. A past event without an end could be long over: left to the query."""
    if record.expires_at is not None:
        return True
    return record.event_time is not None and now is not None and record.event_time >= now


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    """One memory chosen for the profile and why."""

    record: MemoryRecord
    family: str


def select_profile(
    candidates: Iterable[MemoryRecord],
    policy: ProfilePolicy = DEFAULT_PROFILE_POLICY,
    *,
    now: datetime | None = None,
    about_me: bool = False,
    max_instructions: int = 3,
) -> list[ProfileEntry]:
    """The profile, best first: qualifying memories ordered by family, then source,
    importance and recency; one per key (the newest); capped per the policy.

    Example:
        >>> from langgraph_memory.types import MemoryRecord, MemoryType
        >>> picked = select_profile([
        ...     MemoryRecord("User likes jazz"),
        ...     MemoryRecord("Never use honorifics", type=MemoryType.PROCEDURAL),
        ...     MemoryRecord("User is allergic to peanuts", key="allergy.peanut")])
        >>> [(p.family, p.record.text) for p in picked]
        [('safety', 'User is allergic to peanuts'), ('instruction', 'Never use honorifics')]
    """
    entries: list[ProfileEntry] = []
    for record in candidates:
        family = profile_reason(record, policy, now=now)
        if family is not None:
            entries.append(ProfileEntry(record, family))

    def order(entry: ProfileEntry) -> tuple[int, bool, float, float, str]:
        r = entry.record
        return (
            PROFILE_FAMILIES.index(entry.family),
            r.source is not MemorySource.USER_STATED,
            -r.importance,
            -r.updated_at.timestamp(),
            r.id,
        )

    entries.sort(key=order)
    limit = policy.about_me_items if about_me else policy.max_items
    chosen: list[ProfileEntry] = []
    seen_keys: set[str] = set()
    seen_ids: set[str] = set()
    facts = instructions = 0
    for entry in entries:
        record = entry.record
        if record.id in seen_ids or (record.key and record.key in seen_keys):
            continue
        if entry.family == "instruction":
            if instructions >= max_instructions:
                continue
            instructions += 1
        else:
            if facts >= limit:
                continue
            facts += 1
        chosen.append(entry)
        seen_ids.add(record.id)
        if record.key:
            seen_keys.add(record.key)
    return chosen


def profile_share(policy: ProfilePolicy, about_me: bool) -> float:
    return policy.about_me_share if about_me else policy.share
