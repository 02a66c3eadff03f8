"""Which pieces of an older statement an update retires, and values corrected in one message.

An evidence memory holds a whole user turn ("we're on the Pro plan; 5 seats; the
workspace is studiobloom"); an update usually changes one piece of it ("the workspace
was renamed"). ``retired_part`` says which pieces go (those on the update's coarse
topic, ``_evidence.topics``; failing that, those naming what it names) and what
stays; reconcile stores what stays again under the old key (``MemoryOp.kept``).
Some pieces are sticky: a safety fact, a person ("my mum", "with my son"), and a
refund or compensation still owed go only when the update is about them (or, for
what is owed, settles it: "the 75 did arrive").

``fold_self_corrections`` keeps only the last value of a value corrected inside one
message ("moved standup to 10, wait no, 10:15").

Example:
    >>> retired_part("User said: our workspace was renamed to bloomlab",
    ...              "User said: we're on the Pro plan; the workspace is studiobloom", split=True)
    "User said: we're on the Pro plan"
    >>> fold_self_corrections(["we moved standup to 10", "wait no, 10:15"])
    ['we moved standup to 10:15']
"""

from __future__ import annotations

import itertools
import re
from typing import Final

from langgraph_memory._redact_text import PLACEHOLDER_PATTERN
from langgraph_memory.nodes.rules._evidence import (
    AGREED,
    CORRECTED_DAY,
    DATE_OR_TIME,
    LABEL,
    OWN_MISTAKE,
    RESOLVED,
    distinctive,
    salient_terms,
    topics,
    updates,
)
from langgraph_memory.nodes.rules._quantity import moves_quantity, singular
from langgraph_memory.nodes.rules._text import CJK as CJK_CHAR
from langgraph_memory.nodes.rules._text import PROPOSED_TIME, word_set

# Evidence joins a turn's pieces with "; " / "；"; a piece may hold clauses split by commas.
_PIECE_SPLIT: Final = re.compile(r"\s*[;；]\s*|\s*,\s+|\s*，\s*")
# A clause that leans on the one before it ("so if I ask ... remind me", "所以…") stays with it.
_LEANS_BACK: Final = re.compile(
    r"^(?:(?:and|but) )?(?:so|which|because|cuz|coz|since|but|though|then|that'?s why|it|it'?s|its|this|that|"
    r"he|she|they|he'?s|she'?s|they'?re|his|her|their|what'?s going on|why|how come)\b"
    r"|^(?:所以|因此|因为|因為|那就|然后|然後|但是|但|不过|不過|它|这个|那个|他|她|佢|咋回事|怎么回事|怎麼回事|什么情况|啥情况)",
    re.IGNORECASE,
)
# A piece about someone else ("she can't have gluten", "Clive's gone veggie", "他不想…").
_OTHER_SUBJECT: Final = re.compile(
    r"^(?:(?:and|also|oh|btw)[,\s]+)*(?:he|she|they|his|her|their|him)\b"
    r"|^(?:他|她|佢|他们|她们|他們|她們)",
)
_SELF_SUBJECT: Final = re.compile(
    r"^(?:i|i'm|i've|i'd|my|we|we're|our)\b|^(?:我|咱)(?![们們]?(?:的|个|個)?(?:儿子|女儿|老公|老婆|妈|爸|哥|姐|弟|妹|闺女|仔|女))",
    re.IGNORECASE,
)


# Who, not what: "travelling with my daughter Giulia" stays when the flight moves, a pet when
# the user moves house ("my cat miso is the boss of this apartment"), and "my
# mum is allergic to penicillin" when the user turns out to be coeliac.
_KIN: Final = re.compile(
    r"(?i:^|(?<=[\s,;]))(?-i:(Mum|Mom|Dad|Mama|Papa))(?='s|\b)"
    # Lower case too: "the GP has taken mum off warfarin".
    r"|(?<![\w'])(mum|mom|dad)(?='s|\b)"
    r"|\b(?:my|our) (mum|mom|mother|dad|father|parents|son|daughter|kids?|child|children|baby|wife|husband|"
    r"partner|sister|brother|grand\w+|in-laws?|aunt|uncle|cousin|niece|nephew|roommate|flatmate|family)\b"
    r"|(?:我|我们|我們|我家)(?:的|个|個)?(老婆|老公|儿子|兒子|女儿|女兒|闺女|爸妈|父母|孩子|妈|媽|爸|哥|姐|弟|妹|仔|囡|"
    r"爷爷|奶奶|外婆|外公|婆婆|公公|孙子|孙女|家人)"
    r"|(阿妈|阿媽|阿爸|老妈|老媽|老爸|老豆|老母|爸妈|爸媽)",
    re.IGNORECASE,
)
_THIRD_PERSON: Final = re.compile(r"\b(?:he|she|him|her|his|they|them)\b|他|她|佢", re.IGNORECASE)
# Obligations still owed: only their resolution, or a change that names them, ends them.
_OWED: Final = frozenset({"refund", "compensation"})
# What makes a money piece owed: the refund topic also holds any payment ("我在 backend
# team 做 payment gateway", "the bill is paid monthly"), which a job change may retire.
OWED: Final = re.compile(
    r"\b(?:refund\w*|reimburs\w*|money back|chargeback|compensat\w*|vouchers?|credit(?:ed)?|goodwill|"
    r"overcharged|double[- ]charged|waive\w*)\b"
    r"|退款|退钱|退錢|退回|退还|退還|退一[笔筆]|赔偿|賠償|补偿|補償|[优優]惠券|代金券|重复扣|重複扣|多扣",
    re.IGNORECASE,
)


def _sticky(text: str) -> set[str]:
    """What a piece holds that only an update on the same thing may retire."""
    out = topics(text) & {"allergy", "pet"}
    if OWED.search(LABEL.sub("", text)):
        out |= topics(text) & _OWED
    return out | {"kin:" + _kin_word(next(g for g in m.groups() if g)) for m in _KIN.finditer(text)}


# One label per person, however the user calls them: "Mum", "my mother", "阿媽", "我妈".
_KIN_SAME: Final = {
    "mom": "mum", "mother": "mum", "mama": "mum", "dad": "dad", "father": "dad", "papa": "dad",
    "阿妈": "妈", "阿媽": "妈", "老妈": "妈", "老媽": "妈", "老母": "妈", "媽": "妈",
    "阿爸": "爸", "老爸": "爸", "老豆": "爸",
}  # fmt: skip


