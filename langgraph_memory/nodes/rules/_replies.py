"""How the user answered the assistant's last message: took it, accepted an offer, or corrected it.

The assistant's words are never the user's facts. Two of them still matter, once
the user's next message shows they hold:

- **a commitment the user took without correcting it** ("I've credited GBP 20.50
  to your next bill" - "Cheers."): kept as ``agent_inferred`` (see
  ``_commitments.py``). A reply that corrects it ("no, that's wrong", "不对") drops it.
- **an offer the user accepted** ("Unlimited is GBP 25/month; I can switch you
  from Oct 20" - "Do it.", "可以换成300M，129一个月" - "就换129的"): the user chose
  it, so it is kept as what the user agreed to, in the user's name.

Example:
    >>> accepts("Do it."), accepts("就换129的。"), accepts("What would it cost?")
    (True, True, False)
    >>> acknowledges("Cheers, thanks!"), acknowledges("No, that's wrong.")
    (True, False)
    >>> offer_text("Unlimited is GBP 25/month. I can switch you from Oct 20.")
    'Unlimited is GBP 25/month. I can switch you from Oct 20'
"""

from __future__ import annotations

import re
from typing import Final

from langgraph_memory.nodes.rules._evidence import shares_salient_term
from langgraph_memory.nodes.rules._text import TRIM, sentences

_CORRECTION: Final = re.compile(
    r"\b(?:no|nope|not|wrong|incorrect|actually|isn'?t|wasn'?t|didn'?t|never said|mistake)\b"
    r"|不是|不对|错了|搞错|弄错|没有|我没|唔系|唔啱|冇",
    re.IGNORECASE,
)
_ACCEPT: Final = re.compile(
    r"^(?:(?:ok(?:ay)?|yes|yeah|yep|sure|great|perfect|cool|right|fine|alright)[,!. ]+)*"
    r"(?:yes(?: please)?|yeah|yep|sure|ok(?:ay)?|please do|do it|go ahead|go for it|let'?s do (?:it|that)|"
    r"sounds good|that works|deal|book it|switch me|sign me up|i'?ll take it|make it so)\b"
    r"|^(?:好的?|行|可以|没问题|冇问题|得|嗯|OK)[，,。!！ ]*(?:就这样|办吧|换吧|弄吧|帮我办|就这个)?[。!！]*$"
    r"|^(?:那)?就(?:这个|这样|换|办|要|选|订|改)|^(?:换吧|办吧|订吧|要这个|就它)",
    re.IGNORECASE,
)
_THANKS: Final = re.compile(
    r"\b(?:thanks|thank you|thx|cheers|ta|great|perfect|lovely|brilliant|awesome|nice|ok(?:ay)?|"
    r"got it|sounds good|appreciate it)\b|谢谢|多谢|唔该|感谢|收到|知道了|好的|好嘞|辛苦",
    re.IGNORECASE,
)
_OFFER: Final = re.compile(
    r"\b(?:i|we) (?:can|could) (?!not\b)|\bshall i\b|\bwould you like me to\b|\bwant me to\b|\bi'?d suggest\b"
    r"|可以(?:帮您|给您|为您|帮你|给你)?(?:换|改|办|升级|调整|开通|预约|安排|退)|要不要|需要我|建议您",
    re.IGNORECASE,
)


def accepts(reply: str) -> bool:
    """Does ``reply`` accept what was offered ("do it", "yes please", "就换129的")?"""
    reply = reply.strip(TRIM + " ")
    return bool(_ACCEPT.search(reply)) and not _CORRECTION.search(reply)


# A correction opens the reply ("no, that's wrong", "不对") or says so outright anywhere
# ("I said keep it", "you got it wrong"); a "not" further on is the user's own news
# ("we're coming back Dec 14 now, not the 10th").
_CORRECTION_OPENS: Final = re.compile(
    r"^\W*(?:no|nope|not|wrong|incorrect|actually|that'?s not|that isn'?t|never said)\b"
    r"|^\W*(?:不是|不对|错了|搞错|弄错|没有|我没|唔系|唔啱|冇)",
    re.IGNORECASE,
)
_CORRECTION_ANYWHERE: Final = re.compile(
    r"\b(?:wrong|incorrect|mistake|never said|i said|i didn'?t (?:say|ask|want)|i never asked|"
    r"that'?s not what|(?:got|mixed) me (?:up|mixed up) with|that'?s not me|not my (?:account|order|booking))\b"
    r"|搞错|弄错|错了|不对|我没(?:说|要|让)|我说的是|唔啱"
    # It is someone else's: "过敏的是我儿子，不是女儿", "I'm not the one allergic".
    r"|的是我|不是我|\bi'?m not the one\b"
    # Asked back, it denies: "我什么时候成钻石会员了", "我哪有北京的地址".
    r"|我(?:什么时候|什麼時候|几时|幾時)(?:成|是|有|变成|變成|买|買|说|講|讲|去|办|辦)|我哪有|我边度有|我邊度有",
    re.IGNORECASE,
)


