"""Text plumbing of the rules: splitting a turn into clauses, fillers, third person.

A user turn is split twice:

- into **sentences** at ``. ! ? ; 。！？；`` and new lines, but never at a
  decimal point or a thousands separator ("2.5万", "$1,299.99", "3.5 stars"
  stay whole);
- each sentence into **segments** at commas and clause connectors ("and I",
  "but", "so", "by the way", "而且", "另外", "顺便说一下"), so a fact in the middle
  of a long sentence is matched on its own and its value does not run on into
  the next clause. English commas split only before a new clause ("I live in
  Paris, France" stays one segment); Chinese "，" always splits, and a piece
  that is only a wrapper ("from now on", "以后", "记住") or only a time ("到周五")
  is glued to the segment it qualifies.

Cantonese is matched through a small Mandarin normalisation (唔 -> 不, 冇 -> 没有,
钟意 -> 喜欢, 食 -> 吃 ...) applied only when Cantonese markers are present.

Example:
    >>> sentences("预算2.5万。I paid $1,299.99 for it. Fine")
    ['预算2.5万', 'I paid $1,299.99 for it', 'Fine']
    >>> segments("Hi, my name is Ann and I need help with my order")
    ['Hi', 'my name is Ann', 'I need help with my order']
    >>> segments("以后，叫我老王")
    ['以后，叫我老王']
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

from langgraph_memory._redact_text import PLACEHOLDER_PATTERN
from langgraph_memory.nodes._rules_time import bound_of, moment_of

CJK: Final = re.compile(r"[\u3400-\u9fff]")
TRIM: Final = " \t,，:：、.。!！~…-—"

# A sentence ends at ! ? ; (both widths), at 。, at a new line, and at a "." that
# is not between two digits (so 2.5 / 1,299.99 / v1.2 stay whole).
# A full stop ends a sentence, except inside a number ("2.5") or after a title or a
# short abbreviation ("Dr. Patel", "St. Kilda", "e.g. tea", "No. 5", "Tue."... is kept).
_SENTENCE_END: Final = re.compile(
    r"(?<=[!?;。！？；])\s*"
    r"|(?<!\b(?:Dr|Mr|Ms|St|Jr|Sr|No|vs|Mt|Fr|Co)\.)(?<!\bMrs\.)(?<!\bProf\.)(?<!\be\.g\.)(?<!\bi\.e\.)"
    # Nor inside a placeholder: "[EMAIL:@outlook.com]".
    r"(?<=\.)(?!\d)(?![^\[\]\s]*\])\s*|\n+"
)

# An English comma splits only before something that starts a new clause.
_EN_CLAUSE_START: Final = (
    r"(?:and\s+|but\s+|so\s+|also\s+|plus\s+|then\s+|oh\s+|btw\s+|by the way\s+)?"
    r"(?:i\b|i'|my\b|we\b|we'|our\b|me\b|please\b|pls\b|can you\b|could you\b|would you\b|"
    r"don'?t\b|do not\b|never\b|always\b|call me\b|it'?s\b|it is\b|that'?s\b|"
    r"actually\b|btw\b|by the way\b|also\b|and\b|but\b|so\b|oh\b|remember\b|from now on\b|"
    r"forget\b|(?:can|could) (?:delete|remove|forget|erase|wipe|clear)\b|scratch that\b|make it\b|make that\b|change it\b|what\b|how\b|when\b|where\b|"
    r"which\b|who\b|why\b|is\b|are\b|will\b|thanks\b|thank you\b|ok\b|okay\b|one more thing\b|"
    r"the\b|this\b|there\b|you\b|he\b|she\b|they\b|his\b|her\b|their\b)"
)
_EN_SPLIT: Final = re.compile(
    rf",\s*(?={_EN_CLAUSE_START})"
    r"|\s+(?:and|but|so|because|since|plus|while|although|though)\s+(?=(?:i|my|we|our|please|"
    r"don'?t|do not|never|always|call me|also|it)\b)"
    r"|\s*\b(?:by the way|btw|oh and)\b[,:]?\s+|\s*—\s*"
    # "also" opens a clause, except inside one: "I am also allergic to latex", "we also have a dog".
    r"|(?<!\bam)(?<!\bis)(?<!\bare)(?<!\bwas)(?<!\bwere)(?<!'m)(?<!'s)(?<!'re)(?<!\bi)(?<!\bwe)"
    r"(?<!\bhe)(?<!\bshe)(?<!\bthey)(?<!\bit)(?<![\s,;])\s+also\b[,:]?\s+|^also\b[,:]?\s+"
    # A spaced dash breaks a clause, but not a range ("10/20 - 11/10", "Oct 20 - Nov 3").
    r"|(?<!\d)\s+-\s+|(?<=\d)\s+-\s+(?!\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)",
    re.IGNORECASE,
)
_ZH_SPLIT: Final = re.compile(
    # An ASCII comma between digits is a thousands separator ("¥30,000"), not a break.
    r"[，、]\s*|(?<!\d),\s*|,(?!\d{3}(?!\d))\s*|(?:而且|但是|不过|所以|因为|然后|另外|还有就是|还有|顺便说一下|顺便说|顺便提一下|顺便|对了|话说)"
    r"[，,：:]?"
)
# A piece that only introduces the next one.
_WRAPPER_ONLY: Final = re.compile(
    r"^(?:from now on|going forward|in the future|henceforth|remember|please remember|"
    r"note|keep in mind|actually|correction|sorry|wait|no|scratch that|i mean|i meant|"
    r"以后|今后|从现在开始|从今以后|往后|记住|记得|请记住|你要记住|别忘了|其实|更正|更正一下|纠正一下|"
    r"不对|说错了|我说错了|哦|对了|另外|顺便|还有|好的|嗯|那个|请|麻烦你|拜托)$",
    re.IGNORECASE,
)
_FILLERS: Final = re.compile(
    r"^(?:(?:oh|ah|um|uh|hmm|well|ok|okay|so|also|and|plus|btw|by the way|anyway|hey|hi|hello|yo|hiya|"
    r"one more thing|another thing|just so you know|fyi|just fyi|for the record|for your info|"
    r"as i said|like i said|you know)\b[,:!]?\s*)+"
    r"|^(?:(?:哦|噢|嗯|啊|呃|那个|对了|另外|还有|顺便说一下|顺便|话说|跟你说|告诉你|提醒一下|"
    r"说一下|补充一下|你好|您好|嗨|哈喽|话你知|同你讲|讲你知|早晨|早上好)[，,：:！!]?\s*)+",
    re.IGNORECASE,
)
# Cantonese markers; only then is the Mandarin normalisation applied.
_CANTONESE: Final = re.compile(r"唔|冇|嘅|咗|係|佢|啲|钟意|鍾意|乜嘢|点解|咁|食|畀|俾|嘢")
_CANTONESE_MAP: Final = (
    ("唔好", "不要"), ("唔使", "不用"), ("唔该", "请"), ("唔", "不"), ("冇", "没有"),
    ("钟意", "喜欢"), ("鍾意", "喜欢"), ("食", "吃"), ("係", "是"), ("系", "是"),
    ("佢", "他"), ("嘅", "的"), ("咗", "了"), ("啲", "些"), ("畀", "给"), ("俾", "给"),
    ("嘢", "东西"), ("住喺", "住在"), ("喺", "在"),
)  # fmt: skip


def word_set(text: str) -> frozenset[str]:
    """A word list written as one string: ``word_set("a an the")``."""
    return frozenset(text.split())


def has_cjk(text: str) -> bool:
    return bool(CJK.search(text))


def slug(text: str) -> str:
    """A key fragment: lower case, words joined by '_', CJK kept."""
    words = re.findall(r"[\w\u3400-\u9fff]+", text.lower())
    return "_".join(words)[:40]


def sentence_case(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(TRIM)
    return text[:1].upper() + text[1:] if text else text


# Traditional characters the rules meet most, one for one (so positions still line up
# with the user's own text, ``restore_script``).
_TRADITIONAL: Final = dict(
    zip(
        "們請說話電後發語體過約訂號碼單門買賣車東機會時間點這個麼來對為與員帳錢費處給謝還沒關覆週禮開從現寫歡"
        "實際聯繫應該讓歲醫藥貓養場區線網頁視聽讀書學習業務產價據遞貨運輸換變辦預簡繁稱呼記得別"
        "長裡裏嗎確認額華寶啟動愛喜較陳黃劉趙鄭吳張楊楊劃週歷內隻條種該將專門題問幫難點燈鐘頭髮飯麵雞魚蝦蟲藥療診護臉腳"
        "當刪邊錄檔聽見轉錯舊壞爛寬帶樓戶郵",
        "们请说话电后发语体过约订号码单门买卖车东机会时间点这个么来对为与员账钱费处给谢还没关复周礼开从现写欢"
        "实际联系应该让岁医药猫养场区线网页视听读书学习业务产价据递货运输换变办预简繁称呼记得别"
        "长里里吗确认额华宝启动爱喜较陈黄刘赵郑吴张杨杨划周历内只条种该将专门题问帮难点灯钟头发饭面鸡鱼虾虫药疗诊护脸脚"
        "当删边录档听见转错旧坏烂宽带楼户邮",
        strict=True,
    )
)
_TO_SIMPLIFIED: Final = str.maketrans(_TRADITIONAL)


def to_simplified(text: str) -> str:
    """Traditional characters as simplified, one for one ("請用繁體" -> "请用繁体")."""
    return text.translate(_TO_SIMPLIFIED)


def restore_script(out: str, matched_on: str, original: str) -> str:
    """Put the user's own (traditional) characters back into a rule's output.

    ``matched_on`` is ``original`` after ``to_simplified`` (same length); every run of
    ``out`` copied from it is replaced by the user's characters at the same place.

    Example:
        >>> restore_script("用户希望用繁体中文交流", "回复请用繁体中文", "回覆請用繁體中文")
        '用户希望用繁體中文交流'
    """
    if matched_on == original or len(matched_on) != len(original):
        return out
    result, i = [], 0
    while i < len(out):
        best = 0
        for j in range(len(out), i + 1, -1):  # longest copied run of 2+ characters
            at = matched_on.find(out[i:j])
            if at >= 0:
                best = j - i
                result.append(original[at : at + best])
                break
        if best:
            i += best
        else:
            result.append(out[i])
            i += 1
    return "".join(result)


def normalize_dialect(text: str) -> str:
    """Cantonese spelled as Mandarin for matching ("我唔食牛肉" -> "我不吃牛肉").

    Example:
        >>> normalize_dialect("我唔食牛肉")
        '我不吃牛肉'
        >>> normalize_dialect("我不吃牛肉")
        '我不吃牛肉'
    """
    text = to_simplified(text)
    if not _CANTONESE.search(text):
        return text
    for cantonese, mandarin in _CANTONESE_MAP:
        text = text.replace(cantonese, mandarin)
    return text


# "青霉素过敏的是我爸" (the one allergic to penicillin is my dad): who comes first again,
# "我爸青霉素过敏", so the fact is his and not the user's.
_CLEFT: Final = re.compile(r"^([^，,。；;]{1,12}?)的(?:是|系|係)(我(?:的)?[\u4e00-\u9fff]{0,3})$")


def uncleft(segment: str) -> str:
    """ "X的是我Y" -> "我Y X" (``_CLEFT``); any other segment as it is.

    Example:
        >>> uncleft("青霉素过敏的是我爸")
        '我爸青霉素过敏'
    """
    m = _CLEFT.match(segment)
    return f"{m.group(2)}{m.group(1)}" if m else segment


# Who the fact is about, said as a cleft: "I'm not the one allergic to penicillin, that's my
# dad", "it's my wife who's vegan", "my son's the one with the nut allergy", "I'm not
# diabetic, my mum is". ``_REL`` is a family word after "my".
_REL: Final = (
    r"my (?:mum|mom|mother|dad|father|wife|husband|partner|son|daughter|kid|child|baby|sister|brother|"
    r"grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|niece|nephew|fianc[ée]e?|boyfriend|girlfriend|"
    r"flatmate|roommate)"
)
_EN_CLEFTS: Final = (
    # "I'm not the one (who's) allergic to X, that's my dad" -> "my dad is allergic to X"
    (
        re.compile(
            rf"^(?:no,?\s+)?i'?m not the one(?: who'?s| who is| that'?s)?\s+(.+?)[,;]?\s+(?:that'?s|it'?s|that is|it is)\s+({_REL})$",
            re.IGNORECASE,
        ),
        "{2} is {1}",
    ),
    # "it's my wife who's vegan (, not me)" -> "my wife is vegan"
    (
        re.compile(
            rf"^(?:no,?\s+)?(?:it'?s|it is)\s+({_REL})\s+(?:who'?s|who is|that'?s|that is)\s+(.+?)(?:[,;]?\s+not me)?$",
            re.IGNORECASE,
        ),
        "{1} is {2}",
    ),
    # "my dad's the one with asthma", "my wife's the vegetarian, not me"
    (
        re.compile(
            rf"^({_REL})(?:'s| is)\s+the (?:one (?:who'?s |who is |that'?s )?)?(.+?)(?:[,;]?\s+not me)?$",
            re.IGNORECASE,
        ),
        "{1} is {2}",
    ),
    # "the one with the nut allergy is my daughter"
    (
        re.compile(rf"^the one (?:with|who has)\s+(.+?)\s+is\s+({_REL})$", re.IGNORECASE),
        "{2} has {1}",
    ),
    # "I'm not diabetic, my mum is"
    (
        re.compile(rf"^i'?m not\s+(.+?)[,;]\s+({_REL})\s+is$", re.IGNORECASE),
        "{2} is {1}",
    ),
)


def uncleft_en(sentence: str) -> str:
    """An English cleft put plainly, so the fact lands on the person it is about.

    Example:
        >>> uncleft_en("I'm not the one allergic to penicillin, that's my dad")
        'my dad is allergic to penicillin'
        >>> uncleft_en("My wife's the vegetarian, not me")
        'My wife is vegetarian'
    """
    body = sentence.strip(TRIM + " .!")
    for pattern, shape in _EN_CLEFTS:
        m = pattern.match(body)
        if m:
            what = {1: m.group(1), 2: m.group(2)}
            # "the vegetarian" / "the one with ..." named a role: the role is what they are.
            out = shape.format("", *what.values())
            out = re.sub(r"\bis with\b", "has", out)  # "my dad's the one with asthma"
            out = re.sub(r"\bhas (?:the |a |an )?([\w ]+?) allergy$", r"is allergic to \1", out)
            return re.sub(r"\bis the (?=vegetarian|vegan|diabetic|coeliac|celiac)", "is ", out)
    return sentence


def strip_fillers(segment: str) -> str:
    """ "Oh and by the way, my name is Ann" -> "my name is Ann"."""
    return _FILLERS.sub("", segment.strip(TRIM)).strip(TRIM)


def sentences(text: str) -> list[str]:
    out = []
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip(TRIM) if piece else ""
        if piece:
            out.append(piece)
    return out


_TIME_WORDS: Final = re.compile(
    r"\d+|\b(?:until|till|til|from|on|by|through|thru|next|this|the|end|of|week|weekend|month|year|"
    r"morning|afternoon|evening|night|tomorrow|today|tonight|back|returning|at|in|"
    r"mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
    r"[月日号周星期礼拜天一二三四五六七八九十今明后下上这本个早晚午点半]|回来|返回|回国|入住|退房|之前|以前|为止|直到|一直|到|至|从|截至",
    re.IGNORECASE,
)


def _time_only(piece: str) -> bool:
    """ "到周五", "next Friday", "12号回来": a time that qualifies its neighbour."""
    if len(piece) > 24 or re.search(r"\b(?:i|my|we|our)\b|我", piece, re.IGNORECASE):
        return False
    if len(_TIME_WORDS.sub("", piece).strip(TRIM + " ")) > 2:
        return False
    if _CLOCK_ONLY.fullmatch(piece.strip(TRIM + " ")):
        return True  # "下午两点", "at 3:30pm": the time of the clause before
    probe = datetime(2026, 1, 5, tzinfo=UTC)  # any moment: only "is there a time?" matters
    return bound_of(piece, probe) is not None or moment_of(piece, probe) is not None


_CLOCK_ONLY: Final = re.compile(
    r"(?:上午|下午|晚上|早上|中午|傍晚|凌晨)?[一二三四五六七八九十两\d]{1,3}(?:点|點)(?:半|钟|\d{1,2}分?)?"
    r"(?:左右|前|后|以后|之前)?"
    r"|(?:at |by |around |from )?\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)"
    r"(?:\s*(?:-|to|till|until)\s*\d{1,2}(?::\d{2})?\s*(?:am|pm)?)?",
    re.IGNORECASE,
)


def cjk_pairs(text: str) -> set[str]:
    """Every pair of adjacent Chinese characters: the word-ish units the rules compare on.

    Example:
        >>> sorted(cjk_pairs("备用号码"))
        ['号码', '备用', '用号']
    """
    return {
        run[i : i + 2]
        for run in re.findall(r"[\u3400-\u9fff]{2,}", text)
        for i in range(len(run) - 1)
    }


def is_wrapper(piece: str) -> bool:
    """A piece that only introduces another ("from now on", "remember", "以后")."""
    return bool(_WRAPPER_ONLY.match(piece.strip(TRIM + " ")))


def _amount_only(piece: str) -> bool:
    from langgraph_memory.nodes.rules._business import AMOUNT_ONLY  # the rules import _text

    return bool(re.search(r"\d", piece)) and bool(AMOUNT_ONLY.match(piece))


def _placeholder_only(piece: str) -> bool:
    """A masked identifier alone ("[EMAIL:@ridgeline-growth.io]"): the value of the label
    before it ("new work email for calendar invites btw: ...")."""
    return re.fullmatch(rf"\s*(?:{PLACEHOLDER_PATTERN}\s*)+", piece) is not None


def segments(sentence: str) -> list[str]:
    """The clause-sized pieces of one sentence (see the module docstring)."""
    splitter = _ZH_SPLIT if has_cjk(sentence) else _EN_SPLIT
    raw = [p.strip(TRIM) for p in splitter.split(sentence)]
    pieces = [p for p in raw if p]
    out: list[str] = []
    carry = ""
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        if not last and (_WRAPPER_ONLY.match(piece) or _time_only(piece)):
            carry = f"{carry}{piece}，" if has_cjk(piece) else f"{carry}{piece}, "
            continue
        if out and carry == "" and (_amount_only(piece) or _placeholder_only(piece)):
            # "Budget 调高一点, S$2.1 million": the amount belongs to the clause before.
            out[-1] = f"{out[-1]}，{piece}" if has_cjk(out[-1]) else f"{out[-1]}, {piece}"
            continue
        if last and carry == "" and out and _time_only(piece):
            out[-1] = f"{out[-1]}，{piece}" if has_cjk(piece) else f"{out[-1]}, {piece}"
            continue
        out.append(carry + piece)
        carry = ""
    if carry:
        out.append(carry.strip(TRIM))
    return out


_EN_VERBS_3RD: Final = {
    "like": "likes", "love": "loves", "hate": "hates", "prefer": "prefers",
    "want": "wants", "need": "needs", "live": "lives", "work": "works",
    "eat": "eats", "drink": "drinks", "use": "uses", "have": "has", "do": "does",
    "don't": "doesn't", "own": "owns", "enjoy": "enjoys", "dislike": "dislikes",
}  # fmt: skip
ADVERBS: Final = (
    "really|also|usually|always|often|sometimes|normally|still|only|just|mostly|generally|"
    "ever|never|already|actually|even|rarely|seldom|hardly"
)


# Modals and common past tenses take no "s".
_NO_S: Final = word_set(
    "will can could would should must may might shall went had got made took came saw "
    "told said bought paid sent left lost found gave kept met ran sold spent thought "
    "wrote flew ate drank was were did"
)


def third_person_verb(verb: str) -> str:
    """``take`` -> ``takes``, ``watch`` -> ``watches``, ``fly`` -> ``flies``."""
    lowered = verb.lower()
    if lowered in _EN_VERBS_3RD:
        return _EN_VERBS_3RD[lowered]
    if not verb.isalpha() or lowered in _NO_S or lowered.endswith("ed"):
        return verb
    if lowered.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 2 and lowered.endswith("y") and lowered[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def to_third_person(clause: str) -> str:
    """Rewrite a first-person clause about the user in the third person.

    Example:
        >>> to_third_person("I like green tea and my cat")
        "user likes green tea and user's cat"
        >>> to_third_person("I usually take my coffee black")
        "user usually takes user's coffee black"
        >>> to_third_person("我的猫叫咪咪")
        '用户的猫叫咪咪'
    """
    if has_cjk(clause):
        for we in ("我们", "我們", "我哋", "咱们"):
            clause = clause.replace(we, "用户和其他人")
        return clause.replace("我", "用户")
    out = re.sub(r"\bI(?:'m| am)\b", "user is", clause)
    out = re.sub(r"\bI(?:'ve| have)\b", "user has", out)
    out = re.sub(r"\bI(?:'ll| will)\b", "user will", out)
    out = re.sub(r"\bI(?:'d| would)\b", "user would", out)
    out = re.sub(r"\bI was\b", "user was", out)
    out = re.sub(r"\bmyself\b", "the user", out, flags=re.IGNORECASE)
    out = re.sub(r"\bmine\b", "the user's", out, flags=re.IGNORECASE)
    out = re.sub(r"\bmy\b", "user's", out, flags=re.IGNORECASE)
    out = re.sub(r"\bme\b", "the user", out, flags=re.IGNORECASE)

    def _verb(match: re.Match[str]) -> str:
        adverb, verb = match.group(1) or "", match.group(2)
        return "user " + adverb + third_person_verb(verb)

    return re.sub(r"\bI\s+((?:" + ADVERBS + r")\s+)?([\w']+)", _verb, out)


_QUESTION_START: Final = re.compile(
    r"^(?:do|does|did|can|could|would|will|is|are|was|were|what|which|who|where|when|why|how|"
    r"should|shall|may|have you|has)\b|^(?:请问|是不是|能不能|可不可以|会不会|有没有|要不要|什么|为什么|怎么|哪)",
    re.IGNORECASE,
)
_QUESTION_END: Final = re.compile(r"[吗呢么嘛]$|[?？]$|(?:好不好|行不行|对不对|是不是|可以吗)$")
# Polite requests are questions in form but state nothing about the user.
_POLITE_IMPERATIVE: Final = re.compile(
    r"^(?:can|could|would|will) (?:you|we|i) (?:please )?(?:always|never|remember|forget|delete|"
    r"stop|not|call me|reply|respond|answer|use|keep|make sure|note|change|move|switch|update|"
    r"reschedule|push|make it|cancel|upgrade|downgrade|bump|drop|move)\b|^(?:能不能|可不可以|可以|麻烦|请)?(?:帮我)?(?:把)?.{0,10}(?:改成|改到|换成|推迟到|提前到|改签)"
    # "Can I go to extras only from 1 November?", "可唔可以轉去荃灣分店睇？": a change asked for.
    r"|^(?:can|could|may) (?:i|we) (?:please )?(?:go|switch|move|change|upgrade|downgrade|transfer|drop|swap) "
    r"(?:(?:back |over |down |up )?to|onto|over)\b"
    r"|^(?:我)?(?:可唔可以|可不可以|能不能|能唔能|可以|可否)(?:帮我|幫我)?(?:转|轉|换|換|改|搬|调|調)(?:去|到|成|为|為)",
    re.IGNORECASE,
)


# A request in question form carries what the user wants done, with its details:
# "can you book Marino's for Friday at 7?", "could we do Dec 12 to 15 instead?",
# "能不能帮我改到周五下午？". "Can I ...?" asks for information, so it is not one.
_REQUEST: Final = re.compile(
    r"^(?:please |pls )?(?:can|could|would|will) (?:you|u|we|they|he|she|it|the \w+|(?!i\b)\w+s)\b"
    r"|^(?:能不能|能否|可不可以|可以|麻烦你?|请你?)?(?:帮我|给我|替我|帮忙)",
    re.IGNORECASE,
)
_DETAIL: Final = re.compile(r"\d|\b[A-Z][a-z]+|[一二三四五六七八九十两]+[个位点号]|周.|星期.|礼拜.")


def is_request(segment: str) -> bool:
    """A question-shaped request that carries a detail worth remembering."""
    return bool(_REQUEST.match(segment)) and bool(_DETAIL.search(segment[3:]))


# A standing request asked for leave: "以后同我倾偈用广东话得唔得？", "from now on can
# you answer in bullets, ok?". The tag asks permission; the request is the statement.
_REQUEST_TAG: Final = re.compile(
    r"[，,\s]*(?:得唔得|好唔好|可唔可以|得不得|行不行|好不好|可不可以|可以吗|可以不|行吗|好吗|成吗|ok吗|okay\??|ok\??|"
    r"alright|please)\s*[?？]*$",
    re.IGNORECASE,
)
_STANDING_OPENER: Final = re.compile(
    r"^(?:以后|今后|往后|从现在开始|从今以后|每次|from now on|going forward|in future|in the future|always)",
    re.IGNORECASE,
)


def without_request_tag(segment: str) -> str:
    """A standing request without its permission tag ("以后用广东话得唔得？" -> "以后用广东话")."""
    if _STANDING_OPENER.match(segment) and _REQUEST_TAG.search(segment):
        return _REQUEST_TAG.sub("", segment).strip(TRIM + " ")
    return segment


# Another time offered as a question: "29 號朝早得唔得？", "周五下午可以吗". It asks for a
# change of a plan, so it is kept (``is_question``) and read as one (``UPDATE``, ``_MOVE``).
PROPOSED_TIME: Final = (
    r"(?:[日号號点點]|[周週].|星期.|礼拜.|禮拜.|[上下]午|朝早|晏晝|晚上|早上|中午)[^，,。？?]{0,4}"
    r"(?:得唔得|得不得|可唔可以|可不可以|可以吗|可以嗎|可以不|行吗|行嗎|行不行|[oO][kK]吗|[oO][kK]嗎|好唔好|方便吗|方便嗎)"
)
_PROPOSED_TIME: Final = re.compile(PROPOSED_TIME)


def is_question(segment: str, sentence_raw: str) -> bool:
    """A question states nothing (except a request: "can you always ...", "can we do the 12th?")."""
    if _POLITE_IMPERATIVE.match(segment) or is_request(segment) or _PROPOSED_TIME.search(segment):
        return False
    if without_request_tag(segment) != segment:
        return False
    if _CHANGE.search(segment) and not _QUESTION_START.match(segment):
        return False  # "..., can deliveries come Tuesday instead?": a change, asked politely
    if _QUESTION_END.search(segment) or _RHETORICAL.search(to_simplified(segment)):
        return True
    if sentence_raw.rstrip().endswith(("?", "？")) and _QUESTION_START.match(segment):
        return True
    if sentence_raw.rstrip().endswith(("?", "？")) and segment == sentence_raw.strip(TRIM + "?？"):
        return True
    if _WH_CLAUSE.match(segment):
        return False  # "when i ask for code, give me the code first": a condition, not a question
    return bool(_QUESTION_START.match(segment)) and not re.match(
        r"^(?:do not|don't|does not|is not|isn't)\b", segment, re.IGNORECASE
    )


# A question that denies, asked without a question mark: "我什么时候对青霉素过敏了" (I never
# was), "我哪有说我住浦东", "谁说我吃素了". Not "什么时候都行" (any time works).
_RHETORICAL: Final = re.compile(
    r"^(?:我|我们)?(?:什么时候|啥时候|几时|哪时候)(?!都|也|方便|有空|可以)[^，,。；;]{0,16}(?:了|过|咗)[啊呀啦嘛喔]?$"
    r"|(?:哪有|哪里有|边度有)(?:说|讲|话|讲过|说过)|^(?:谁说|谁讲|边个话|边个讲)(?!都|也)"
)


# A wh-word followed by a subject, in a sentence without "?": "when I ask for code ...",
# "whenever we travel ...", "what I need is a quiet room". "when is my flight" asks.
_WH_CLAUSE: Final = re.compile(
    r"^(?:when|whenever|where|what|how|if)\s+(?:i|we|you|u|my|our|the \w+)\b(?!\s*\?)",
    re.IGNORECASE,
)


HYPOTHETICAL: Final = re.compile(
    r"\b(?:if i (?:were|was|had|am|ever|could|won)|if i'?d|if we (?:were|had|won)|what if|suppose|supposing|"
    r"imagine|imagining|hypothetically|let'?s say|say i|in theory|pretend|would i|i wish i|if only i|"
    r"in my dreams|i dream of|daydream|one day i'?ll|someday i'?ll|in another life|role-?play|"
    r"i wish|would love to|would be nice|wouldn'?t it be|how cool would|lottery|if money were)\b"
    r"|假如|假设|如果我|要是我|万一我|想象一下|比如说我|打个比方|我要是|如果说我|做梦|梦想着|幻想|要是能|下辈子"
    r"|如果(?:能|可以)重来|重来一次|\bi (?:dreamt|dreamed|had a dream)\b|\bin (?:my|a) dream\b"
    # Code-switched conditions: "如果 we move to Melbourne", "要是 I get the offer".
    r"|(?:如果|要是|万一)\s*(?:we|i|you|they)\b"
    r"|要是.{1,20}就好了|如果.{1,20}的话|有朝一日|真希望|多希望|中了?彩票"
    # A condition about some day: "如果以后爸妈搬来跟我住，房子就得换个三居了",
    # "if my parents ever move in, we'd need a bigger place".
    r"|(?:如果|要是|假如|若是|倘若|万一)(?:以后|将来|哪天|有一天|真的)|(?:如果|要是|假如|若是|倘若)[^。！？!?]{1,24}(?:就得|就要|就会|就去|就把|就买|就换|就搬|干脆|索性|那就)"
    # Said without meaning it: "他就是嘴上说说", "随口说说而已", "just talking".
    r"|嘴上说说|随口说说|说说而已|讲讲而已|\bjust (?:talk|talking|joking|kidding)\b"
    r"|\bif\b[^.?!]{0,60}\b(?:i'?d|we'?d|they'?d|would|could)\b|\bif (?:\w+ ){0,3}ever\b"
    # A threat on a condition: "if it drops again I'm switching to carrier pigeons".
    r"|\bif\b(?! you\b)[^.?!;]{0,60}\b(?:i'?m|we'?re|i am|we are|i'?ll|we'?ll) (?:switching|going|moving|leaving|jumping|"
    r"quitting|cancell?ing|done|out|taking|buying|selling|throwing|suing|retiring|getting|starting|opening)\b"
    # "豆豆要是会说话，第一句肯定是要吃鸡腿": what would follow from a condition.
    r"|(?:要是|如果|假如)[^。！？!?]{1,16}[，,][^。！？!?]{0,12}(?:肯定|一定|估计|大概)"
    # "If I win the lotto I'm buying a beach house", "假如我中咗六合彩": a windfall dream.
    r"|\bif (?:i|we|he|she|they) (?:win|wins|won|strike|strikes|hit|hits|get rich|got rich)\b"
    r"|\b(?:lotto|jackpot|powerball|toto)\b|六合彩|中奖|中咗|发财了|有钱了"
    # A dream or a joke told as such: "my dream would be a vineyard", "梦想是去冰岛",
    # "we joked about moving to Mars", "at this rate I'll be living at the airport".
    r"|\bmy dream\b|\bdream (?:is|would be)\b|\bbucket list\b|\bjok(?:ed|ing) about\b|\bat this rate\b"
    r"|梦想(?:是|就是)|再这样(?:下去)?我就|再咁(?:落去)?我就"
    # Dreamt, not lived: "我昨晚梦见自己当了飞行员", "發夢都想".
    r"|梦见|梦到|夢見|夢到|发梦|發夢"
    # A future that waits on a condition: "worst case I'll sell my car", "when I'm rich I'll
    # fly business", "if my boss asks, I'm at the dentist".
    r"|\bworst case\b|\bbest case\b|\bwhen (?:i|we)'?(?:m| am|'re| are) (?:rich|famous|retired|old|older|a millionaire)\b"
    r"|\bif (?:\w+ ){0,3}asks?\b"
    # Said to make a point, not to be stored: "I'd kill for a coffee", "I could eat a horse",
    # "I practically live on coffee", "sometimes I feel like I'm 80".
    r"|\bi'?d kill for\b|\bcould eat a horse\b|\b(?:practically|basically|literally) liv(?:e|es|ing) (?:on|at|in)\b"
    r"|\bfeel like i'?m (?:\d+|a \w+)\b",
    re.IGNORECASE,
)
# What takes a statement back: "just kidding", "开玩笑的". The sentence is not kept.
JOKE: Final = re.compile(
    r"\b(?:just kidding|jk|kidding|joking|j/k|not really|not seriously|i'?m not serious|"
    r"just a joke|only joking|obviously not|as if)\b|/s\b"
    # Sarcasm: "oh sure, I'm a millionaire", "yeah right, like I have time for the gym",
    # "他会准时才怪", "鬼才信".
    r"|^(?:oh,? )?(?:sure|yeah),? right\b|^oh,? sure\b|(?:^|[,，]\s*)like i (?:have|had|care|need)\b(?! to\b)"
    r"|才怪|鬼才"
    r"|开个?玩笑|開個?玩笑|讲笑|講笑|逗你的?|骗你的|说着玩的|瞎说的|随便说说|说笑的|不是真的|逗你玩|吹牛|做梦呢",
    re.IGNORECASE,
)
# Laughter is weaker: it laughs at the clause it closes ("I'm the king of England lol",
# "他是一只羊哈哈"), not at the whole turn. Leading or mid-sentence laughter is a reaction
# ("lol i never told u that, her name is Anjali") and says nothing about the facts.
LAUGH: Final = re.compile(
    # A lone "ha" only at the end of a clause ("I'm taking up skydiving, ha").
    r"\b(?:lol+|lmao|rofl|ha(?:ha)+h?|hehe+|lul)\b|(?<=[,，;；]\s)ha\b(?=\s*(?:[.!。！;；]|$))"
    r"|[😂🤣😜😝😆🙃😅]|哈{2,}|嘿嘿+|呵呵+"
    # Laughing at it or calling it mad: "…当宇航员，笑死", "…养只老虎，癫咗".
    r"|笑死(?:我了|人了?)?|癫咗|癲咗|痴线|黐線|xd",
    re.IGNORECASE,
)


_LAUGH_AT_END: Final = re.compile(rf"(?:{LAUGH.pattern})[\s!！.。~…,，]*$", re.IGNORECASE)


def laughed_at(sentence: str) -> tuple[str, bool]:
    """The sentence without its laughter, and whether laughter closed its last clause
    (that clause is then taken back: laughing at it, the user does not mean it).

    Example:
        >>> laughed_at("lol her name is Anjali")
        ('her name is Anjali', False)
        >>> laughed_at("he's 6, he's a sheep lol")
        ("he's 6, he's a sheep", True)
    """
    closing = bool(_LAUGH_AT_END.search(sentence))
    return re.sub(r"\s{2,}", " ", LAUGH.sub("", sentence)).strip(TRIM + " "), closing


_FIRST_PERSON: Final = re.compile(
    r"\b(?:i|i'm|i've|i'll|i'd|my|mine|me|we|we're|our|us)\b|我|咱", re.IGNORECASE
)
_SMALL_TALK: Final = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|ok|okay|sure|great|cool|nice|got it|sounds good|"
    r"good (?:morning|evening|night)|bye|see you|no problem|yes|yeah|yep|no|nope|lol|haha|"
    r"i see|i think so|i don'?t know|not sure|never mind|that'?s (?:all|it|fine|great|good)|i agree|"
    r"i understand|i guess|i know|i hope so|i'?m (?:fine|good|ok|okay|sorry)|we'?ll see|i'?ll wait)\b"
    r"|^(?:你好|您好|谢谢|多谢|好的|好|嗯|行|可以|没问题|哈哈|再见|拜拜|知道了|明白了|收到|不用了|算了|不知道)",
    re.IGNORECASE,
)


# A report of something that happened: a past tense, "了", "过", "已经". What happened
# stays true after its day ("the sofa came today but the arm is torn").
EN_REPORT: Final = re.compile(
    r"\b(?:came|arrived|broke|broken|was|were|got|had|did|went|left|lost|found|happened|showed up|"
    r"turned up|fell|tore|torn|cracked|[a-z]{3,}ed)\b",
    re.IGNORECASE,
)
REPORT: Final = re.compile(EN_REPORT.pattern + r"|了|过|已经|到咗|咗", re.IGNORECASE)


# Not a fact yet: "I might switch to...", "maybe I'll...", "我考虑换...", "说不定".
TENTATIVE: Final = re.compile(
    r"\b(?:might|maybe i|maybe we|perhaps|thinking (?:about|of)|considering|not sure (?:if|whether)|"
    r"wondering (?:if|whether)|probably not|could be|if possible)\b"
    r"|可能会|也许|说不定|考虑|想想|或许|不一定|犹豫|纠结要不要|打算要不要"
    # A worry, a suspicion or a belief that was wrong is no fact: "我担心我爸是不是得了帕金森",
    # "不会是老年痴呆吧", "I'm worried my dad might have diabetes", "I thought I was allergic
    # to penicillin", "people keep telling me I look like a student", "我被当成学生了".
    r"|担心|擔心|我怕|怕是|恐怕|会不会是|會不會是|是不是得了|不会是[^，,。]{0,12}吧|不會是[^，,。]{0,12}吧|以为|以為|疑似|排除"
    r"|被当成|被當成|当成我|當成我"
    r"|\b(?:i'?m (?:worried|scared|afraid|concerned|terrified) (?:that|it|it'?s|my|he|she|they|about)|i fear|"
    r"rule out|ruled out|i thought i (?:was|had)|i used to think|everyone (?:assumes|thinks)|people (?:think|assume|keep telling me)|"
    r"mistakes? me for|mistaken for|taken for)\b",
    re.IGNORECASE,
)


# Someone outside the household as the subject: "my colleague is off to Iceland next
# month", "我同事小何下个月去冰岛". Their plans are not the user's memory; a safety fact
# about them ("my friend is allergic to nuts, she's coming to dinner") still is.
_OTHER_PERSON: Final = re.compile(
    r"^(?:(?:and|also|btw|oh)[,\s]+)*(?:(?:my |our )?\w+ (?:says|said|told me|tells me) (?:that )?)?"
    r"(?:my |our |a |his |her |their )?(?:colleague|coworker|co-worker|friend|boss|manager|"
    r"neighbou?r|classmate|roommate|flatmate|mate|buddy)s?\b(?![^.]*\b(?:with (?:me|us)|and i|we)\b)"
    # "我老公说他同事家的空调也晃": someone's report about a third person.
    r"|^(?:我|我的|我们)?(?:[\u4e00-\u9fff]{1,4}(?:说|讲|话|讲过|说过))?(?:他|她|佢)?(?:的)?"
    r"(?:同事|朋友|老板|领导|邻居|同学|室友|舍友|上司|闺蜜|哥们|隔壁)(?![^，。]*(?:和我|跟我|带我|我们))",
    re.IGNORECASE,
)


# Who holds a role for the user is the user's fact: "老板换成 Grace", "my new manager is Dana",
# "我领导现在是老周". The role is the slot, the name its value.
_ROLE_IS: Final = re.compile(
    # The value is a name: a capital letter, so "my boss is off to Iceland" stays his.
    r"^(?i:(?:(?:and|also|btw|oh)[,\s]+)*(?:my |our )?(?:new )?(?:boss|manager|team lead|supervisor)\s+"
    r"(?:is now|is|'s now|changed to|became|will be)\s+)[A-Z][a-z]"
    r"|^(?:我的?|我们的?)?(?:新)?(?:老板|领导|上司|经理|组长|主管)(?:也|现在|已经)?(?:换成|换了|变成|改成|是|叫)"
    # ... a name, not a description: "我老板是个工作狂" stays the boss's.
    r"(?!个|一个|很|挺|特别|太|有点|不|真|超|非常)"
)


# What the user heard, not what is true of them: advice or an opinion about what the user
# should do ("my sister thinks I should learn Spanish", "我妈总说我应该早点结婚"), hearsay
# ("I heard the shop is closing", "听说那家店要倒闭了"), a stranger's claim ("a guy at the gym
# told me ..."), someone's story of their own past ("他说他去年去大阪买网卡"). A doctor's word
# is the user's health fact ("my GP says I need to cut salt") and stays.
_HEARSAY: Final = re.compile(
    r"\b(?:thinks|thought|reckons|reckoned|says|said|keeps saying|always says|told me|tells me|insists|swears)\s+"
    r"(?:that\s+)?(?:i|we)\s+(?:should|ought|need|must|could|have to|gotta|'d better)\b"
    r"|^(?:(?:and|also|btw|oh|so)[,\s]+)*(?:i (?:heard|hear) (?:that|people|someone|they say)|i read somewhere|rumou?r has it|word is)\b"
    r"|^(?:(?:and|also|btw|oh|so)[,\s]+)*(?:a|some|this|one|the)\s+(?:guy|girl|woman|man|lady|bloke|person|someone|"
    r"somebody|stranger)\b[^.!?]{0,40}\b(?:told me|tells me|said|says|reckons|swears)\b"
    r"|^(?:(?:and|also|btw|oh|so)[,\s]+)*(?:everyone|everybody|people)\s+(?:says?|said|reckons?|tells? me)\b"
    r"|^(?:听说|听人说|据说|听讲|听人讲|有人说|大家都说)"
    r"|(?:总说|老说|总是说|一直说|老是说|成日话|成日講|成日讲|觉得我应该|说我应该|叫我应该|劝我|建议我)"
    r"|(?:他|她|佢)(?:说|讲|话)(?:他|她|佢)(?:们)?(?:去年|以前|之前|上次|那时|小时候|当年|前年)"
    # Someone's own plan, told by them: "佢话佢下年移民英国", "他说他要辞职".
    r"|^(?:他|她|佢)(?:说|讲|话)(?:他|她|佢)",
    re.IGNORECASE,
)
_MEDICAL_SOURCE: Final = re.compile(
    r"\b(?:doctor|dr|gp|dentist|physio\w*|nurse|pharmacist|specialist|surgeon|consultant|vet|midwife)\b"
    r"|医生|醫生|大夫|医师|药剂师|护士|牙医|兽医",
    re.IGNORECASE,
)


def is_hearsay(segment: str) -> bool:
    """Advice, hearsay or someone's own story, not a fact of the user's (``_HEARSAY``).

    Example:
        >>> is_hearsay("my sister thinks I should learn Spanish"), is_hearsay("听说那家店要倒闭了")
        (True, True)
        >>> is_hearsay("my GP says I need to cut salt"), is_hearsay("the app says my order shipped")
        (False, False)
    """
    text = to_simplified(segment)
    return bool(_HEARSAY.search(text)) and not _MEDICAL_SOURCE.search(text)


def about_someone_else(segment: str) -> bool:
    """Is the segment's subject someone outside the user's household?

    Example:
        >>> about_someone_else("我同事小何下个月要去冰岛"), about_someone_else("my wife is vegan")
        (True, False)
        >>> about_someone_else("老板换成 Grace"), about_someone_else("my new manager is Dana")
        (False, False)
    """
    return bool(_OTHER_PERSON.search(segment)) and not _ROLE_IS.search(segment)


def first_person(segment: str) -> bool:
    return bool(_FIRST_PERSON.search(segment))


# "I'm not vegetarian", "我不是VIP": a denial (often of an assistant's mistake). Kept
# raw it would still hold the denied word, and a reader matching words sees the claim.
_DENIAL: Final = re.compile(
    r"\b(?:i'?m not|i am not|i'?m no|we'?re not|i'?ve never|i have never|i never said|i didn'?t say|"
    r"that'?s not (?:true|right|correct)|not true|that'?s wrong|you'?re wrong|no,? i)\b"
    r"|我不是|我并不|我没有说|我没说|我从来没|不对|说错了|搞错了|弄错了|不是我"
    # "之前个 gmail 我唔用啦", "I don't use gmail anymore": names only the old value.
    r"|(?:不|唔)(?:再)?用(?:了|啦|喇)|\bdon'?t use\b.{0,30}\b(?:any ?more|now)\b|\bno longer use\b",
    re.IGNORECASE,
)


_GREETING: Final = re.compile(
    r"^(?:hi|hello|hey|yo|hiya|morning|good (?:morning|afternoon|evening))\b[\s,!.]+\S"
    r"|^(?:你好|您好|嗨|哈喽|早晨|早上好)[\s,，!！]*[^\s,，!！]",
    re.IGNORECASE,
)
_SUBJECT_START: Final = re.compile(
    r"^(?:i|we|i'?m|we'?re|i'?ve|we'?ve|i'?ll|we'?ll|im|ive)\b|^(?:我|我们|咱们)(?!是说)",
    re.IGNORECASE,
)
# Someone of the household, or a pet, as the subject: "the kids are off school next week".
_HOUSEHOLD_SUBJECT: Final = re.compile(
    r"^(?:the|my|our)\s+(?:kids?|children|son|daughter|wife|husband|partner|baby|mum|mom|dad|"
    r"parents|family|twins|boys|girls|dog|cat|puppy|kitten|grandson|granddaughter|grandkids)\b",
    re.IGNORECASE,
)
_DROPPED_SUBJECT: Final = re.compile(
    r"^(?:just |finally |still |also |now |already |recently )?(?:got|bought|moved|moving|started|starting|"
    r"switched|switching|joined|joining|quit|left|lost|booked|ordered|signed|going|heading|flying|"
    r"travell?ing|training|working|living|staying|renting|finished|changed|applied|passed|failed|"
    r"broke|adopted|married|retired|graduated|paid|returned|cancell?ed|upgraded|downgraded|made|"
    r"came back|back from|off to|been|having|taking|running|trying|planning|expecting|allergic|"
    r"pregnant|vegan|vegetarian)\b",
    re.IGNORECASE,
)
_NAMED_SUBJECT: Final = re.compile(
    r"^(?!(?:The|This|That|These|Those|It|Its|There|Here|What|Which|Who|When|Where|Why|How|Yes|"
    r"No|Ok|Okay|Thanks|Thank|Sorry|Please|So|And|But|Also|Well|Oh|Nice|Great|Cool|Good|Fine|Sure|"
    r"Not|Just|Any|Some|All|Your|You|Is|Are|Can|Could|Would|Will|Do|Does|Did|If|Maybe|Hope|Let|"
    r"Looks|Sounds|Seems|Same|Still|Then|Now|Today|Tomorrow|Yesterday)\b)"
    r"[A-Z][a-z]+(?:'s\b|\s+(?:is|was|has|had|and|got|[a-z]+s|[a-z]+ed)\b)"
)
_REPORTED_THING: Final = re.compile(
    r"^(?:(?:the|my|our|your|that|this)\s+)?([a-z]+)(?:[ -][a-z]+)?\s+(?:finally |just |never |still |already )?"
    r"(?:came|arrived|broke|got|was|were|has|had|went|stopped|fell|showed up|turned up|[a-z]{3,}ed)\b",
    re.IGNORECASE,
)
# Subjects of chit-chat, not things of the user's ("that was quick", "the weather was awful").
_NOT_A_THING: Final = word_set("that this it there which what who weather you he she they the a an")


def _reports_on_a_thing(segment: str) -> bool:
    m = _REPORTED_THING.match(segment)
    return m is not None and m.group(1).lower() not in _NOT_A_THING and bool(REPORT.search(segment))


_CHANGE: Final = re.compile(
    r"\b(?:make it|make that|change it to|change that to|switch it to|move it to|instead|"
    r"rescheduled|postponed|pushed (?:back|to)|moved to|no longer|not anymore)\b"
    r"|改成|改为|改到|换成|换到|推迟到|提前到|改签|不再|取消了|改(?![善进革正良造装])[\u4e00-\u9fff]|挪到|调到|移到",
    re.IGNORECASE,
)


# When the user can or cannot do things, said of the time itself.
_AVAILABILITY: Final = re.compile(
    r"^(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|weekdays?|week ?nights?|mornings?|"
    r"afternoons?|evenings?|nights?|lunchtimes?)\s+(?:are|is|work|works)\s+(?:\w+\s+)?"
    r"(?:fine|good|ok|okay|better|best|free|busy|bad|no good|out|impossible|tricky)\b",
    re.IGNORECASE,
)


def states_something(segment: str, *, about_user: bool = False) -> bool:
    """Worth keeping as evidence: about the user, not small talk, long enough to carry a fact.

    ``about_user``: an earlier segment of the sentence had the user as subject
    (Chinese drops it after the first clause: "我住在北京，在医院当护士").
    """
    opener = _SMALL_TALK.match(segment)
    if opener and re.match(r"[\s,，!！.。:]+\S", segment[opener.end() :]):
        segment = segment[opener.end() :].strip(TRIM + " ")  # "no, we're in Lisbon now"
    elif opener and len(segment) < 30 and not _GREETING.match(segment):
        return False
    # "hey we moved", "早晨，我系阿娟": the greeting says nothing, the rest may.
    segment = strip_fillers(segment)
    if not segment or (_SMALL_TALK.match(segment) and len(segment) < 30):
        return False
    if _DENIAL.search(segment):
        return False
    if _CHANGE.search(segment):  # "make it the 5th instead", "改成周五": the user's own change
        return True
    # No pronoun needed: users drop it ("Type 1 diabetic", "new job in Bath", "改看
    # Clementi", "年卡"); in a one-to-one chat the user's statements are about them.
    size = len(CJK.findall(segment)) + len(re.findall(r"[A-Za-z0-9]+", segment))
    if size >= 3 and (about_user or _FIRST_PERSON.search(segment)):
        return True
    # "we moved", "I quit": the user as subject, two words are a whole fact.
    if size >= 2 and _SUBJECT_START.match(segment):
        return True
    # "got a place in Jersey City", "moving in Nov 29": English drops the "I" too;
    # "Clive's gone veggie", "Giulia's car seat came off the belt": a named person.
    if size >= 3 and (
        _DROPPED_SUBJECT.match(segment)
        or _NAMED_SUBJECT.match(segment)
        or _HOUSEHOLD_SUBJECT.match(segment)
    ):
        return True
    # "sofa got delivered today, one leg is cracked", "the refund finally arrived": a thing
    # of the user's and what happened to it.
    if size >= 4 and _reports_on_a_thing(segment):
        return True
    # "weekends are fine now", "mornings are no good any more": when the user is free.
    if _AVAILABILITY.match(segment):
        return True
    # Otherwise it must carry something to remember: a number, a name, a masked
    # identifier, a Chinese clause ("发短信就行", "柯基"), or a statement about someone the
    # user just named ("she's vegetarian"); "please delete the file" is an errand.
    return size >= 2 and bool(
        re.search(r"\d|" + PLACEHOLDER_PATTERN, segment)
        or re.search(r"(?<!^)\b[A-Z][a-z]", segment)
        or len(CJK.findall(segment)) >= 2
        or re.match(r"(?:he|she|they)(?:'s|'re| is| are| has| have)\b", segment, re.IGNORECASE)
    )