def _kin_word(word: str) -> str:
    word = word.lower()
    return _KIN_SAME.get(word, word)


def _unlocks(update: str) -> set[str]:
    out = _sticky(update)
    if RESOLVED.search(update):
        out |= _OWED  # "the 75 did arrive" ends the fee it was owed
    return out


# The two legs of a trip: "coming back Dec 14 now" leaves "fly out Nov 24" alone.
_OUTBOUND: Final = re.compile(
    r"\b(?:fly(?:ing)? out|out on|outbound|leav(?:e|es|ing) on|depart\w*|heading out)\b|\bout (?:the )?(?:\d|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d)|去程|出发|出發|飞去|走的那天",
    re.IGNORECASE,
)
_RETURN: Final = re.compile(
    r"\b(?:back on|coming back|come back|return\w*|fly(?:ing)? (?:home|back)|heading home|inbound)\b|\bback (?:the )?(?:\d|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d)|回程|回来|回來|返程",
    re.IGNORECASE,
)


def _legs(text: str) -> set[str]:
    return {leg for leg, pattern in (("out", _OUTBOUND), ("back", _RETURN)) if pattern.search(text)}


# Facts about one person's body: the update must be about the same person ("我老公最近
# 开始食牛肉" changes his diet, not the user's "我自己冇咩戒口").
_PERSONAL: Final = frozenset({"diet", "allergy", "medication", "fitness"})


def _kin_of(text: str) -> set[str]:
    return {label for label in _sticky(text) if label.startswith("kin:")}


def _blocked(update: str, piece: str) -> bool:
    mine, theirs = _legs(update), _legs(piece)
    if mine and theirs and not mine & theirs:
        return True
    # Someone else's body, unless the piece lost its person to a fact of its own ("我妈高血压"
    # kept apart from "每天吃一片氨氯地平") and names what the update names (the drug).
    lost_its_person = not _kin_of(piece) and _shares_distinctive(update, piece)
    if topics(piece) & _PERSONAL and _kin_of(update) != _kin_of(piece) and not lost_its_person:
        return True
    need = _sticky(piece) - _unlocks(update)
    same_name = bool(_names(update) & _names(piece))
    if any(n.startswith("kin:") for n in need) and (
        # "we moved him to Oakwood"; "Chloe 的 piano 改到禮拜天" names "我女兒 Chloe".
        _THIRD_PERSON.search(LABEL.sub("", update))
        or same_name
        or _the_thing_changed(update, piece)
    ):
        need = {n for n in need if not n.startswith("kin:")}
    if same_name:
        need.discard("pet")  # "Luna's back on normal food" is about the cat Luna
    return bool(need)


_SAYS_SELF: Final = re.compile(r"\b(?:i|i'm|i've|my|me|mine)\b|我(?![们們哋])", re.IGNORECASE)


def _the_thing_changed(update: str, piece: str) -> bool:
    """ "The wedding na 27th now" moves "my sister's wedding is 20 December": the update says
    nothing of the user and shares an English content word with the relative's piece
    (unlike "my birthday is 5 May" beside Mum's). Chinese pairs would tie a name ("乐乐")."""
    if _SAYS_SELF.search(LABEL.sub("", update)):
        return False
    return any(t.isascii() for t in salient_terms(update) & salient_terms(piece))


def _names(text: str) -> set[str]:
    """Capitalised names inside a sentence ("Chloe", "Sian"), not its first word."""
    body = LABEL.sub("", text)
    return {w for w in re.findall(r"(?<=[\s\u4e00-\u9fff，,；;])[A-Z][a-z]{2,}\b", body)} | (
        {m.group(0)}
        if (m := re.match(r"[A-Z][a-z]{2,}\b(?=\s*(?:的|'s|\u2019s))", body))
        else set()
    )


# Slots that hold one value at a time, by the coarse topic an update names: "we're in
# the new house in Bristol as of Tuesday" ends "User lives in Canton" (address.city).
_ONE_VALUE_SLOTS: Final = {
    "home": ("address",),
    "work": ("occupation", "workplace"),
    "plan": ("membership", "plan", "product"),
    "diet": ("diet",),
    "budget": ("budget",),
    # A purchase record of a handset ("用户购买了iPhone 15 Pro"), only when it is one.
    "device": ("device", "product"),
    # A pregnancy that ended ("the baby arrived") and a drug replaced ("the GP switched mum to
    # apixaban" ends "mum is on warfarin"): the health values a raw update ends.
    "pregnancy": ("health",),
    "medication": ("health",),
}


# Leaving an employer, named right after the verb: "I left St Mary's", "quit Acme",
# "我从腾讯离职了" (not "I left the keys at St Mary's").
_LEFT_WORK: Final = re.compile(
    r"(?i:\b(?:left|quit|resigned from|moved on from|no longer (?:at|with))\s+(?:my job (?:at|with)\s+|the\s+)?)"
    r"([A-Z][\w'&.-]*(?:\s+[A-Z][\w'&.-]*)*)"
    r"|从([^，,。；;\s]{1,10})(?:离职|離職|辞职|辭職)|离开了?([^，,。；;\s]{1,10})|離開了?([^，,。；;\s]{1,10})"
)


# Eating a food again: "最近开始能吃点辣了", "I can eat dairy again now", "牛肉又能吃了".
_EATS_AGAIN: Final = re.compile(
    r"能吃|可以吃|敢吃|又吃|能喝|可以喝|\b(?:can|could) (?:eat|have|drink) .{1,20}?\b(?:again|now)\b"
    r"|\beat(?:ing)? .{1,20}? again\b",
    re.IGNORECASE,
)


