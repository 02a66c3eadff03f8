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

from langgraph_memory.nodes.rules._text import cjk_pairs, word_set

_PREFIX: Final = re.compile(r"^(?:User said|用户说)[:：]\s*")
_UPDATE: Final = re.compile(
    r"\b(?:now|switched|switching|switch|moved|moving|changed|changing|instead|no longer|anymore|"
    r"any more|upgraded|downgraded|replaced|updated|rescheduled|postponed|pushed|cancell?ed|"
    r"these days|from now on|not anymore|gave up|quit|stopped|started|new|shifted|bumped|brought forward|"
    r"change of plans?|plans? changed)\b"
    r"|现在|改成|改为|改到|换成|换到|换了|搬到|搬去|搬家|不再|已经不|取消|推迟|提前|改签|新的|变成|变了|开始|停了|不用了"
    # "改看 Clementi", "改住酒店", "就换129的", "决定不看 Bukit Timah 了", "调高", "提到3万"
    r"|改(?![善进革正良造装])[\u4e00-\u9fff]|换(?:个|成|到|了|去)?\s*\d|不(?:看|要|买|去|住|用|做|订|考虑)[^，,。]{0,12}了"
    r"|调高|调低|提高到?|降到|提到|加到|升到|涨到|减到|挪到|挪去|调到|移到|改在|转咗|转用|转到|唔再|唔用"
    # Something that stopped: "家教结束了", "不补了", "that class is over", "no more lessons".
    r"|修改|更改|变更|\b(?:modified|amended)\b|结束了|结束啦|完结了|不(?![错少多好行早晚久远够对])[\u4e00-\u9fff]了"
    r"|\b(?:ended|is over|are over|finished|no more|not any ?more)\b",
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
    terms |= cjk_pairs(text)
    return {t for t in terms if t not in _ZH_STOP}


def shares_salient_term(a: str, b: str) -> bool:
    return bool(salient_terms(a) & salient_terms(b))


# Coarse topics an update can change without repeating a word of what it replaces:
# "we moved to Bath" replaces "we're in Clifton", "改19号下午" replaces "约18号上午安装",
# "switched to the 300M package" replaces "I'm on 500M for 199 a month".
_TOPICS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        (
            "home",
            r"\b(?:live|lives|living|(?:we|i|we have|i have|we've|i've) (?:just )?moved|moved (?:to|in|out|house)|moving (?:to|in|out|house)|relocat\w*|home|flat|apartment|house|"
            r"address|based in|we'?re in|i'?m in)\b|住在|住址|地址|搬家|搬到|搬去|搬咗|新家|住处|(?:我|我们|我家)(?:现在)?住",
        ),
        (
            "plan",
            r"\b(?:(?<!change of )plan(?!s? changed)|tariff|package|bundle|subscription|contract|data|unlimited|broadband|"
            r"\d+\s?(?:gb|mb|m))\b|套餐|宽带|流量|月租|\d+\s?[mM兆](?![a-z])",
        ),
        (
            "stay",
            r"\b(?:hotel|room|booking|reservation|check-?in|check-?out|nights?|suite|inn)\b|"
            r"酒店|房间|入住|退房|民宿|房型|大床房|双床房|[一两二三四五六七八九十\d]晚",
        ),
        (
            "delivery",
            r"\b(?:deliver\w*|shipping|ship|courier|parcel|dispatch\w*)\b|送货|配送|快递|发货|收货|送到",
        ),
        (
            "contact",
            r"\b(?:call|calls|ring|ringing|text|texts|sms|email|e-mail|phone|whatsapp)\b|"
            r"电话|短信|邮件|邮箱|微信|联系",
        ),
        (
            "work",
            r"\b(?:job|work|works|office|company|employer|shift|shifts)\b|公司|上班|返工|工作|单位",
        ),
        (
            "appointment",
            r"\b(?:appointment|install\w*|visit|technician|engineer|slot)\b|预约|安装|上门|师傅|约",
        ),
        ("budget", r"\b(?:budget|spend|afford|price range)\b|预算|价位"),
        (
            "dining",
            r"\b(?:table|restaurant|dinner|lunch|brunch|reservation|booking for \d+)\b|"
            r"餐厅|订座|订位|包间|饭店|晚饭|午饭",
        ),
        (
            "price",
            r"\b(?:price|cost|costs|expensive|cheap|cheaper|fee|per month|a month|monthly)\b|"
            r"[$¥£€]\s?\d|\d\s?(?:元|块)|太贵|便宜|价格|月费|一个月",
        ),
        ("school", r"\b(?:school|class|classes|course|lesson|semester)\b|学校|上课|课程|报名"),
    )
)


def topics(text: str) -> set[str]:
    """The coarse topics ``text`` touches (see ``_TOPICS``).

    Example:
        >>> sorted(topics("User said: we moved last weekend, new job in Bath"))
        ['home', 'work']
    """
    text = _PREFIX.sub("", text)
    return {name for name, pattern in _TOPICS if pattern.search(text)}


def _distinctive(text: str) -> set[str]:
    """Names, codes and numbers ("Bukit Timah", "HI-73310", "500M"), and Chinese word pairs."""
    text = _PREFIX.sub("", text)
    out = {w.lower() for w in re.findall(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-zA-Z]{2,}\b", text)}
    out |= {w.lower() for w in re.findall(r"[A-Za-z0-9-]*\d[A-Za-z0-9-]*", text) if len(w) >= 2}
    return out | (cjk_pairs(text) - _ZH_STOP)


def same_topic(a: str, b: str) -> bool:
    """A shared coarse topic ("User lives in Portobello" and "we're renting in Leith")."""
    return bool(topics(a) & topics(b))


def related(a: str, b: str) -> bool:
    """Same subject: a shared coarse topic, a shared name, code or number, or two shared
    Chinese word pairs (one common word, "news", "plan", never decides alone)."""
    if topics(a) & topics(b):
        return True
    shared = _distinctive(a) & _distinctive(b)
    latin = {t for t in shared if t.isascii()}
    return bool(latin) or len(shared - latin) >= 2


# An offer the user accepted is a change by nature ("User agreed to: ... I can move you").
_AGREED: Final = re.compile(r"^(?:User agreed to|用户同意了客服的提议)[:：]")


def updates(text: str) -> bool:
    """Does ``text`` state a change ("switched to", "搬到了", "now", an accepted offer)?"""
    return bool(_AGREED.match(text)) or bool(_UPDATE.search(_PREFIX.sub("", text)))
