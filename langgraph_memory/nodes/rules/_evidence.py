"""How evidence (raw user turns no rule understood) stays current.

Evidence has no slot key, so the same-key supersede cannot retire it. Three
offline rules keep it from serving an old value as current (reconcile applies
them, ``nodes/reconcile.py`` ``_offline_op``):

- **an update retires the evidence it updates**: a new statement that carries
  an update marker ("now", "switched", "moved", "no longer", "改成", "换成",
  "搬到", "现在") supersedes the active evidence that shares a salient term with
  it ("I'm on the 50GB plan" -> "I switched to the unlimited plan");
- **a forget request deletes the evidence on its topic** (a slot's topic words,
  ``mentions_topic``, or a salient term of the request);
- **dated evidence expires** once its stated end or its day has passed (the
  extractor sets ``expires_at``).

Example:
    >>> shares_salient_term("User said: I'm on the 50GB plan", "User said: switched to unlimited plan")
    True
    >>> updates("User said: I switched to the unlimited plan"), updates("User said: I like tea")
    (True, False)
"""

from __future__ import annotations

import re
from typing import Final

from langgraph_memory.nodes.rules._text import word_set

_PREFIX: Final = re.compile(r"^(?:User said|用户说)[:：]\s*")
_UPDATE: Final = re.compile(
    r"\b(?:now|switched|switching|switch|moved|moving|changed|changing|instead|no longer|anymore|"
    r"any more|upgraded|downgraded|replaced|updated|rescheduled|postponed|pushed|cancell?ed|"
    r"these days|from now on|not anymore|gave up|quit|stopped|started|new)\b"
    r"|现在|改成|改为|改到|换成|换到|换了|搬到|搬去|搬家|不再|已经不|取消|推迟|提前|改签|新的|变成|变了|开始|停了|不用了",
    re.IGNORECASE,
)
_STOP: Final = word_set(
    "user said that this with have from they them there their what when where which would could "
    "should about just really also been will your very much more some like want need know think "
    "going make sure thanks thank please today tomorrow yesterday week month year time good well "
    "okay right still only even into over then than because since after before again other these "
    "those here being does doing done getting into maybe actually now switched moved changed new"
)
_ZH_STOP: Final = word_set(
    "用户 我们 现在 已经 一下 什么 这个 那个 因为 所以 但是 然后 可以 没有 不是 就是 还是 一个 时候 觉得 知道"
)


def salient_terms(text: str) -> set[str]:
    """Content words (English, 4+ letters) and Chinese character pairs of ``text``."""
    text = _PREFIX.sub("", text).lower()
    terms = {
        w for w in re.findall(r"[a-z][a-z0-9'-]{3,}|\d+[a-z]+|[a-z]+\d+", text) if w not in _STOP
    }
    for run in re.findall(r"[\u3400-\u9fff]{2,}", text):
        terms.update(run[i : i + 2] for i in range(len(run) - 1))
    return {t for t in terms if t not in _ZH_STOP}


def shares_salient_term(a: str, b: str) -> bool:
    return bool(salient_terms(a) & salient_terms(b))


def updates(text: str) -> bool:
    """Does ``text`` state a change ("switched to", "搬到了", "now")?"""
    return bool(_UPDATE.search(_PREFIX.sub("", text)))