def retires_slot(update: str, value: str, key: str) -> bool:
    """Does the raw update ``update`` end ``value``, a rule's value of the slot ``key``?

    Example:
        >>> retires_slot("User said: we're in the new house in Bristol as of Tuesday",
        ...              "User lives in Canton", "address.city")
        True
        >>> retires_slot("User said: my sister moved to Leeds", "User lives in Canton", "address.city")
        False
    """
    family = key.split(".")[0]
    if not any(family in slots for slots in _ONE_VALUE_SLOTS.values()):
        return False  # most keys: decided before the update is read
    shared = {t for t in _changed_topics(update) if family in _ONE_VALUE_SLOTS.get(t, ())}
    if family in ("product", "health"):
        shared &= topics(value)  # a new phone ends the phone bought, not the air fryer
    left = _LEFT_WORK.search(update) if not shared and family in _ONE_VALUE_SLOTS["work"] else None
    if left is not None:
        # "I left St Mary's, I'm at the Royal Free now" ends "works as a nurse at St Mary's":
        # the employer named, no work word needed.
        employer = next(g for g in left.groups() if g)
        shared = {"work"} if _shares_distinctive(employer, value, numbers=False) else set()
    if key.startswith("diet.avoid.") and _EATS_AGAIN.search(update):
        # "最近开始能吃点辣了" ends "用户不吃辣" (not "用户不吃香菜"): the food named again.
        avoided = re.sub(r"^(?:User does not eat|用户不吃|用户不喝)\s*", "", value).strip(" .")
        shared = {"diet"} if avoided and avoided.lower() in update.lower() else set()
    if not shared:
        return False
    # The pieces that say the change; someone else's ("my sister moved") is not the user's.
    prefix, pieces = split_pieces(update)
    carrying = [p for p in pieces if topics(p) & shared] or pieces
    return not any(
        _subjects_differ(prefix + p, value)
        or _blocked(prefix + p, value)
        or _kin_of(p) != _kin_of(value)
        for p in carrying
    )


# Topics too wide to pull a second piece along with the one an update retired.
_BROAD: Final = frozenset({"price", "schedule", "contact"})


def says_something(piece: str) -> bool:
    """Not a bare date, a filler or a question ("12月1号到15号", "btw", "怎麼 rotate"): worth
    keeping alone ("5 個 seats" is)."""
    if _ASKS.search(piece):
        return False
    bare = DATE_OR_TIME.sub(" ", piece)
    return len(CJK_CHAR.findall(bare)) + len(re.findall(r"[A-Za-z]{2,}|\d+", bare)) >= 2


_ASKS: Final = re.compile(
    r"[?？]\s*$|^(?:how|what|why|when|where|which|can you|could you)\b"
    r"|^(?:怎么|怎麼|为什么|為什麼|什么时候|什麼時候|啥时候|咋|能不能|可不可以|是不是)|[吗嗎呢]$",
    re.IGNORECASE,
)


# A masked identifier alone ("…登记電郵啦，[EMAIL:@x.com]") is the value of the piece before it.
_MASK_ONLY: Final = re.compile(rf"(?:{PLACEHOLDER_PATTERN}\s*)+")


def split_pieces(text: str) -> tuple[str, list[str]]:
    """``("User said: ", ["A", "B"])`` for ``"User said: A; B"``; clauses that lean on the one
    before them stay with it."""
    m = LABEL.match(text)
    prefix = m.group(0) if m else ""
    pieces: list[str] = []
    for raw in _PIECE_SPLIT.split(text[len(prefix) :]):
        piece = raw.strip()
        if not piece:
            continue
        if pieces and (_LEANS_BACK.match(piece) or _MASK_ONLY.fullmatch(piece)):
            pieces[-1] = f"{pieces[-1]}, {piece}" if piece.isascii() else f"{pieces[-1]}，{piece}"
        else:
            pieces.append(piece)
    return prefix, pieces


def _subjects_differ(update: str, piece: str) -> bool:
    """The update is about the user, the piece about someone else (or the other way)."""
    update = LABEL.sub("", update)
    mine, theirs = bool(_SELF_SUBJECT.match(update)), bool(_OTHER_SUBJECT.match(piece))
    return (mine and theirs) or (
        bool(_OTHER_SUBJECT.match(update)) and bool(_SELF_SUBJECT.match(piece))
    )


def _changed_topics(update: str) -> set[str]:
    """The topics of the pieces that carry the change ("我们搬家了；现在住滨江路；以后送货不用扛了":
    home, not delivery); all of them when no piece names a topic of its own."""
    if AGREED.match(update):
        return topics(update)
    _, pieces = split_pieces(update)
    marked = set().union(*(topics(p) for p in pieces if updates(p)))
    for here, after in itertools.pairwise(pieces):
        if updates(here) and not topics(here) and not updates(after):
            # The change is named right after its marker: "我现在在 live ops 那边；老板是 Vivian".
            marked |= topics(after)
    # Goods that arrived have shipped: "洗碗机到了" ends "到现在还没发货" (not the standing
    # delivery arrangements, which are "delivery").
    arrived = {"shipping"} if _ARRIVED.search(LABEL.sub("", update)) else set()
    return (marked or topics(update)) | arrived


_ARRIVED: Final = re.compile(
    r"\b(?:arrived|did arrive|has arrived|showed up|turned up|came (?:today|yesterday|this morning)|got here|"
    r"was delivered)\b"
    r"|(?<![我你他她们們])到了|送到了|到货了|到貨了|收到货|收到貨|到咗",
    re.IGNORECASE,
)


# A rule for every time, which no single arrival or delivery ends ("以后发货别用中通").
_STANDING: Final = re.compile(
    r"\b(?:from now on|always|never|in future|going forward|every time|noted)\b"
    r"|以后|以後|今后|今後|每次|永远|永遠|一律|备注|備註|注记|註記",
    re.IGNORECASE,
)


# What an arrival ends: the wait for it ("still waiting on the 75", "hasn't shipped", "ETA Dec
# 9", "还没到", "预计周五送达") and what was owed ("the fee of 75 euros is waived").
_AWAITED: Final = re.compile(
    r"\b(?:wait(?:ing|ed)?|still|not (?:yet|here|arrived|shipped)|has ?n'?t|have ?n'?t|hasnt|expected|expect|"
    r"eta|due|will (?:arrive|ship|come)|ships?|shipping|dispatch\w*|on (?:its|the) way|late|delayed|missing|"
    # An obligation is owed until it arrives: a refund, a credit, a waived fee.
    r"refund\w*|credit\w*|waive\w*|reimburs\w*|compensat\w*|owed?)\b|退款|退回|退还|赔付|賠付|补偿|補償"
    r"|还没|還沒|没到|沒到|未到|在等|等着|等緊|预计|預計|什么时候到|几时到|幾時到|发货|發貨|送达|送達|延迟|延遲",
    re.IGNORECASE,
)