def acknowledges(reply: str) -> bool:
    """Does ``reply`` take the assistant's last message as said: thanks, ok, or going on
    to something else, but not correcting it or asking about it? (A question, even about
    something else, leaves it open: the message may have been a wrong claim.)"""
    if _CORRECTION_OPENS.search(reply.strip()) or _CORRECTION_ANYWHERE.search(reply):
        return False
    if accepts(reply) or _THANKS.search(reply):
        return True
    return not re.search(r"[?？]|[吗呢]\s*$", reply.strip())


# The assistant asking the user for something is not an offer ("could you share a token
# so I can check the logs?").
_ASKS_USER: Final = re.compile(
    r"\b(?:could|can|would) you\b|\bplease (?:send|share|provide|confirm|upload)\b|"
    r"能否提供|请您?提供|麻烦您?(?:提供|发)|您能",
    re.IGNORECASE,
)


def offer_text(message: str) -> str | None:
    """The offer in an assistant message, with the sentence before it for context."""
    found = sentences(message)
    for index in range(len(found) - 1, -1, -1):
        if _OFFER.search(found[index]) and not _ASKS_USER.search(found[index]):
            start = max(0, index - 1)
            return " ".join(
                s.strip(TRIM) + ("" if s.rstrip()[-1:] in ".;。；" else ".")
                for s in found[start : index + 1]
            ).rstrip(".")
    return None


# A negated clause: "我没去 Japan leh", "我個計劃唔包牙科", "we never had a dog". Closed-class
# words of both languages, dialects' too; 不 inside a word that negates nothing ("不过",
# "不错") is not one. Wider than ``_profile.NEGATED``, which finds a preference put in the
# negative ("don't", "不要"): a denial is any negated clause.
_DENIES: Final = re.compile(
    r"\b(?:not|no|never|nope|none|neither|nor)\b|n'?t\b"
    r"|(?<![要还还是])不(?![过错少同久断仅但管如然])|没|沒|冇|唔|未(?!来|來)|并非|並非"
    # "我什么时候成钻石会员了", "我哪有北京的地址": asked back, it denies.
    r"|我(?:什么时候|什麼時候|几时|幾時)|哪有|哪裡有|哪里有|边度有|邊度有",
    re.IGNORECASE,
)


def assistant_claims(message: str) -> str:
    """The sentences of an assistant message that assert something (its questions ask)."""
    return " ".join(s for s in sentences(message) if not s.rstrip(TRIM + " ").endswith(("?", "？")))


# "We're on Postgres, not BigQuery", "是周三不是周二": a denial that says what is true instead.
_SAYS_INSTEAD: Final = re.compile(
    r"[,，]\s*(?:not|instead of|rather than)\b|\b(?:instead of|rather than)\b|\bnot\b.{1,30}[,，]\s*(?:it'?s|but)\b"
    r"|而不是|不是.{1,15}(?:是|而是)|唔係.{1,15}係|不是.{1,15}[，,]\s*是",
    re.IGNORECASE,
)


def rebuts(segment: str, claims: str) -> bool:
    """Does the user's ``segment`` deny what the assistant just ``claims`` (``assistant_claims``)?

    A rebuttal repeats the claim's words to deny them ("you used the Japan pass" -
    "我没去 Japan leh"), so kept as what the user said it would carry the very claim
    that was wrong; what the user said beside it ("是 13 號才出發的") is kept.

    Example:
        >>> rebuts("我没去 Japan leh", "I see you used the Japan roaming pass in November.")
        True
        >>> rebuts("I never had braces", assistant_claims("Do you have braces?"))
        False
        >>> rebuts("我不吃香菜", "Noted: you like Sichuan food.")
        False
        >>> rebuts("We're on Postgres, not BigQuery", "Since you sync from BigQuery, it's easy.")
        False
    """
    return (
        bool(claims)
        and bool(_DENIES.search(segment))
        and not _SAYS_INSTEAD.search(segment)
        and shares_salient_term(segment, claims)
    )
