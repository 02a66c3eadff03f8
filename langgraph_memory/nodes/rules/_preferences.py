"""Rules for what the user wants: likes, shipping, contact channel, standing instructions.

A standing instruction may open with any word: "Also, never use emojis",
"Oh and please always answer briefly", "I'd like you to keep replies short",
"回复的时候别用敬语", "你以后别叫我先生". One-off task requests ("send me the
invoice") are not instructions: an imperative counts only with a standing
marker (always, never, every time, from now on, 每次, 一律 ...) or a negation,
after a condition ("when I ask for code, give me the code first", "if it
slips, just cancel it"), or as a filter on everything suggested ("no meat in
anything you suggest").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from langgraph_memory.nodes.rules._match import Match, en_value, zh_value
from langgraph_memory.nodes.rules._profile import NEGATED
from langgraph_memory.nodes.rules._text import TRIM, to_simplified, to_third_person
from langgraph_memory.types import MemoryType

_CARRIERS_ZH: Final = "顺丰|京东|中通|圆通|申通|韵达|EMS|邮政|德邦|极兔"


def rule_shipping(segment: str) -> Match | None:
    if NEGATED.search(segment):
        return None
    m = re.search(
        r"\b(?:ship|send|deliver|post)(?:ping)?\s+(?:it\s+|them\s+|my\s+orders?\s+|everything\s+|orders\s+)?"
        r"(?:with|via|by|through|using)\s+([A-Z][\w&.\-]*(?:\s+[A-Z][\w&.\-]*){0,2})",
        segment,
        re.IGNORECASE,
    )
    if m and m.group(1).lower() not in ("the", "a", "my", "post", "mail"):
        return Match(
            f"User prefers shipping with {m.group(1).strip()}",
            key="shipping.carrier",
            importance=0.75,
        )
    m = re.search(
        rf"(?:快递|发货|寄件?|配送)?(?:请|都|只|一律)?(?:用|走|发|寄)({_CARRIERS_ZH})", segment
    )
    if m and re.search(r"快递|发货|寄|配送|发" + m.group(1), segment):
        return Match(f"用户希望快递用{m.group(1)}", key="shipping.carrier", importance=0.75)
    return None


# The user's own seat: "I always take an aisle seat", "机票帮我选靠窗的", "我要靠过道".
# Someone else's ("靠窗是我老公喜欢的", "my wife likes the window") is not it.
_SEAT_EN: Final = re.compile(r"\b(window|aisle)(?: seats?)?\b", re.IGNORECASE)
_SEAT_ZH: Final = re.compile(r"靠(窗|过道|走道|通道)")
_SEAT_SUBJECT_OTHER: Final = re.compile(
    r"\b(?:my (?:wife|husband|partner|son|daughter|mum|mom|dad|kids?)|he|she|they)\b.{0,20}(?:window|aisle)"
    r"|(?:window|aisle).{0,24}\b(?:is|are)\s+(?:my|his|her|their) \w+'?s\b"
    r"|(?:靠窗|过道|走道).{0,4}是?(?:我)?(?:老公|老婆|先生|太太|儿子|女儿|孩子|爸|妈|他|她)"
    r"|(?:老公|老婆|先生|太太|儿子|女儿|孩子|爸|妈|他|她).{0,6}(?:靠窗|过道|走道)",
    re.IGNORECASE,
)


# A table by the window is a booking, not how the user travels.
_SEAT_NOT_TRAVEL: Final = re.compile(
    r"\b(?:table|restaurant|dinner|lunch|brunch|bar|cafe)\b|餐|桌|饭", re.IGNORECASE
)


def rule_seat(segment: str) -> Match | None:
    simplified = segment
    if (
        NEGATED.search(segment)
        or _SEAT_SUBJECT_OTHER.search(simplified)
        or _SEAT_NOT_TRAVEL.search(segment)
    ):
        return None
    m = _SEAT_ZH.search(simplified)
    if m and re.search(r"我|帮我|给我|选|订|要|座", simplified):
        where = "靠窗" if m.group(1) == "窗" else "靠过道"
        return Match(f"用户坐飞机/火车选{where}座位", key="preference.seat", importance=0.7)
    m = _SEAT_EN.search(segment)
    if (
        m
        and re.search(r"\b(?:i|me|my)\b", segment, re.IGNORECASE)
        and re.search(
            r"\bseats?\b|\b(?:take|prefer|want|like|book|get|give me)\b|\b(?:window|aisle) (?:person|guy|girl)\b",
            segment,
            re.IGNORECASE,
        )
    ):
        return Match(
            f"User prefers {m.group(1).lower()} seats", key="preference.seat", importance=0.7
        )
    return None


_CHANNEL: Final = r"e-?mail|text|sms|message|whatsapp|wechat|call|ring|phone"
_CHANNEL_NAMES: Final = {"call": "phone", "ring": "phone", "message": "text", "sms": "text"}
_ZH_CHANNEL: Final = r"微信|短信|邮件|WhatsApp"


def rule_contact(segment: str) -> Match | None:
    m = re.search(
        r"\b(?:contact|reach|notify|message|ping|call)\s+me\s+(?:only\s+)?(?:by|via|through|on|over)\s+"
        r"(e-?mail|phone|text|sms|wechat|whatsapp|telegram|signal)\b"
        r"|\b(e-?mail|text|message|wechat)\s+me\s+instead\b"
        # "switch to email for updates", "can we change to WhatsApp": a channel, not an address.
        r"|\b(?:switch|change|move)(?: (?:it|that|me|us))? (?:over )?to (e-?mail|texts?|sms|whatsapp|wechat)\b(?! address| number)"
        # "email me, don't call", "pls text me updates": not "email me the invoice" (an errand).
        r"|^(?:(?:pls|please|just|only|oh and|and)\s+)*(e-?mail|text|sms|whatsapp|wechat)\s+me"
        r"(?:\s+(?:updates?|instead|only|from now on|about (?:it|this|changes|updates))\b.*)?$"
        r"|\bi prefer (?:to be contacted )?(?:by |via )?(e-?mail|phone calls?|texts?|sms|wechat|whatsapp)\b"
        # One channel over another: "email me rather than ringing", "I'd much rather you text
        # me than email", "email is best for me", "don't ring me, just email".
        rf"|\b({_CHANNEL}) me (?:rather than|instead of|not|and not|over)\b"
        rf"|\bi'?d (?:much |far |really )?rather you (?:just )?({_CHANNEL})(?:ed)? me\b"
        rf"|\b({_CHANNEL}) (?:is|works|'s) (?:best|better|easiest|easier)(?: for me)?\b"
        rf"|\b(?:best|easiest) (?:way )?to (?:reach|contact|get) me is (?:by |via |on )?({_CHANNEL})\b"
        rf"|\b(?:don'?t|do not|never|please don'?t) (?:call|ring|phone) me\W+(?:just |only |please )*({_CHANNEL})\b",
        segment,
        re.IGNORECASE,
    )
    if m and not NEGATED.search(segment[: m.start()]):
        channel = next(g for g in m.groups() if g).lower().replace("e-mail", "email")
        channel = _CHANNEL_NAMES.get(channel, channel)
        return Match(
            f"User prefers to be contacted by {channel}", key="contact.channel", importance=0.75
        )
    m = re.search(
        r"(?:用|通过|发|走|打)(微信|短信|邮件|邮箱|电话|QQ|钉钉)(?:来)?(?:联系|通知|找|告诉)我"
        r"|联系我(?:请|的话)?(?:最好)?(?:用|发|打|走)(微信|短信|邮件|电话|QQ|钉钉)"
        # A habit, not an errand: "以后发邮件给我", "有事微信找我就行", "别打电话，发短信就好".
        r"|(?:以后|今后|有事|有什么事|有消息|有进展|有情况|有更新)(?:请|麻烦)?(?:都)?(?:就)?(?:用|发|走)?"
        rf"({_ZH_CHANNEL})(?:给我|联系我|通知我|找我|我)"
        # The whole segment, as "email me" is: "发邮件给我就行", "发短信就好".
        rf"|^(?:请|麻烦)?(?:就|只)?(?:发|用)({_ZH_CHANNEL})(?:给我|联系我|通知我)?(?:就行|就好|就可以|吧)?$"
        rf"|(?:别|不要|唔好)打(?:电话|電話)[^。；]{{0,6}}?(?:发|用|打)({_ZH_CHANNEL})"
        # A change of channel said alone: "改发邮件吧", "换成短信", "改打电话就行".
        rf"|^(?:那|那就|以后)?(?:改|换|換)(?:成|为)?(?:发|用|打)?({_ZH_CHANNEL}|电话)(?:联系我|通知我|给我)?(?:就行|就好|吧)?$",
        segment,
        re.IGNORECASE,
    )
    if m and not re.search(r"不要|别|唔好", segment[: m.start()]):
        channel = next(g for g in m.groups() if g)
        return Match(f"用户希望通过{channel}联系", key="contact.channel", importance=0.75)
    return None


_EN_LIKE_VERBS: Final = {
    "don't like": "does not like", "dont like": "does not like", "do not like": "does not like",
    "can't stand": "cannot stand", "like": "likes", "love": "loves", "prefer": "prefers",
    "enjoy": "enjoys", "hate": "hates", "dislike": "dislikes", "adore": "adores",
    "'d rather": "would rather", "would rather": "would rather", "am a big fan of": "is a big fan of",
    "'m a big fan of": "is a big fan of", "am a fan of": "is a fan of", "'m a fan of": "is a fan of",
    "am into": "is into", "'m into": "is into", "am not a fan of": "is not a fan of",
    "'m not a fan of": "is not a fan of", "really like": "really likes", "really love": "really loves",
}  # fmt: skip


def rule_like(segment: str) -> Match | None:
    m = re.search(
        r"\bi\s?(really like|really love|'m not a fan of|am not a fan of|'m a big fan of|am a big fan of|"
        r"'m a fan of|am a fan of|'m into|am into|'d rather|would rather|like|love|prefer|enjoy|hate|"
        r"dislike|adore|can't stand|don'?t like|do not like)\s+(.+)$",
        segment,
        re.IGNORECASE,
    )
    if m and not re.match(
        r"(?:you|to ask|to know|to check|to order|to book|to cancel)\b", m.group(2)
    ):
        verb = _EN_LIKE_VERBS.get(m.group(1).lower(), m.group(1).lower())
        what = to_third_person(en_value(m.group(2), 12)).strip(TRIM)
        if what:
            return Match(f"User {verb} {what}", importance=0.6)
    m = re.search(r"\bmy fav(?:ou?rite)? ([a-z ]{2,20}?) (?:is|are) (.+)$", segment, re.IGNORECASE)
    if m:
        what = en_value(m.group(2), 8)
        if what:
            return Match(
                f"User's favorite {m.group(1)} is {what}",
                key=f"favorite.{m.group(1).strip().replace(' ', '_')}",
                importance=0.65,
            )
    m = re.search(
        r"我(?:很|最|特别|比较|也|真的|非常|一直|还是|不太|超)?(不喜欢|更喜欢|喜欢|讨厌|偏好|偏爱|爱吃|爱喝|不爱|受不了|最爱|热爱)(.+)$",
        segment,
    )
    if m and not re.match(r"你|问|这样|那样", m.group(2)):
        what = to_third_person(zh_value(m.group(2), 24)).strip(TRIM)
        if what:
            return Match(f"用户{m.group(1)}{what}", importance=0.6)
    m = re.search(r"我(?:最)?(?:喜欢|爱)的([\u4e00-\u9fff]{1,6})是(.+)$", segment)
    if m:
        what = zh_value(m.group(2), 16)
        if what:
            return Match(
                f"用户最喜欢的{m.group(1)}是{what}", key=f"favorite.{m.group(1)}", importance=0.65
            )
    return None


STANDING_EN: Final = re.compile(
    r"\b(?:always|never|every time|each time|whenever|from now on|in (?:the )?future|going forward|"
    r"by default|all the time|any ?more|again|in every|every reply|in all)\b",
    re.IGNORECASE,
)
_STYLE_EN: Final = re.compile(
    r"\b(?:short|brief|concise|formal|informal|casual|bullet|bullets|metric|imperial|celsius|"
    r"fahrenheit|emojis?|honorifics?|jargon|simple|plain|polite|summary|summaries|tl;?dr|"
    r"first name|last name|sir|madam|ma'am|technical|detailed|pleasantries|small talk|chit-?chat|fluff|"
    r"waffle|direct|to the point|straight|english|chinese|mandarin|cantonese|lists?|numbered|tables?|"
    # How replies are written: spelling, units, format, tone, language ("use British spelling").
    r"spelling|british|american|australian|units?|format|formatting|tone|style|language|markdown|"
    r"headings?|paragraphs?|sentences?|currency|24-?hour|12-?hour|caps|capitals|lowercase|"
    r"exclamation marks?|slang|swearing|emoticons|stickers|abbreviations|acronyms|simplified|traditional)\b",
    re.IGNORECASE,
)
# "And no emojis, I can't abide them": a bare "no X" about how replies look.
_NO_STYLE_EN: Final = re.compile(
    r"^(?:(?:and|also|oh|plus|just|please|pls)[,\s]+)*no (?:more )?(.{2,30}?)(?:,? please)?$",
    re.IGNORECASE,
)
# "你回我能不能简短点，列个点就行", "平时用 English 回我就好": how to reply, asked in passing.
_ZH_REPLY: Final = re.compile(
    r"回我|回复我|回覆我|答我|跟我说|同我讲|你回|回的时候|回复的时候|写给我|给我写"
)
_ZH_STYLE: Final = re.compile(
    r"简短|簡短|简洁|簡潔|短一?点|短一?點|列(?:个|個)?点|列(?:个|個)?點|分点|分點|要点|重點|重点|口语|口語|正式|"
    r"中文|英文|English|繁体|繁體|简体|簡體|表情|emoji|详细|詳細|直接|广东话|廣東話|粤语|粵語|普通话|普通話",
    re.IGNORECASE,
)


# A rule with its condition: "when I ask for code just give me the code first",
# "if it slips past mid December just cancel it and refund me".
_CONDITIONAL: Final = re.compile(
    # "when you text me, keep it short": the assistant's own doing is a condition too, but
    # "when you get a chance, ..." is a one-off errand.
    r"^(?:when(?:ever)?|every time|each time|any ?time|if)\s+"
    r"(?:i|we|it|they|he|she|the \w+|my \w+|(?<=(?:ever|time) )you|(?<=when )you(?= (?:text|message|email|call|ring|"
    r"write to|reply to|answer|remind|contact|ping) me\b))\b"
    # after a comma, any imperative ("when I send a recipe, convert it to metric") ...
    r"(?:.{1,60}?,\s*(?:(?:just|please|pls|then|simply)\s+)?"
    r"(?!(?:i|we|you|u|it|he|she|they|i'?ll|i'?d|i'?m|we'?ll|we'?re|that|this|there|the|my|our|a|an|"
    r"and|but|so|or|maybe|probably|thanks)\b)[a-z]{3,}\b"
    # ... without one, an ask after "just"/"please" ("when i ask for code just give me ...")
    r"|.{1,60}?\s+(?:just|please|pls|then|simply)\s+(?!(?:i|we|it|he|she|they)\b)[a-z]{3,}\b)"
    r".*$",
    re.IGNORECASE,
)
# When a standing instruction holds: "周末", "工作日白天", "以后", "上班时间".
_ZH_SCOPE: Final = r"(?:以后|今后|往后|平时|平常|周末|週末|工作日|平日|上班时间|上班時間|节假日|假日|白天|晚上|早上|每次)"


# What the assistant does for the user: "别 ping 我", "别打电话", "别推荐", "别叫我".
_ZH_TO_ASSISTANT: Final = re.compile(
    r"我|打电话|打電話|电话|電話|打来|打給|打给|call|ping|message|发|發|提醒|推荐|推薦|安排|排|约|約|联系|聯絡|"
    r"回复|回覆|叫|称呼|稱呼|告诉|通知|打扰|打擾|找|问|問|讲|講|说|說|用|寄|送",
    re.IGNORECASE,
)


# "no meat in anything you suggest", "nothing spicy in what you recommend": a standing filter.
_EXCLUDE_ALL: Final = re.compile(
    r"^(?:no|nothing|never any)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:in|on|with|for)\s+"
    r"(?:anything|any|everything|all|what)\b.*\byou\b",
    re.IGNORECASE,
)


# "never showed up", "always worked fine", "only arrived today": what happened, not an ask
# (an ask takes the bare verb: "never call", "always feed her first").
_PAST_TENSE: Final = re.compile(
    r"^(?:\w{2,}(?<!e)ed|came|went|got|gave|took|made|did|was|were|had|knew|saw|said|told|left|"
    r"sent|brought|bought|paid|heard|thought|felt|kept|ran|rang|wrote|spoke|broke)\b",
    re.IGNORECASE,
)


def rule_instruction(segment: str) -> Match | None:
    if re.match(r"(?:please\s+)?(?:don'?t|do not) forget to\b", segment, re.IGNORECASE):
        return None  # a one-off reminder ("don't forget to bring snacks")
    m = _NO_STYLE_EN.match(segment.strip(TRIM))
    if m and _STYLE_EN.search(m.group(1)):
        return Match(
            f"User's standing instruction: no {m.group(1).strip(TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    if _ZH_REPLY.search(segment) and _ZH_STYLE.search(segment):
        return Match(
            f"用户的长期要求：{segment.strip(TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    if _CONDITIONAL.match(segment) or _EXCLUDE_ALL.match(segment):
        return Match(
            f"User's standing instruction: {segment.strip(TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    m = re.match(
        r"^(?:please\s+|pls\s+|kindly\s+|and\s+|also\s+|just\s+)*(don'?t|do not|never|always|stop|avoid|no more|"
        r"no need to|make sure (?:to|you)|be sure to|remember to|keep|use|reply|respond|answer|write|"
        r"address me|speak|talk|give me|send me|show me|list|put|include|start|end|sign|only|skip|cut)\b\s*(.*)$",
        segment,
        re.IGNORECASE,
    )
    if m:
        verb, rest = m.group(1).lower(), m.group(2).strip(TRIM)
        standing = (
            verb
            in (
                "don't",
                "dont",
                "do not",
                "never",
                "always",
                "stop",
                "avoid",
                "no more",
                "no need to",
                "only",
            )
            or STANDING_EN.search(segment)
            or (
                _STYLE_EN.search(segment)
                and verb
                in (
                    "keep",
                    "use",
                    "reply",
                    "respond",
                    "answer",
                    "write",
                    "address me",
                    "speak",
                    "talk",
                    "skip",
                    "cut",
                )
            )
        )
        if standing and rest and not _PAST_TENSE.match(rest):
            return Match(
                f"User's standing instruction: {verb} {rest}",
                type=MemoryType.PROCEDURAL,
                importance=0.8,
            )
    m = re.search(
        r"\b(?:i'?d like you to|i want you to|i need you to|i'd prefer (?:it )?if you|i prefer (?:that )?you|"
        r"can you(?: please)?|could you(?: please)?|would you(?: please)?|please)\s+"
        r"((?:always|never|not|stop|keep|use|reply|respond|answer|write|address|call|only)\b.*)$",
        segment,
        re.IGNORECASE,
    )
    if m and (
        STANDING_EN.search(segment)
        or _STYLE_EN.search(segment)
        or re.match(r"(?:not|never|stop)\b", m.group(1))
    ):
        return Match(
            f"User's standing instruction: {m.group(1).strip(TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    m = re.match(
        r"^(?:please\s+|pls\s+|and\s+|also\s+)*((?:send|text|email|call|contact|message|ring|ping|notify)"
        r"\s+(?:me\s+)?(?:only|just)\b.+)$",
        segment.strip(TRIM),
        re.IGNORECASE,
    )
    if m:  # "send only order-update texts": a filter on every message to come
        return Match(
            f"User's standing instruction: {m.group(1).strip(TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    m = re.search(
        r"^(?:请你?|你|你们|麻烦你?|拜托)?"
        # When it holds: "周末别 ping 我", "工作日白天千万别打电话", "以后帮我排 meeting 不要放周五下午".
        rf"(?:{_ZH_SCOPE}(?:的|都|也)?\s*){{0,3}}"
        r"(?:(?:帮我|给我)(?:排|安排|约|订|发|打)\s?[A-Za-z\u4e00-\u9fff]{0,8}?\s?)?"
        r"(?:都|也)?(不要再?|别再?|千万别|千万不要|永远不要|总是|一定要|每次都要?|每次|一律|务必|记得|别|不要|"
        r"回复(?:的时候|时)?|回答(?:的时候|时)?)(.+)$",
        segment,
    )
    scoped = re.match(rf"^(?:请你?|你|你们|麻烦你?|拜托)?{_ZH_SCOPE}", segment) is not None
    prohibits = m is not None and m.group(1).startswith(("别", "不要", "千万", "永远不要"))
    if m and scoped and prohibits and not _ZH_TO_ASSISTANT.search(m.group(2)):
        m = None  # "晚上别吃太多": the user's own resolution, not a rule for the assistant
    habit_only = (
        m is not None
        and m.group(1) in ("总是", "每次", "每次都", "每次都要")
        and not re.search(
            r"你|给我|帮我|跟我|同我|和我|提醒|回复|回答|告诉|通知|发给|用|叫我|称呼|推荐|安排|记得|订|訂|预订|预约|选|挑",
            m.group(2),
        )
    )  # "每次来我家都打喷嚏" is what someone does, not what the assistant should
    if m and not habit_only and not re.match(r"[了的]", m.group(2)):
        said = segment.strip(TRIM) if scoped else f"{m.group(1)}{m.group(2).strip(TRIM)}"
        return Match(
            f"用户的长期要求：{said}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    found = _standing_shape(segment)
    if found is not None:
        return found
    m = re.search(
        r"(?:请|麻烦)(?:你)?(?:以后|今后)?(?:都|一律|每次)?(用|说|回复|称呼我|叫我)(.+)$", segment
    )
    if m and re.search(r"以后|今后|都|一律|每次|总是", segment):
        return Match(
            f"用户的长期要求：{m.group(1)}{m.group(2).strip(TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    return None


# Standing rules by their shape rather than by an "always"/"以后" keyword: a rule of thumb,
# a ban with a time ("no calls before 10am", "早上十点前不要打电话"), how to do what the
# assistant does ("给我发消息的时候简短一点"), a threshold to check first ("超过五十块的东西先
# 问我"), "凡是…都…", "尽量", "第一时间告诉我".
_EN_STANDING_SHAPES: Final = re.compile(
    r"^(?:rule of thumb|as a (?:general )?rule|by default|house rule|general rule)[,:]?\s+(.+)$"
    r"|^(default to .+)$"
    r"|^(no (?:calls?|phone calls?|texts?|emails?|messages?|meetings?|deliveries|visits?|notifications?|pings?|"
    r"bookings?|appointments?|reminders?|promos?|marketing|spam) (?:before|after|during|on|at|between|over) .+)$",
    re.IGNORECASE,
)
_ZH_STANDING_SHAPES: Final = re.compile(
    r"^(?:[早晚]上|下午|中午|晚上|半夜)?[\d一二三四五六七八九十两]{1,3}[点點](?:半)?(?:前|后|後|之前|以后|以前)"
    r"(?:都|也)?(?:不要|别|千万别|不准|唔好)"
    r"|^(?:你)?(?:给我|帮我|跟我|同我|和我)?(?:发消息|发信息|發訊息|回复我?|回覆我?|提醒我|推荐|推薦|安排|订|打电话|联系我)"
    r"[^，,。]{0,10}(?:的时候|时|嘅时候)"
    r"|^(?:凡是|但凡|只要是?|所有)[^，,。；]{1,16}[，,]?\s*(?:都|就|一律)"
    r"|超过[^，,。；]{1,10}(?:的[^，,。；]{0,6})?(?:都|就)?(?:要)?先(?:问|跟|和|同|找)我"
    r"|(?:安排|约|訂|订|排)[^，,。；]{0,8}尽量"
    r"|第一时间(?:告诉|通知|发给|打给|联系)我"
    r"|每次[^，,。；]{1,10}都(?:要|得)?(?:先|同我|跟我|和我|给我|帮我|问我)"
    r"|^(?:都|一律)(?:要)?先(?:跟|和|同|问|找)我",
)
# A one-off: "明天给我发消息的时候带上地址", "这次安排尽量快点".
_ZH_THIS_TIME: Final = re.compile(r"明天|今天|今晚|这次|這次|下次|待会|一会|等下|刚才|聽日|今次")


def _standing_shape(segment: str) -> Match | None:
    text = segment.strip(TRIM)
    m = _EN_STANDING_SHAPES.match(text)
    if m:
        return Match(
            f"User's standing instruction: {next(g for g in m.groups() if g).strip(TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    if _ZH_STANDING_SHAPES.search(to_simplified(text)) and not _ZH_THIS_TIME.search(text):
        return Match(f"用户的长期要求：{text}", type=MemoryType.PROCEDURAL, importance=0.8)
    return None


# How long or in what shape the user wants answers: one slot, so "I prefer detailed
# explanations now" replaces "keep your answers short" ("回答详细一点" replaces "回复简短点").
_ANSWER_STYLE: Final = re.compile(
    r"\b(?:short|shorter|brief|concise|detailed|in detail|long|longer|bullet(?:ed)? points?|bullets|"
    r"one[- ]liners?|tl;?dr|step[- ]by[- ]step)\b"
    r"|简短|简洁|简单点|简单一点|短一点|短点|详细|长一点|分点|要点|一步一步|精简",
    re.IGNORECASE,
)
_ABOUT_ANSWERS: Final = re.compile(
    r"\b(?:answers?|repl(?:y|ies)|responses?|explanations?|messages?|summar(?:y|ies)|texts?)\b"
    r"|回答|回复|回覆|答复|解释|解釋|讲|說|说",
    re.IGNORECASE,
)


def keyed_answer_style(found: Match) -> Match:
    """``found`` under ``preference.answer_style`` when it says how long or in what shape
    answers should be; unchanged otherwise."""
    text = found.text
    if found.key is None and _ANSWER_STYLE.search(text) and _ABOUT_ANSWERS.search(text):
        return replace(found, key="preference.answer_style")
    return found


PREFERENCE_RULES: Final = (rule_contact, rule_shipping, rule_seat)
LIKE_RULES: Final = (rule_like, rule_instruction)