# A plan carried out: "搬好了", "装好了", "we're all moved in", "done and dusted".
_DONE: Final = re.compile(
    r"\b(?:all (?:moved|settled) in|moved in|settled in|we'?re in|all done|it'?s done|done and dusted|finished|"
    r"sorted now|all set)\b|(?:搬|装|裝|弄|办|辦|修|换|換|做|整)(?:好|完)了|搞定了|办妥了|弄妥了|搬咗",
    re.IGNORECASE,
)


def done(text: str) -> bool:
    """A report that a plan was carried out ("搬好了", "we're all moved in"): what it
    says lasts, it does not end when the plan would have."""
    return happened(text) or bool(_DONE.search(LABEL.sub("", text)))


# A Chinese pair holding one of these is grammar, not a thing ("嗰個", "唔要", "话唔").
_ZH_FUNCTION_CHAR: Final = re.compile(r"[了的个個那这這嗰啲咗佢唔嘅吧呢喇啦咁吗嗎啊呀]")


def retires_instruction(update: str, instruction: str) -> bool:
    """A user's update that puts a standing instruction's own value right ("晚上七點那個，
    其實八點以後比較好" after "以後打給我請在晚上七點以後"): it names what the instruction
    names (more than a number: "the 10 o'clock bus" is not "never call me before 10"), and
    the instruction has nothing left once the update's pieces are taken out."""
    if not updates(update):
        return False
    if _shares_distinctive(update, instruction, numbers=False):
        return retired_part(update, instruction, split=False) == ""
    # Or the same action or thing in plain words, said as a change: "you can call me any
    # time now" after "only call me after 6pm", "weekends are fine now" after "never
    # schedule anything on weekends".
    body = LABEL.sub("", update).lower()
    shared = _plain_words(update) & _plain_words(instruction)
    # Not a word the update says no to: "NO dont cancel it, i said keep it" keeps "if it
    # slips past mid december just cancel it".
    return any(
        not re.search(rf"\b(?:don'?t|do not|never|no|not)\s+{re.escape(w)}", body) for w in shared
    )


# Words of an instruction's wrapper or of politeness, which say nothing of what it is about.
_INSTRUCTION_WORDS: Final = word_set(
    "standing instruction user said please always never only want wants asks asked anything "
    "something everything thing things dont don't cant can't wont won't doesnt didnt isnt "
    "just really okay fine"
)


def _plain_words(text: str) -> set[str]:
    """The English content words of ``text`` in singular form, verbs included: an
    instruction is an action ("call", "schedule") as much as a thing."""
    return _content_words(text, nouns_only=False) - _INSTRUCTION_WORDS


# Characters of days and clock times: a pair of two ("下午", "到周", "十点") names no thing.
_TIME_CHARS: Final = frozenset(
    "一二三四五六七八九十两点點半午上下晚早号號日月年周週星期礼拜禮今明后後前昨天每到"
)


def _names_the_moved(update: str, old: str) -> bool:
    shared = {
        t for t in distinctive(update) & distinctive(old)
        if not t.isascii() and not _ZH_FUNCTION_CHAR.search(t) and not set(t) <= _TIME_CHARS
        and not _MOVE.search(t) and not _TIME_CHANGE.search(t)  # "改到" moves, names nothing
    }  # fmt: skip
    return bool(shared)


def _shares_distinctive(a: str, b: str, *, numbers: bool = True) -> bool:
    shared = distinctive(a) & distinctive(b)
    if not numbers:
        shared = {t for t in shared if not re.fullmatch(r"[\d:.]+(?:am|pm)?", t, re.IGNORECASE)}
    latin = {t for t in shared if t.isascii()}
    # Pairs of grammar ("嗰個", "個啦") tie any two Cantonese statements together.
    chinese = {t for t in shared - latin if not _ZH_FUNCTION_CHAR.search(t)}
    return bool(latin) or len(chinese) >= 2


# A clause that puts one thing in another's place: "I've switched to soy milk", "parcels go
# to the front desk instead", "we use Obsidian for notes these days". Narrower than ``updates``:
# "cancel the tech", "the drops stopped" end something without naming what replaces it.
_REPLACES: Final = re.compile(
    r"\b(?:switch(?:ed|ing)? (?:over )?to|instead|chang(?:ed|ing|e) (?:it |that |them )?to|replac\w+|"
    r"swapp?(?:ed|ing)? (?:\w+ )?for|no longer|any ?more|these days|from now on|"
    r"moved (?:it |them |that )?to|relocated to|(?:now|these days) (?:i |we )?(?:use|drink|eat|take|prefer|go|goes|want|have|do))\b",
    re.IGNORECASE,
)
# Words of the change itself, which name no thing: "switched to", "these days", "instead".
_CHANGE_WORDS: Final = word_set(
    "switch switching change changing instead anymore usually always never prefer these days "
    "going back started start stopped stop tried trying decided update updated replaced swapped"
)
# A word used as a verb: after a subject, "to", "please" or a modal ("I drop", "please send"),
# or before an object ("drop me to 500").
_AS_VERB: Final = (
    r"(?:\b(?:i|we|you|they|he|she|to|please|can|could|will|would|should|just|don'?t|let'?s)\s+{w}\b"
    r"|\b{w}\s+(?:me|us|it|them|him|her)\b)"
)


def _content_words(text: str, *, nouns_only: bool) -> set[str]:
    """The English content words of ``text`` in singular form, without the words of the
    change itself; ``nouns_only`` drops the ones used as verbs ("drop me to 500")."""
    body = LABEL.sub("", text).lower()
    return {
        singular(t)
        for t in salient_terms(text)
        if t.isascii()
        and t.isalpha()
        and not (nouns_only and re.search(_AS_VERB.format(w=re.escape(t)), body))
    } - _CHANGE_WORDS


def _things(clause: str) -> set[str]:
    """The English content words of ``clause`` used as nouns, in singular form."""
    return _content_words(clause, nouns_only=True)


def _same_thing(update: str, piece: str) -> bool:
    """A clause of ``update`` that replaces something and ``piece`` name the same thing in
    plain words ("milk", "parcel"): the last resort of ``retired_part``, for a change with
    no topic family, name or code in common with what it replaces."""
    _, parts = split_pieces(update)
    replacing = [q for q in parts if _REPLACES.search(LABEL.sub("", q))]
    return bool(set().union(*(_things(q) for q in replacing)) & _things(piece))


# Moving a time, not any change: "提前三天提醒我" moves nothing.
_MOVE: Final = re.compile(
    r"\b(?:instead|shift(?:ed|s)?|mov(?:ed|e|ing)|reschedul\w*|postpon\w*|push(?:ed)? (?:back|to)|"
    r"brought forward|bring (?:it )?forward|can we do|make it|change (?:it|that) to)\b"
    r"|改到|改成|改为|改在|换到|推迟|延后|延期|提前到|挪到|调到|移到|改天|改日"
    r"|改(?=[上下]午|晚上|早上|中午|明天|后天|周|星期|礼拜|\d)|" + PROPOSED_TIME,
    re.IGNORECASE,
)


# A change of when, said as such: "改时间了", "推迟到周五", "rescheduled to Tuesday", "the
# time changed". Not "we moved" (a home), which _MOVE also reads.
_TIME_CHANGE: Final = re.compile(
    r"改时间|改時間|换时间|換時間|时间改|時間改|时间变|時間變|改了时间|改咗时间|改咗時間|推迟|推遲|延后|延後|"
    r"提前到|(?:改|挪|调|調)到(?=\s*(?:\d|[一二三四五六七八九十两]|[上下]午|晚上|早上|中午|周|週|星期|礼拜|禮拜|明天|后天))|"
    r"\b(?:rescheduled|postponed|pushed (?:back|to)|brought forward|time (?:has )?changed|changed the time|"
    r"new time|moved (?:it |the \w+ )?to (?:\d|mon|tue|wed|thu|fri|sat|sun|tomorrow|next))\b"
    # "Kayla's birthday is dec 4 not the 14th": the day moved, not the gift.
    r"|" + CORRECTED_DAY,
    re.IGNORECASE,
)
# When a piece says: a clock time, or a day (a weekday, a date). Narrower than ``_DAY`` and
# ``DATE_OR_TIME``, which also read "next week" or a bare month as a time: a moved time
# retires only the pieces that name one of its own kind.
_CLOCK: Final = re.compile(
    r"\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\b(?:at|to|by|until|till) \d{1,2}\b(?![/.]\d)"
    r"|(?:\d{1,2}|[一二三四五六七八九十两]{1,3})\s*[点點](?:半|\d{1,2}分?)?",
    re.IGNORECASE,
)
_WHICH_DAY: Final = re.compile(
    r"周[一二三四五六日天]|週[一二三四五六日天]|星期.|礼拜.|禮拜.|\d{1,2}\s*[月/]\s*\d{1,2}|\d{1,2}\s*[日号號]|明天|后天|"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d"
    r"|\b\d{1,2}(?:st|nd|rd|th)\b|\btomorrow\b|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)


def _time_kinds(text: str) -> set[str]:
    body = LABEL.sub("", text)
    return {k for k, p in (("clock", _CLOCK), ("day", _WHICH_DAY)) if p.search(body)}


def _moves_a_time(update: str) -> bool:
    return bool(_TIME_CHANGE.search(LABEL.sub("", update)))


def happened(text: str) -> bool:
    """A report that something came or was settled ("the sofa came today but it's torn",
    "退款到了"): nothing a later "the 27th instead?" can move."""
    body = LABEL.sub("", text)
    return bool(_ARRIVED.search(body) or RESOLVED.search(body))


def moves_a_value(update: str) -> bool:
    """A change of a time or an amount ("can we do the 6th instead?", "改下午吧"), not any
    change ("这次别再出岔子"): what a subject-less update may change in the previous turn."""
    return bool(_MOVE.search(LABEL.sub("", update)))


def moves_a_date(update: str) -> bool:
    """A change whose only subject is a date ("Dates shifted, can we do Dec 12 to 15
    instead?", "改到周五吧"): it moves the latest dated plan."""
    body = LABEL.sub("", update)
    when = DATE_OR_TIME.search(body) or _DAY.search(body)
    if when is not None and (_OWN_MISTAKE.search(body) or _PROPOSED.search(body)):
        # "哦不对，我看错群消息了，是周四", "22 號我要返工，29 號得唔得？": the day put right
        # or offered anew, whatever else it names.
        return True
    return bool(_MOVE.search(body)) and not topics(body) and when is not None


_OWN_MISTAKE: Final = re.compile(OWN_MISTAKE, re.IGNORECASE)
_PROPOSED: Final = re.compile(PROPOSED_TIME)
_DAY: Final = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:today|tomorrow|tonight|next week)\b|"
    r"\bnext month\b|周[一二三四五六日天]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|明天|后天|下周|下週|下个?月|下個月",
    re.IGNORECASE,
)


def calendar_dates(text: str) -> set[str]:
    """The dates in ``text`` that name a month ("Dec 11", "12月11"), normalised: what ties
    a confirmation to the plan whose dates moved. Bare days ("the 5th") and clock times
    are too common to tie two memories together."""
    found = {re.sub(r"\s+", "", m.group()).lower() for m in DATE_OR_TIME.finditer(text)}
    return {d for d in found if re.search(r"\d", d) and ("月" in d or re.search(r"[a-z]{3}", d))}


def retired_dates(old: str) -> str | None:
    """``old`` without its dated pieces (``moves_a_date``): ``""`` when all of it is dated,
    ``None`` when it names no date."""
    prefix, pieces = split_pieces(old)
    dated = [p for p in pieces if DATE_OR_TIME.search(p) or _DAY.search(p)]
    if not dated:
        return None
    kept = [p for p in pieces if p not in dated and says_something(p)]
    if not kept:
        return ""
    return prefix + ("; ".join(kept) if all(p.isascii() for p in kept) else "；".join(kept))


# A piece that only points back at what was just said: "the 14.99 one", "that blue one",
# "39那个", "年费的那款".
_APPOSITIVE: Final = re.compile(
    r"^(?:the|that|this)(?:\s+[\w.$£€%/-]+){1,4}\s+one$"
    r"|^[^，,。；;\s]{1,10}?的?那(?:个|個|款|种|種|档|檔)$",
    re.IGNORECASE,
)


def retired_part(update: str, old: str, *, split: bool, topic_only: bool = False) -> str | None:
    """What of ``old`` stays true once ``update`` is said: ``None`` when ``update`` does not
    touch ``old`` at all, ``""`` when it retires all of it, else the text of the pieces it
    leaves (with ``old``'s prefix).

    A piece is retired when it shares a coarse topic with the update; only when no piece
    does, one that shares a name, code or number (``topic_only`` turns that off, for a
    slot value that names no change). A piece about someone else never answers for the
    user ("she can't have gluten" stays when the user turns vegan).

    Example:
        >>> retired_part("User said: workspace renamed to bloomlab",
        ...              "User said: we're on the Pro plan; workspace is studiobloom", split=True)
        "User said: we're on the Pro plan"
        >>> retired_part("User said: the 75 did arrive", "User said: still waiting on the 75", split=True)
        ''
    """
    prefix, pieces = split_pieces(old) if split else ("", [old])
    if not pieces:
        return None
    mine = _changed_topics(update)
    usable = [not _subjects_differ(update, p) for p in pieces]
    stale = [i for i, p in enumerate(pieces) if usable[i] and topics(p) & mine]
    if not stale and not topic_only:
        stale = [i for i, p in enumerate(pieces) if usable[i] and _shares_distinctive(update, p)]
        if not stale and any(usable) and _shares_distinctive(update, old):
            stale = list(range(len(pieces)))  # Chinese pairs spread over two pieces
        if not stale:
            # Last, a change that names the thing in plain words: "I've switched to soy milk"
            # ends "I drink oat milk in my coffee", "parcels go to the front desk now" ends
            # "send the parcels to my office".
            stale = [i for i, p in enumerate(pieces) if usable[i] and _same_thing(update, p)]
        if not stale and _moves_a_time(update):
            # "周会挪到周四上午十点了" ends "每周三下午两点跟王总开周会": a time moved, and the
            # thing moved named by one word pair that is no time of its own.
            stale = [i for i, p in enumerate(pieces) if usable[i] and _names_the_moved(update, p)]
        if _ARRIVED.search(LABEL.sub("", update)):
            # "Six of the Earl Grey tins arrived dented": the wait is over, the order stands
            # ("order WS-44817, 24 Assam, 12 Earl Grey").
            stale = [i for i in stale if _AWAITED.search(pieces[i])]
    if not stale:
        return None
    # The pieces on what the retired ones were about go with them ("still waiting on the
    # 75 euro fee; it was charged anyway" once "the 75 did arrive").
    gone = set().union(*(topics(pieces[i]) for i in stale)) - _BROAD
    stale += [i for i, p in enumerate(pieces) if i not in stale and usable[i] and topics(p) & gone]
    if DATE_OR_TIME.search(update) or _DAY.search(update):
        # A new date also retires the bare dates of what it changes ("out Nov 20 and back Dec
        # 10"), and, when it moves a time ("挪到周日下午"), every dated piece of it.
        moved = moves_a_value(update)
        stale += [
            i for i, p in enumerate(pieces)
            if i not in stale and (moved or not topics(p)) and (DATE_OR_TIME.search(p) or _DAY.search(p))
        ]  # fmt: skip
    kinds = _time_kinds(update) if _moves_a_time(update) else set()
    if kinds:
        # "朵朵幼儿园改时间了；现在八点半之前到就行": the time moved, not the class she is in;
        # in what the update is about, the pieces with a time of the same kind go.
        timed = [i for i, p in enumerate(pieces) if usable[i] and kinds & _time_kinds(p)]
        # A piece of the update that changes something else keeps its own reach: "换 team
        # 了；老板换成 Grace，1:1 也改到周四下午四点" ends the team and the boss as well.
        _, parts = split_pieces(update)
        rest = (
            set().union(*(topics(q) for q in parts if updates(q) and not _moves_a_time(q))) - _BROAD
        )
        stale = timed + [i for i in stale if i not in timed and topics(pieces[i]) & rest]
    # An appositive names nothing of its own: it goes with the piece it follows ("I pay for
    # ShopPlus monthly; the 14.99 one", "我办的是月卡；39那个").
    stale += [i for i in range(1, len(pieces)) if i - 1 in stale and _APPOSITIVE.match(pieces[i])]
    # Sticky pieces (an allergy, who the user travels with) go only when the update is on them.
    stale = [i for i in stale if not _blocked(update, pieces[i])]
    if _ARRIVED.search(LABEL.sub("", update)):
        # An arrival ends a wait, never a standing rule ("以后发货别用中通", "客服承诺：已为您
        # 备注：不使用中通", "always leave parcels with the concierge").
        stale = [i for i in stale if not _STANDING.search(pieces[i])]
    if not stale:
        return None
    kept = [p for i, p in enumerate(pieces) if i not in stale and says_something(p)]
    return join_pieces(prefix, kept) if kept else ""


# Capitalised words of a date, which name no person ("5 May", "Friday").
_CALENDAR_NAMES: Final = word_set(
    "January February March April May June July August September October November December "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Monday Tuesday Wednesday Thursday Friday "
    "Saturday Sunday"
)
# One more of the same kind, not the same one moved: "another check-up on Dec 20", "再约一次".
_ANOTHER: Final = re.compile(
    r"\b(?:another|also|second|next one|as well)\b|再|又|另外|第二", re.IGNORECASE
)


def _moves_calendar_date(update: str, old: str) -> bool:
    """``update`` gives the thing ``old`` dates (same name, Chinese word pair or English
    noun, dates aside) another calendar date: "家长会是11月12日下午两点" after "11月11日下午三点开
    家长会". A question asks and another of the same kind adds: neither moves it."""
    new_days, old_days = calendar_dates(update), calendar_dates(old)
    if not new_days or not old_days or new_days & old_days:
        return False
    body = LABEL.sub("", update).strip()
    if body.endswith(("?", "？", "吗", "嗎")) or _ANOTHER.search(body):
        return False
    # One person's date: "my birthday is 5 May" leaves "my mum's birthday is 3 May", "Ben's
    # birthday" leaves Ana's.
    names, old_names = _names(update) - _CALENDAR_NAMES, _names(old) - _CALENDAR_NAMES
    if _kin_of(update) != _kin_of(old) or ((names or old_names) and not names & old_names):
        return False
    return _shares_distinctive(update, old, numbers=False) or bool(_things(update) & _things(old))


def moved_part(update: str, old: str, *, split: bool) -> str | None:
    """What of ``old`` stays once ``update`` counts one of its things again with another
    number (``_quantity.moves_quantity``; same reply shape as ``retired_part``). Only the
    pieces about the same person go ("dad's Glycomet" moves dad's dose, not mum's)."""
    prefix, pieces = split_pieces(old) if split else ("", [old])
    _, parts = split_pieces(update)
    stale = [
        i
        for i, p in enumerate(pieces)
        if any(
            (moves_quantity(q, p) or _moves_calendar_date(q, p))
            and not _subjects_differ(q, p)
            and not _someone_else(q, p)
            for q in parts
        )
    ]
    if not stale:
        return None
    kept = [p for i, p in enumerate(pieces) if i not in stale and says_something(p)]
    return join_pieces(prefix, kept) if kept else ""


def continued_part(update: str, retired: str, evidence: str) -> str | None:
    """What stays of an evidence turn said in the same message as a value ``update`` ended,
    once the leading pieces that go on about that value (on its topic, with no subject of
    their own) go with it ("My mum is on warfarin, 5mg every evening": "5mg every evening"
    goes when the GP switches her drug). ``None``: it does not go on about it.

    A piece with a subject of its own, an ask, or a sticky piece the update is not about
    stays, and so does all after it. A piece is read with the value it went on about
    (``retired``): "5mg every evening" is mum's dose, which the switch is about."""
    prefix, pieces = split_pieces(evidence)
    # Only a piece on the value's own topic: the pieces do not say where in the message the
    # value stood ("换39码吧" came before "我是月卡会员" and is about the shoes).
    about = topics(retired) - _BROAD
    n = 0
    while n < len(pieces) and not (
        not topics(pieces[n]) & about
        or has_own_subject(pieces[n])
        or opens_an_ask(pieces[n])
        or _blocked(update, f"{LABEL.sub('', retired)} {pieces[n]}")
    ):
        n += 1
    if n == 0:
        return None
    kept = [p for p in pieces[n:] if says_something(p)]
    return join_pieces(prefix, kept) if kept else ""


# A generic slot value as the rules write it: "User's office is Fleet Street", "用户的车是特斯拉".
_ATTRIBUTE_VALUE: Final = re.compile(
    r"^User's ([a-z][a-z' -]{1,30}?) is (.+)$|^用户的([\u4e00-\u9fff]{1,8}?)是(.+)$"
)


def restated_part(value: str, old: str, *, split: bool) -> str | None:
    """What of ``old`` stays once ``value`` ("User's office is on Fleet Street", a generic
    "my X is Y" slot) says the same X again with another value: the pieces that say what X
    is ("our office is near Baker Street", "车是比亚迪的") go, someone else's X stays ("my
    sister's office is ..."). Same reply shape as ``retired_part``."""
    m = _ATTRIBUTE_VALUE.match(value)
    if m is None:
        return None
    attribute, said = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    if attribute.isascii():
        states = re.compile(
            rf"\b(?:my|our|the) {re.escape(attribute)}s? (?:is|are|was|'s)\b", re.IGNORECASE
        )
    else:
        states = re.compile(
            rf"(?<![他她佢])(?:我|我们|我們)?(?:的)?{re.escape(attribute)}(?:是|在|叫)"
        )
    prefix, pieces = split_pieces(old) if split else ("", [old])
    stale = [
        i
        for i, p in enumerate(pieces)
        if states.search(LABEL.sub("", p))
        and said.lower() not in p.lower()
        and not _blocked(value, p)
        and not _kin_of(p)
    ]
    if not stale:
        return None
    kept = [p for i, p in enumerate(pieces) if i not in stale and says_something(p)]
    return join_pieces(prefix, kept) if kept else ""


def _someone_else(update: str, piece: str) -> bool:
    """``_blocked``, except that an update naming no one but the piece's own thing (a drug,
    a plan) is about the piece's person: "医生说美多芭改成每次一片了" after "我爸美多芭每次吃半片"."""
    if not _kin_of(update) and _shares_distinctive(update, piece, numbers=False):
        return bool(_legs(update) and _legs(piece) and not _legs(update) & _legs(piece))
    return _blocked(update, piece)


def join_pieces(prefix: str, pieces: list[str]) -> str:
    """``split_pieces`` undone: "User said: A; B" (or "用户说：A；B")."""
    return prefix + ("; ".join(pieces) if all(p.isascii() for p in pieces) else "；".join(pieces))


def has_own_subject(piece: str) -> bool:
    """The piece says who it is about: the user ("I ...", "我在…"), not a report of what was
    said ("我说过…") nor a clause going on about the one before ("成了的话…")."""
    return bool(_SELF_SUBJECT.match(piece)) and not _SAYING.match(piece)


def opens_an_ask(piece: str) -> bool:
    """The piece is a request of its own ("remind me to order by dec 7", "提醒我一下"), so
    it has no subject but does not go on about the clause before it either."""
    return bool(_ASKS_FOR_SOMETHING.match(piece))


_ASKS_FOR_SOMETHING: Final = re.compile(
    r"^(?:please|pls|remind|tell|send|book|call|text|email|ring|make|let|help|keep|check|"
    r"can|could|would|will|don'?t|do not|提醒|帮|幫|请|請|麻烦|麻煩|记得|記得|别忘|別忘|唔该|唔該|"
    r"记住|記住|给我|俾我|告诉|通知|发|發|打)",
    re.IGNORECASE,
)


# Two readings of "the user reports what was said". ``_SAYING``: a piece that opens with
# "我说…", "I told…" is not the user's own news. ``REPORTED_SAYING``, wider (a time word
# first, "上次说…", "跟你们讲…"): in a turn that admits a mistake, the statement it quotes.
_SAYING: Final = re.compile(
    r"^(?:i (?:said|told|mentioned))\b|^我.{0,2}(?:说|讲|提)", re.IGNORECASE
)
REPORTED_SAYING: Final = re.compile(
    r"^(?:对了|對了|还有|還有|另外|and|also|so)?[，,\s]*(?:上次|之前|以前|刚才|剛才)?(?:我)?(?:跟你们?|跟你們)?"
    r"(?:说|說|讲|講|提)(?:过|過|的)?(?=.)"
    r"|^(?:(?:and|also|so|oh)[,\s]+)?(?:i|we)\s+(?:told you|said|mentioned)\b",
    re.IGNORECASE,
)
# The user saying they got something wrong before ("我说错了", "I was wrong"): what they
# reported of it ("上次说我对 aspirin 过敏") is then no new fact.
_MISTAKE: Final = re.compile(
    r"说错|講錯|讲错|搞错|搞錯|弄错|弄錯|记错|記錯|错了|錯了|\b(?:i was wrong|got it wrong|i misspoke|my mistake|"
    r"my bad|i mixed (?:it|them) up)\b",
    re.IGNORECASE,
)


def quotes_a_mistake(text: str) -> bool:
    """Does the text say the user got something wrong before ("我说错了", "I was wrong")?"""
    return bool(_MISTAKE.search(text))


# --- a value corrected inside one message ------------------------------------------

# "wait no, 10:15", "sorry, I mean Thursday", "不对，周四", "哦不，是5个人".
_SELF_CORRECTION: Final = re.compile(
    r"^(?:(?:wait|no|nope|sorry|oops|actually|i mean|i meant|correction|make that|or rather|rather|scratch that)"
    r"[,!.:\s]*)+(?:it'?s\s+|make it\s+)?(.*)$"
    r"|^(?:(?:不对|不是|说错了|我说错了|哦不|啊不|呃|应该是|我是说|更正)[，,！!：:\s]*)+(?:是)?(.*)$",
    re.IGNORECASE,
)
# A value a correction swaps: a clock time, a date, a weekday, an amount.
_VALUE: Final = re.compile(
    r"\d{1,2}[:：.]\d{2}(?:\s?(?:am|pm))?|\d{1,2}\s?(?:am|pm)\b|(?:\d{1,2}\s*(?:月|号|號|日|点|點)\s*)+(?:半)?"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|(?:周|星期|礼拜)[一二三四五六日天]"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)\b|[$¥£€]?\d+(?:[.,]\d+)?",
    re.IGNORECASE,
)


def fold_self_corrections(pieces: list[str]) -> list[str]:
    """A value corrected in the same message keeps only the last one: "moved standup to 10"
    + "wait no, 10:15" -> "moved standup to 10:15" (the correction replaces the last value
    of the piece before it). A correction that is not a bare value is left as it is.

    Example:
        >>> fold_self_corrections(["we moved standup to 10", "wait no, 10:15"])
        ['we moved standup to 10:15']
        >>> fold_self_corrections(["瑜伽改到周三", "不对", "周四"])
        ['瑜伽改到周四']
    """
    inner = [_fold_clauses(p) for p in pieces]
    return _fold(inner)


def _fold_clauses(piece: str) -> str:
    """The same inside one piece: "moved standup to 10, wait no, 10:15"."""
    clauses = re.split(r"\s*[,，]\s*", piece)
    if len(clauses) < 2:
        return piece
    folded = _fold(clauses)
    if len(folded) == len(clauses):
        return piece
    return ("，" if CJK_CHAR.search(piece) else ", ").join(folded)


def _fold(pieces: list[str]) -> list[str]:
    out: list[str] = []
    marker: str | None = None  # a bare "不对" / "wait no": the next piece holds the value
    for piece in pieces:
        m = _SELF_CORRECTION.match(piece.strip())
        value = (next((g for g in m.groups() if g is not None), "") if m else piece).strip(
            " ,.!，。"
        )
        if m and not value:
            if marker is not None:
                out.append(marker)
            marker = piece
            continue
        values = list(_VALUE.finditer(out[-1])) if out else []
        if m or marker is not None:
            value = re.sub(r"^(?:是|就是|it'?s|make it)\s*", "", value, flags=re.IGNORECASE)
        if (m or marker is not None) and values and _VALUE.fullmatch(value):
            last = values[-1]
            out[-1] = out[-1][: last.start()] + value + out[-1][last.end() :]
            marker = None
            continue
        if marker is not None:
            out.append(marker)
            marker = None
        out.append(piece)
    if marker is not None:
        out.append(marker)
    return out


# --- what a change keeps --------------------------------------------------------

# "由沙田搬咗去將軍澳", "从京东跳到小红书", "從月費轉去年費": the source of a change.
_FROM_OLD_ZH: Final = re.compile(
    # (not a time: "从明天开始改成每天跑步" keeps its start)
    r"(?:由|从|從)(?![^，,；;。]{0,12}?(?:开始|開始|起))(?!明天|今天|后天|後天|下|这|這|本|现在|現在|今|以后|以後|\d|[一二三四五六七八九十]+[月号號日点點])"
    r"[^，,；;。由从從]{1,12}?((?:搬|转|轉|换|換|跳|调|調|改|升|降)(?:咗|了|家)?(?:去|到|成|为|為|咗去|返)?)"
)
_FROM_OLD_EN: Final = re.compile(
    r"\b((?:moved|moving|switched|switching|changed|changing|transferr?(?:ed|ing)|upgraded|downgraded|went|"
    r"swapped|relocated)(?:\s+(?:me|us|him|her|them|it))?)\s+from\s+[^,;]{1,30}?\s+(?=to\b|into\b)",
    re.IGNORECASE,
)


def without_old_value(text: str) -> str:
    """A change, once it has retired what it changed, keeps only where it went: "由沙田搬咗去
    將軍澳" -> "搬咗去將軍澳", "switched me from atenolol to bisoprolol" -> "switched me to
    bisoprolol". The old value stays in the history of the memory it superseded, never in
    the current one (reconcile calls this after matching, which needs the old name).

    Example:
        >>> without_old_value("User said: we moved from Leeds to York in June")
        'User said: we moved to York in June'
        >>> without_old_value("用户说：从明天开始改成每天跑步")
        '用户说：从明天开始改成每天跑步'
    """
    return _FROM_OLD_EN.sub(r"\1 ", _FROM_OLD_ZH.sub(r"\1", text))
