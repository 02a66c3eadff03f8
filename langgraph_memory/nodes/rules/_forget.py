"""Forget requests, anywhere in a sentence, English and Chinese.

"btw, could you forget my old address", "and please delete my phone number
from your records", "I don't want you to remember my budget anymore",
"帮我把地址删掉", "不要再记着我的预算了", "麻烦把我的电话忘掉". What is to be
forgotten must be the user's ("my ...", "that I ...", a known topic): "please
delete the file" and "我忘了带钥匙" are not requests to forget memories.

``FORGET_TOPICS`` maps a topic to the slot key it forgets; reconcile deletes
every memory with that key (and its sub-keys), plus evidence turns that
mention the topic (``mentions_topic``).
"""

from __future__ import annotations

import re
from typing import Final

from langgraph_memory.nodes.rules._evidence import salient_terms, topics
from langgraph_memory.nodes.rules._match import Match
from langgraph_memory.nodes.rules._text import (
    CJK,
    TRIM,
    cjk_pairs,
    segments,
    sentences,
    to_simplified,
    to_third_person,
    word_set,
)

FORGET_TOPICS: Final[tuple[tuple[str, str], ...]] = (
    (r"address|地址|住址", "address"),
    (
        r"\bcity\b|where i live|\bi live\b|\bwe live\b|哪里住|住在|住哪|城市|(?:我|我们|我家)(?:现在)?住",
        "address.city",
    ),
    (r"nickname|what to call me|怎么称呼|称呼|叫我", "preferred_name"),
    (r"\bname\b|名字|姓名", "name"),
    (r"budget|预算", "budget"),
    (r"allerg|过敏", "allergy"),
    (r"\bdiet\b|饮食|吃素|vegetarian|vegan", "diet"),
    # The number, not a handset ("my old iPhone", "smartphone", "headphones").
    (r"(?<![a-z])phone(?! ?case)|电话|手机号", "phone"),
    (r"e-?mail|邮箱", "email"),
    (r"health|medical|condition|病|健康|身体|身體|体检", "health"),
    (r"membership|会员", "membership"),
    (r"group size|how many people|人数", "group_size"),
    (r"flight|航班|机票", "event.flight"),
    (r"birthday|生日", "birthday"),
)


# "I don't want the Karthik stuff on your records": the object, then where it is not to be
# (not "my profile", which in a support chat is often the user's account page).
_EN_NOT_ON_FILE: Final = re.compile(
    r"\b(?:don'?t|do not) want (.+?) (?:on|in) (?:(?:my|your|the) "
    r"(?:records?|file|files|notes?|memory|system)|your (?:profile|notes))\b",
    re.IGNORECASE,
)


# Where a memory is kept: a request naming it is about the user's own record ("scrub the
# Suresh loan from your notes").
_FROM_THE_RECORD: Final = re.compile(
    r"\bfrom (?:your|the) (?:records?|memory|notes?|files?|system)\b", re.IGNORECASE
)


def forget_key(topic: str) -> str | None:
    for pattern, key in FORGET_TOPICS:
        if re.search(pattern, topic, re.IGNORECASE):
            return key
    return None


def mentions_topic(text: str, key: str) -> bool:
    """Does ``text`` talk about the topic forgotten under ``key`` ("address" -> "地址")?

    Example:
        >>> mentions_topic("User said: my address is [ADDRESS]", "address")
        True
        >>> mentions_topic("User said: I like tea", "address")
        False
    """
    patterns = [p for p, k in FORGET_TOPICS if k == key or k.startswith(key + ".")]
    if any(re.search(p, text, re.IGNORECASE) for p in patterns):
        return True
    # "别记我身体的情况了" reaches the medicines too ("每天打胰岛素"), which name no illness.
    return key == "health" and "medication" in topics(text)


_EN_FORGET: Final = re.compile(
    r"\b(?:forget|erase|delete|remove|wipe|clear|drop|purge|scrap|scrub|scratch|strike|get rid of|stop remembering|stop storing|"
    # Asked, not told about: "you can let go of X" (not "we had to let go of the dog"),
    # "stop bringing up X" (not "I wish he'd stop bringing up X").
    r"(?:you can|you could|please|feel free to) let go of|"
    r"(?<!'d )(?<!to )(?<!he )(?<!she )(?<!they )(?<!would )(?<!could )(?<!'ll )stop (?:bringing up|mentioning)|"
    r"ignore(?= what i (?:said|told you|mentioned))|"
    r"no need to (?:remember|keep|store)|don'?t (?:remember|keep|store|save|hold on to|hang on to|keep hold of)|"
    r"(?:i'?d|i would) (?:rather|prefer)(?: if)? you didn'?t (?:remember|keep|store|save|know|hold on to|hang on to)|"
    r"(?:can|could|would) you not (?:remember|keep|store|save|record|hold on ?to|hang on ?to)|"
    r"do not (?:remember|keep|store|save)|no longer (?:remember|keep|store)|"
    r"(?:don'?t|do not) want you to (?:remember|keep|store|know)|(?:don'?t|do not) need to (?:remember|know))\s+"
    r"(?:about\s+|that\s+|what you know about\s+|everything (?:about|you know about)\s+|all about\s+)?(.+)$",
    re.IGNORECASE,
)
_EN_PERSONAL: Final = re.compile(
    r"^(?:my|mine|me|what you know|everything|all|the fact that|i\b|i'm|i am|where i|how i|what i)\b|"
    r"^(?:that|the)\s+(?:i|my)\b"
    # "which bank I use", "where I work", "how much I earn": a question about the user.
    r"|^(?:which|where|what|when|how|who|whether)\b.{0,30}?\b(?:i|my|me)\b",
    re.IGNORECASE,
)
_EN_NOT_FORGET: Final = re.compile(
    r"\b(?:don'?t|do not|never) forget\b|\bi forgot\b|\bforgot (?:my|to|the)\b|\bforget it\b"
    # A change of plan, not of memory: "drop me to 500", "drop us down to the basic tier".
    r"|\b(?:drop|clear|remove)\s+(?:me|us|it|him|her|them|my \w+)\s+(?:down\s+|back\s+)?(?:to|from)\b"
    # A lift, not a memory: "drop me off at the station".
    r"|\bdrop (?:me|us|him|her|them|it|the kids) off\b",
    re.IGNORECASE,
)
# "the sam stuff", "that whole Ben thing", "the London job business", "about Sam": what the
# user talked about, named by a back-reference or by a name alone.
_EN_BACK_REFERENCE: Final = re.compile(
    r"(?i:^(?:the|that|this|those|these|all the|all that|that whole|the whole|whole)\s+.{1,40}?\s+"
    r"(?:stuff|thing|things|business|bit|story|situation|drama|saga|matter|mess|news|issue|conversation|chat)\b"
    r"|^(?:all )?(?:that|this) (?:stuff|thing|business|bit|story)\b"
    r"|^(?:the|that|this|any|anything)\s+(?:bit|part|thing|stuff|detail|details|note|notes|info|information|line|entry)?\s*"
    r"(?:about|on|regarding|re)\s+\S"
    # A record named by its subject: "the medication note", "the landlord info".
    r"|^(?:the|that|this|those|these)\s+.{1,30}?\s+(?:note|notes|info|information|details?|entry|entries|record|records)\b)"
    r"|^[A-Z][a-z]+(?:'s [a-z]+)?$"
)
_ZH_VERB: Final = r"(?:忘记|忘掉|删除|删掉|删了|清除|清掉|抹掉|抹去|去掉|撤掉|撤了|拿掉|划掉|作废|别记了|不用记了|忘了吧)"
# "删除我的预算" / "不要再记着我的预算了": the verb, then the topic.
_ZH_FORGET_AFTER: Final = re.compile(
    r"(?:忘记|忘掉|删除|删掉|清除|清掉|抹去|不要再记住?|别再记住?|(?:不要|别|不用)再提(?!醒)起?|不要再记着|别再记着|别记住?(?!在心上)|不要记住?(?!在心上)|不要记得|别记得|"
    r"不用记住?(?!在心上)|不用再记|别存|不要存|不要保留|别保留|从记录里删除|从记录中删除|"
    # "我不想让你记住我有抑郁症": not wanting it known.
    r"(?:不想|不希望|唔想)(?:让|叫|俾)?你(?:们)?(?:记住|记得|记着|知道)|"
    r"(?:不要|别|唔好|唔使|不用)\s?(?:save|keep|store|record)\s?)"
    r"(?:掉)?(?:我的|关于我的?|我)?(.+)$"
)
# "帮我把地址删掉" / "我的电话忘掉吧": the topic, then the verb.
_ZH_FORGET_BEFORE: Final = re.compile(
    r"(?:把|将)(?:我的|关于)?(.{1,12}?)(?:给)?"
    + _ZH_VERB
    + r"|^(?:我的)(.{1,8}?)"
    + _ZH_VERB
    # "别把我儿子的病记下来": asked not to be written down.
    + r"|(?:别|不要|不用|唔好)(?:把|将)(?:我的|关于)?(.{1,12}?)(?:记下来|记下|记住|记着|记录下?来?|记低|存起来|保存|存档)"
)


# The particles after a forget verb: "删掉吧", "别记了哈", "forget 掉 ok".
_ZH_TAIL: Final = r"(?:\s?(?:吧|了|啦|喇|嘞|咯|哈|哦|喔|一下|ok|okay|好吗|好不好|行吗|可以吗))*"

# Verbs that also clear a cart or withdraw a complaint ("清一下", "撤掉", "作废"): a forget
# request only with a word that names a record (``_ZH_RECORD_REF``).
_ZH_WEAK_VERBS: Final = r"作废|撤掉|撤了|撤销|清一下|清掉|清理掉|清空|拿掉|划掉"

# "之前说 Ben 面 London job 那个事你删掉吧", "我哥那事儿别记了": the topic, then the verb,
# no 把; it must point back at something said ("之前", "那个事", "我").
_ZH_TOPIC_THEN_VERB: Final = re.compile(
    r"^(.{2,40}?)[，,\s]*(?:你|您|你们)?(?:就|也|还是|直接)?(?:帮我|给我)?(?:给)?"
    r"(?:(?:删掉|删了|删除|删咗|清除掉?)(?:佢|它|他|她)?|忘掉|忘了吧|别记[着住]?了?|不用记[着住]?了?|不要记[着住]?了?|唔好记住?|唔使记|当没听过|当没说过|别留着?了?"
    # Not to be written down: "离婚这事别记下来", "嗰样嘢唔好记低".
    r"|(?:别|不要|不用|唔好|唔使)记(?:下来|下|低)"
    # Not to be kept or raised again: "裁员那个信息不需要保留", "面试的事不用再提了",
    # "骗案那个不用提醒我了", "吵架的事你就别记在心上了".
    r"|(?:不用|不需要|不必|别|不要|唔好|唔使)再?(?:提醒我?|提起|提|保留|记在心上|放在心上)"
    r"|" + _ZH_WEAK_VERBS + r"|(?:别|不要|不用|唔好)(?:留档|存档|留底|记录|保存)"
    # Code-switched: "那个 thyroid 的事你 forget 掉 ok".
    r"|(?:forget|delete|remove)\s?掉?)"
    + _ZH_TAIL
    # A second verb may follow the first: "你别记了删掉吧", "别记着了，删了吧".
    + r"(?:[，,\s]*(?:删掉|删了|删除|删咗|忘掉|忘了吧|清掉)"
    + _ZH_TAIL
    + r")?$"
)
_ZH_WEAK_VERB: Final = re.compile(_ZH_WEAK_VERBS)
_ZH_RECORD_REF: Final = re.compile(
    r"那条|这条|的事|那个事|那件事|那事|这事|那个|这个|记录|资料|信息|嗰样|嗰个|嗰樣|嗰個"
)
_ZH_BACK_REFERENCE: Final = re.compile(
    r"之前|上次|刚才|以前|那个事|那件事|那事|的事|这事|说的|讲的|提的|我|嗰单|嗰样|嗰件|嘅嘢|嗰啲"
    # "女儿学校那条": the entry itself (not "那条裤子", a thing in a cart).
    r"|(?:那条|这条|嗰条)$"
)

# A forget verb with no topic of its own ("delete it", "帮我删掉", "删咗佢", "你们也别留着了"):
# the topic is the rest of the sentence ("that backup number is no longer used, delete it").
_BARE_FORGET: Final = re.compile(
    r"^(?:(?:ok|okay|so|and|also|please|pls|plz|kindly|abeg|can you|could you|would you|just)[,\s]+)*"
    r"(?:forget|delete|erase|remove|wipe|drop|scrap|scrub|clear|get rid of|bin|purge)\s*(?:it|that|this|them|those|that one|this one)?"
    r"(?:\s+(?:please|too|as well|for me|from (?:your|the|my) \w+(?: \w+)?|from memory))*"
    # "delete it from the ticket and forget it"
    r"(?:\s+(?:and|&)\s+(?:forget|delete|erase|remove|wipe|drop)\s*(?:it|that|this|them|about it)?)*"
    r"(?:\s+please)?$"
    # "don't write it down", "that was off the record", "keep it off the record".
    r"|^(?:(?:ok|okay|and|also|so|please)[,\s]+)*(?:don'?t|do not|please don'?t) (?:write|put|note|jot) (?:it|that|this|them) down(?:\s+(?:please|anywhere))*$"
    r"|^(?:(?:and|but|so)\s+)?(?:that|this|it) (?:was|is|'s) (?:off the record|between us|private|confidential)(?:\s+(?:though|ok|okay|please))*$"
    r"|^(?:(?:ok|okay|and|also)[,\s]+)*(?:don'?t|do not|no need to|stop) (?:keep|store|save|remember|hold on to)(?:ing)?\s*"
    r"(?:it|that|this|them|those)?(?:\s+(?:on file|anymore|any more|either|please))*$"
    r"|^(?:这个|那个|这件事|那件事|这事|那事|这些|那些|这段|那段)?[，,\s]*"  # "这个你别记了"
    r"(?:从|在)?(?:你们?|您)?(?:那边?|那里|这边|系统里)?(?:也|就)?(?:帮我|给我|麻烦|请)?"
    r"(?:把它|把这个|把那个|把他|把她|把佢)?(?:给)?"
    r"(?:删掉|删了|删除|删咗|删|剷咗|铲咗|剷走|忘掉|忘了吧|清掉|清除|去掉|抹掉|别记着?了?|不用记着?了?|不要记着?了?|别留着?了?|不要留着?了?|"
    r"唔好留|唔好记|唔使记|别存了?|(?:不要|别|不用|唔好)(?:保存|记录|留档|存档|留底)|当我没说过?(?:那个事|这个事|那事|这事|那件事)?|"
    r"当没听过|当没听到|当没说过|当我没说过?|就当没这回事|别再提了?|当作?没(?:看到|看见|听到|听过|说过)|"
    r"不想留(?:\s?(?:record|记录|底|档))?|不要留(?:\s?(?:record|记录|底|档))?|"
    # Code-switched: "你不用 keep 在我这边", "别 save 了".
    r"(?:不用|不要|别|唔使|唔好)\s?(?:keep|save|store|record|remember)(?:\s?(?:在|喺)?(?:我|你)?(?:这边|那边|这里|度))?)"
    r"(?:它|佢|他|她|吧|了|啦|掉|咗|嘅|呀|啊|好吗|好不好|行吗|可以吗|ok)*$"
    r"|^(?:我)?(?:唔想|不想|不要|别)再(?:提|讲|说|记)(?:了|啦|吧)?$"
    # Not wanting it on record: "我不想被记着", "佢唔想留记录", "she doesn't want it recorded".
    r"|^(?:我|佢|他|她|我们|佢哋)?(?:也|都)?(?:不想|唔想|不要|不希望)(?:被|你们?|你)?(?:记着|记著|记住|记录|记得|留底|留记录|留档|存档)"
    r"(?:了|啦|吧|喇|呀)?$"
    r"|^(?:(?:and|but|also|so)\s+)?(?:i|she|he|they|we)\s+(?:really\s+)?(?:don'?t|doesn'?t|do not|does not)\s+want\s+"
    r"(?:it|that|this|them|any of (?:it|that))\s+(?:recorded|on (?:record|file)|kept|stored|remembered|saved|written down)"
    r"(?:\s+(?:anywhere|either|please))*$"
    # Code-switched, the object a word for the record itself: "可以帮我 delete 掉那个 record 吗".
    r"|^(?:可以|可不可以|能不能|能|麻烦|请)?(?:帮我|给我)?\s?(?:delete|remove|erase|forget|clear)\s?掉?\s?"
    r"(?:那个|这个|那条|这条|嗰个)?\s?(?:record|记录|紀錄|资料|entry|note)?\s?(?:吗|吧|啦|好吗|可以吗|ok)?$"
    r"|^(?:(?:ok|okay|and|also|just)[,\s]+)*(?:scrap|strike|bin|drop) (?:that|this|it)(?: one)?(?:\s+please)?$"
    # "you don't need to keep that", "I'd rather it wasn't on file", "can delete or not?"
    r"|^(?:(?:ok|okay|and|also|so|but)[,\s]+)*(?:you )?(?:don'?t|do not|no) need to (?:keep|store|save|remember|hold on ?to|record)"
    r"\s*(?:it|that|this|them)?(?:\s+(?:on file|anymore|any more|either|please))*$"
    r"|^(?:(?:and|but|so|also)\s+)?(?:i'?d|i would) (?:rather|prefer)(?: if)? (?:it|that|you) (?:wasn'?t|weren'?t|isn'?t|is not|was not|didn'?t keep it|not keep it)"
    r"(?:\s+(?:on file|on record|kept|stored|recorded|saved|remembered|written down|anywhere))+$"
    r"|^(?:(?:and|but|so|also)\s+)?(?:i'?d|i would) (?:rather|prefer to) not have (?:it|that|this|them)"
    r"(?:\s+(?:on file|on record|kept|stored|recorded|saved|remembered|written down|anywhere))+$"
    r"|^(?:can|could) (?:you )?(?:delete|remove|forget|erase|wipe)(?: (?:it|that|this))?(?: or not)?(?: lah| ah| please)?$"
    # "这条提醒可以删掉了", "那条记录可以不要了"
    r"|^(?:这条|那条|这个|那个)(?:提醒|记录|备注|笔记)?(?:就)?可以(?:帮我)?(?:删掉|删了|删除|删咗|不要|不用留|去掉)(?:了|吧|啦)*$"
    # "当我冇讲过" (Cantonese): said as if never said.
    r"|^(?:之前讲嘅|之前讲的|啱啱讲嘅)?(?:嗰样嘢|嗰个)?[，,\s]*当(?:我)?冇(?:讲过|讲|说过|听过)(?:啦|喇|吧|嘞)*$"
    # "forget I ever mentioned it, would you", "pretend I never said that": the saying is
    # the object; what was said is the rest of the sentence.
    r"|^(?:(?:ok|okay|so|and|also|please|just|oh)[,\s]+)*(?:(?:can|could|would) you\s+)?(?:please\s+)?"
    r"(?:forget|pretend|act like|act as if)\s+(?:that\s+)?(?:i|we)\s+(?:ever\s+|even\s+|never\s+|just\s+)?"
    r"(?:said|mentioned|told you|brought (?:it|that|this) up|talked about it|said anything|mentioned anything)"
    r"(?:\s+(?:it|that|this|anything|about it|about that|to you))*"
    r"(?:[,\s]+(?:would you|will you|please|ok|okay|thanks|yeah))*$",
    re.IGNORECASE,
)


# What a forget request says to keep: "少盐那个可以留着", "the birthday can stay", "keep the
# appointment history". It is no part of the topic.
_KEEP_CLAUSE: Final = re.compile(
    r"(?:可以|就|还是|倒是)?(?:留着|保留着?|留住|照留|唔使删|不用删|别删|不要删)|"
    r"\b(?:can stay|is fine|are fine|is ok(?:ay)?|keep (?:the|that|my)|keeping (?:the|that|my)|leave (?:the|that|my) )",
    re.IGNORECASE,
)


def keeps(segment: str) -> bool:
    """Does this clause of a forget request say what is to stay?

    Example:
        >>> keeps("少盐那个可以留着"), keeps("keep the birthday though"), keeps("删了吧")
        (True, True, False)
    """
    return _KEEP_CLAUSE.search(to_simplified(segment)) is not None


# A clause that only changes the subject of the talk, no topic of a forget request:
# "actually, please forget that", "算了，这个你别记了".
_FILLER: Final = re.compile(
    r"^(?:actually|hmm+|oh|um+|uh|wait|sorry|never ?mind|on second thought|second thoughts|"
    r"算了|其实|哎|唉|嗯|啊|对了|不过|还是|诶|哎呀|咁|算啦|冇所谓"
    # A pointer alone names nothing: "那个，删掉吧" is about what was said before it.
    r"|that|this|it|those|these|那个|这个|那件事|这件事|那事|这事|那些|这些|嗰个|嗰样|嗰件事)$",
    re.IGNORECASE,
)


def is_filler(segment: str) -> bool:
    """A clause with nothing in it but a turn of the talk ("actually", "算了")?"""
    return _FILLER.match(to_simplified(segment).strip(TRIM + " ?？!！")) is not None


def only_forget_requests(text: str) -> bool:
    """Is ``text`` nothing but bare forget requests and fillers ("Actually, forget that.
    Don't keep it.")? Then what it points at was said before it.

    Example:
        >>> only_forget_requests("Actually, forget that."), only_forget_requests("Delete it. I moved.")
        (True, False)
    """
    return all(bare_forget(p) or is_filler(p) for s in sentences(text) for p in segments(s))


# What may open any request without changing it: "you can bin it", "please don't keep
# that", "唔该帮我剷咗佢".
_POLITE_OPENING: Final = re.compile(
    r"^(?:(?:ok|okay|so|and|also|but|then|please|pls|plz|kindly|just|actually|hmm+|oh|um+|wait|"
    r"sorry|on second thought|you can|you could|you may|feel free to|go ahead and)[,\s]+"
    r"|(?:唔该|麻烦你)[，,\s]*)+",
    re.IGNORECASE,
)


def bare_forget(segment: str) -> bool:
    """A forget request whose topic is elsewhere in the sentence ("..., delete it").

    Example:
        >>> bare_forget("帮我删掉"), bare_forget("delete it please"), bare_forget("delete the file")
        (True, True, False)
    """
    # A request asked as a question is still one: "can you delete it?", "可以删掉吗？".
    plain = _POLITE_OPENING.sub("", to_simplified(segment).strip(TRIM + " ?？"))
    return bool(_BARE_FORGET.match(plain))


# The redactor's placeholders a topic refers to: "delete that card number" covers every
# memory holding a masked card, whatever its wording ("User's Mastercard is [BANK_CARD]").
_PLACEHOLDER_TOPICS: Final[tuple[tuple[str, str], ...]] = (
    (r"card|卡号|银行卡|信用卡|iban|bank account|银行账号|银行账户", "[BANK_CARD"),
    # The number, not the device: "我爸拿我旧手机用的事" is about a handset.
    (r"phone|mobile|电话|号码|手机号", "[PHONE"),
    (r"e-?mail|邮箱", "[EMAIL"),
    (r"address|地址|住址", "[ADDRESS"),
    (r"\bid\b|passport|身份证|证件|\bssn\b|social security|hkid|nric", "[ID_NUMBER"),
    (r"password|pin|passcode|密码|验证码|\botp\b", "[PASSWORD"),
)


def forget_reaches(topic: str, text: str) -> bool:
    """Does a forget request on ``topic`` cover a memory reading ``text``?

    It does when the memory holds a masked identifier of the kind the topic names, or
    enough of what the topic names: its names and nouns ("sam", "London", "job"; 3+
    letters, whole words when short), kinship words ("我哥", "my sister"), the head noun
    of a Chinese back-reference ("狗那个备注" -> 狗), and Chinese word pairs. With two or
    more such words, two must be there ("Ben 面 London job" covers "Ben 在面 London 的
    job", not "老公 Ben 是 Singaporean"); else the one; Chinese pairs alone need two.

    Example:
        >>> forget_reaches("that card number I typed", "User's Mastercard is [BANK_CARD]")
        True
        >>> forget_reaches("之前讲 Kenny 嗰啲嘢", "用户说：我前男友 Kenny 成日 WhatsApp 我")
        True
        >>> forget_reaches("the sam stuff", "User said: my roommate sam is allergic to cats")
        True
        >>> forget_reaches("Ben 面 London job", "用户说：老公 Ben 是 Singaporean")
        False
        >>> forget_reaches("my old address", "User likes tea")
        False
    """
    if _names_masked_kind(topic, text):
        return True
    hits, units, shared_pairs = _overlap(topic, text)
    if units:
        return hits >= min(2, units) or (hits >= 1 and shared_pairs >= 2)
    return shared_pairs >= 2


def touches_topic(topic: str, text: str, *, coarse: bool = True) -> bool:
    """Does ``text`` share anything at all with a forget request's ``topic`` (one name,
    noun, kin word, head noun, Chinese content pair or, with ``coarse``, a coarse topic:
    "吃药的事" touches "二甲双胍加到一天两次")? Looser than ``forget_reaches``: what decides
    which pieces of a reached turn may stay."""
    return reach_score(topic, text, coarse=coarse) >= 1


def reach_score(topic: str, text: str, *, coarse: bool = True) -> int:
    """How much of a forget request's ``topic`` ``text`` holds: names, nouns, kin words and
    head nouns it shares, Chinese content pairs, coarse topics (``topics``; not with
    ``coarse=False``), and a masked identifier of the kind the topic names. What a request
    that reaches nothing under ``forget_reaches`` erases instead: the memories that hold
    the most of it."""
    hits, _, shared_pairs = _overlap(topic, text)
    shared_topics = len(topics(_focus(topic)) & topics(text)) if coarse else 0
    return hits + shared_pairs + shared_topics + 2 * _names_masked_kind(topic, text)


def _names_masked_kind(topic: str, text: str) -> bool:
    """``text`` holds a masked identifier of the kind ``topic`` names ("that card number")."""
    return any(
        placeholder in text and re.search(pattern, topic, re.IGNORECASE)
        for pattern, placeholder in _PLACEHOLDER_TOPICS
    )


def _overlap(topic: str, text: str) -> tuple[int, int, int]:
    """What ``text`` shares with the focus of ``topic``: (hits among its names, nouns, kin
    words and head nouns; how many of those the topic has; shared Chinese content pairs)."""
    lowered = text.lower()
    topic = _focus(topic)
    words = _topic_words(topic)
    hits = sum(_has_word(word, lowered) for word in words)
    kin = _kin(topic)
    hits += sum(_has_kin(k, text) for k in kin)
    heads = {h for h in _heads(topic) if h not in kin}
    hits += sum(h in text for h in heads)
    units = len(words) + len(kin) + len(heads)
    # Chinese: content pairs ("备用" + "号码"); one common pair never deletes alone.
    pairs = {p for p in cjk_pairs(topic) if not _ZH_FUNCTION.search(p)} - _GENERIC_TOPIC_WORDS
    return hits, units, sum(pair in text for pair in pairs)


def _topic_words(topic: str) -> set[str]:
    """The topic's Latin content words: 4+ letters, or 3-letter names and nouns ("sam", "job")."""
    found = {w.lower().removesuffix("'s") for w in re.findall(r"[A-Za-z][A-Za-z'-]{2,}", topic)}
    return {
        w
        for w in found
        if (len(w) >= 4 and w in salient_terms(w)) or (len(w) == 3 and w not in _SHORT_STOP)
    } - _GENERIC_TOPIC_WORDS


def _has_word(word: str, lowered: str) -> bool:
    # 4+ letters may sit inside a longer word ("card" in "Mastercard"); 3 letters must not
    # ("sam" is not in "same").
    if len(word) >= 4:
        return word in lowered
    return re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", lowered) is not None


_KIN: Final = re.compile(
    r"\b(?:brother|sister|mum|mom|mother|dad|father|wife|husband|partner|son|daughter|"
    r"grandma|grandpa|grandson|granddaughter|aunt|uncle|cousin|nephew|niece|in-laws?|ex)\b"
    r"|(?:我|用户)(?:的)?(哥|姐|弟|妹|妈|爸|爹|娘|婆|公|仔|囡)"
    r"|(老公|老婆|儿子|女儿|闺女|婆婆|公公|岳母|岳父|丈母娘|外婆|外公|奶奶|爷爷|舅舅|阿姨|叔叔|表哥|表姐|堂哥|"
    r"前男友|前女友|前夫|前妻|男朋友|女朋友|哥哥|姐姐|弟弟|妹妹)",
    re.IGNORECASE,
)


def _kin(topic: str) -> set[str]:
    return {next(g for g in m.groups() if g) if any(m.groups()) else m.group(0).lower()
            for m in _KIN.finditer(topic)}  # fmt: skip


def _has_kin(kin: str, text: str) -> bool:
    if kin.isascii():
        return re.search(rf"\b{re.escape(kin)}s?\b", text, re.IGNORECASE) is not None
    if len(kin) == 1:  # "哥" only as someone's: "我哥", "用户的哥", "他哥" (not "哥们")
        return re.search(rf"[我你他她用户的]{kin}(?![们們妈媽爸哥姐弟妹夫])", text) is not None
    return kin in text


# The noun a Chinese back-reference points at: "房子那事儿" -> 房子, "狗那个备注" -> 狗.
_ZH_HEAD: Final = re.compile(
    r"([\u4e00-\u9fff]{1,2})(?=那个|那件|那事|这个事|这事|的事|那些|那段|那条|嗰啲|嗰件)"
)
# One-character nouns a back-reference often names; any other single character is too
# common to stand for a topic ("子" of "房子" is in "儿子").
_ZH_ONE_CHAR_NOUNS: Final = frozenset("狗猫车房病药钱债鱼鸟猪兔马")


def _heads(topic: str) -> set[str]:
    out = set()
    for pair in _ZH_HEAD.findall(topic):
        if pair[-1] in _ZH_ONE_CHAR_NOUNS:
            out.add(pair[-1])
        elif len(pair) < 2:
            continue
        elif (
            "户" not in pair and not _ZH_FUNCTION.search(pair) and pair not in _GENERIC_TOPIC_WORDS
        ):
            out.add(pair)
    return out


# The clause of a request that points back at what was said ("另外狗那个备注不用记了，狗送我
# 爸妈那儿养了": the dog, not the parents; "what I said about Tomasz, I was venting").
_POINTS_BACK: Final = re.compile(
    r"那个|那件|那事|这事|的事|那些|那段|嗰啲|嗰件|\b(?:what (?:i|user) (?:said|told|mentioned)|about|stuff|thing|business)\b",
    re.IGNORECASE,
)


def _focus(topic: str) -> str:
    clauses = [c for c in re.split(r"[，,；;]\s*", topic) if c.strip()]
    pointing = [c for c in clauses if _POINTS_BACK.search(c)]
    return "，".join(pointing) if pointing and len(pointing) < len(clauses) else topic


_SHORT_STOP: Final = word_set(
    "the and for you are was not but her his him she our out any all can did get got has had "
    "how its let may now off old one own say see too two use way who why yes yet bit lot new "
    "that this what with said told stuff from btw pls plz also just ask asked tell thing again "
    "lol omg yeah yep nah hey thx"
)


_ZH_FUNCTION: Final = re.compile(
    r"[了的不是在有我你他她它们个那这就也都还要会能可吧呢吗啊呀嗰啲咗佢唔嘅讲说帮把给用]"
)

# Words every forget request shares with many memories; they alone never reach one.
_GENERIC_TOPIC_WORDS: Final = word_set(
    "number last time typed told said gave mentioned earlier before thing things stuff business "
    "matter situation story that never mind would could "
    "user user's users venting kept keep remember forget delete please btw anyway "
    "用户 之前 以前 那个 这个 上次 刚才 东西 事情 要求 忘记"
)


# Who passed the request on ("Sophie 说 ACL 那个 detail 你们别留"): the speaker is no part of
# the topic, or the request would reach everything said about her.
_ZH_RELAYED_BY: Final = re.compile(
    r"^(?:顺便\s*)?(?:[A-Z][a-zA-Z]+|(?:我)?(?:太太|老婆|老公|先生|妈妈|妈|爸爸|爸|女儿|儿子|老豆|老母))\s*"
    r"(?:说|話|话|讲|讲话)\s*(?=\S)"
)
# The request's own words left at the topic's end ("ACL 那个 detail 你们别留").
_ZH_REQUEST_TAIL: Final = re.compile(
    r"\s*(?:你们|你|您)?(?:就|也)?(?:别|不要|不用|唔好)(?:留|存|记)\S{0,3}$"
)


def _zh_topic(topic: str) -> str:
    """A Chinese topic without the verb's tail before it ("着旺财了" after "别再记"), the
    politeness or particles after it ("工资信息请", "地址吧"), and who relayed it."""
    topic = re.sub(r"^(?:[着住得掉低]|下来)", "", topic)
    topic = _ZH_REQUEST_TAIL.sub("", _ZH_RELAYED_BY.sub("", topic))
    return re.sub(r"(?:[了吧啊呀]|的都|都|请|麻烦|你|您)+$", "", topic).strip(TRIM)


def forget_request(topic: str) -> Match:
    """The forget candidate for ``topic`` (its slot key when the topic names one)."""
    topic = _zh_topic(topic.strip(TRIM + " "))
    if re.search(r"[\u3400-\u9fff]", topic):
        return Match(
            f"用户要求忘记：{to_third_person(topic)}",
            key=forget_key(topic),
            importance=1.0,
            forget=True,
        )
    return Match(
        f"User asked to forget: {to_third_person(topic)}",
        key=forget_key(topic),
        importance=1.0,
        forget=True,
    )


# The key of "forget that" said with nothing to point at in its own turn ("Actually,
# please forget that."): it means what the user said just before, which reconcile
# finds by time (``nodes/reconcile/_forgetting.py`` ``_previous_statement``), not by words.
PREVIOUS_STATEMENT_KEY: Final = "forget.previous_statement"


def forget_previous(cjk: bool) -> Match:
    """The forget candidate for "forget that" whose topic is the user's previous message."""
    return Match(
        "用户要求忘记刚才说的" if cjk else "User asked to forget what they said just before",
        key=PREVIOUS_STATEMENT_KEY,
        importance=1.0,
        forget=True,
    )


# "..., abeg remove it from my profile", "please take that off my file", "she doesn't want
# it recorded": the request points back with "it"; what it points at is the sentence before it.
_EN_FORGET_IT: Final = re.compile(
    r"[,;:…\s]+(?:(?:and|so|but|then|please|pls|plz|kindly|abeg|can you|could you|just)[,\s]+)*"
    r"(?:(?:remove|delete|erase|wipe|drop|take|clear|scrub)\s+(?:it|that|this|them)\s+(?:off|out of|from)\s+"
    r"(?:(?:my|your|the|her|his|our)\s+)?(?:profile|records?|file|notes?|system|memory|account|details)"
    r"|(?:i|she|he|they|we)\s+(?:really\s+)?(?:don'?t|doesn'?t|do not|does not)\s+want\s+(?:it|that|this)\s+"
    r"(?:recorded|on (?:record|file)|kept|stored|remembered|saved|written down))\b",
    re.IGNORECASE,
)


# "take my sister's address off your records", "keep Kayla's pottery thing off the record":
# the object sits between the verb and where it is to leave.
_EN_TAKE_OFF: Final = re.compile(
    r"\b(?:take|keep|leave|get)\s+(.+?)\s+(?:off|out of)\s+(?:the|your|my)\s+"
    r"(?:records?|notes?|file|files|system|memory|profile|books)\b",
    re.IGNORECASE,
)


def forget_it_topic(sentence: str) -> str | None:
    """The topic of a forget request that says only "it", from the sentence before the
    request ("Then that thing I told you about Ngozi being pregnant, abeg remove it from
    my profile"); ``None`` when the sentence holds no such request or nothing before it.

    Example:
        >>> forget_it_topic("the bit about my knee, please take it off my file")
        'the bit about my knee'
        >>> forget_it_topic("I took it off my list") is None
        True
    """
    m = _EN_FORGET_IT.search(sentence)
    if m is None:
        return None
    topic = sentence[: m.start()].strip(TRIM + " ")
    if only_forget_requests(topic):
        # "Actually, please forget that, I don't want it on record": the sentence before
        # is a request too, and points further back (the bare forget, ``read_turn``).
        return None
    return topic or None


# "忘了我前男友的事吧", "你就忘了这件事吧": 忘了 as an ask (a closing particle), not "I forgot".
_ZH_FORGET_IT_ASKED: Final = re.compile(
    r"^(?:你|请|麻烦你?)?(?:就|帮我)?(?:把)?忘了(?:它|吧)?[，,\s]*((?:我的|关于我的?|我)?.{1,20}?)"
    r"(?:吧|好吗|好不好|啦|哈)$"
)
# Verbs only a memory takes ("记着", "保存", "留底"): their object is the user's record.
_ZH_MEMORY_VERB: Final = re.compile(r"记[着住得低]|记了|记下|存|保留|保存|留底|留档|存档")
# Words that name a record or an identifier: "车牌号码", "工资信息", "银行卡资料".
_ZH_PERSONAL_DATA: Final = re.compile(
    r"号码|号|账号|账户|密码|信息|资料|记录|地址|电话|邮箱|名字|生日|证件|车牌"
)


# What a topic is not: forget verbs and particles ("了删掉吧" after "你别记").
_ONLY_VERBS: Final = re.compile(
    _ZH_VERB + r"|删|忘|记|一下|唔使|唔好|不用|[了吧吗啊呀啦掉住着得喇嘞咯啰哦喔呢嘛咗]"
)


# What before a memory verb is not a topic: the user's own forgetting ("我都唔记得").
_SELF_FORGOT: Final = re.compile(r"(?:我|我都|我又|我也)$")


def rule_forget(segment: str) -> Match | None:
    if _EN_NOT_FORGET.search(segment):
        return None
    m = _EN_FORGET.search(segment) or _EN_TAKE_OFF.search(segment)
    m = m or _EN_NOT_ON_FILE.search(segment)
    if m:
        topic = m.group(1).strip(TRIM)
        topic = re.sub(r"\s+(?:from (?:your|the|my) (?:records?|memory|files?|system|notes?|profile|list)|please|anymore|any more|now)\b.*$",
                       "", topic, flags=re.IGNORECASE).strip(TRIM)  # fmt: skip
        key = forget_key(topic)
        personal = (
            bool(_EN_PERSONAL.match(topic))
            or key is not None
            or _EN_BACK_REFERENCE.search(topic) is not None
            or re.search(
                r"\bi (?:gave|told|mentioned|said|shared|typed|sent|entered|wrote|put|left|provided)\b"
                # Only what is the user's is known or kept: "I'd prefer you didn't know about X".
                r"|\byou didn'?t (?:know|remember|keep)\b"
                r"|\bmy\b|\b(?:that|the|this) (?:card|number|pin|password|address|info)",
                m.group(0),  # with the "that" the pattern took off the topic ("wipe that PIN hint")
                re.IGNORECASE,
            )
            is not None
        )
        # "keep X off the record", "don't want X on my profile" name their object; so does
        # a request that says where it is kept ("scrub the Suresh loan from your notes").
        personal = personal or m.re is _EN_TAKE_OFF or m.re is _EN_NOT_ON_FILE
        personal = personal or _FROM_THE_RECORD.search(segment) is not None
        if topic and personal:
            return Match(
                f"User asked to forget: {to_third_person(topic).strip(TRIM)}",
                key=key,
                importance=1.0,
                forget=True,
            )
        if not CJK.search(segment):
            return None
        # Code-switched ("那个 NIP 的事情 forget 掉吧"): the Chinese reading may find the topic.
    segment = to_simplified(segment)  # one for one: "當作沒看到", "從你們那邊刪掉"
    told = _ZH_FORGET_IT_ASKED.match(segment.strip(TRIM + " "))
    if told:
        return forget_request(told.group(1))
    if re.search(
        r"忘了(?!记|吧)|忘记(?:带|拿|买|说|做|了)", segment
    ):  # "我忘了带钥匙": the user forgot
        return None
    m = _ZH_FORGET_AFTER.search(segment)
    if m is None or not _ONLY_VERBS.sub("", _zh_topic(m.group(1))).strip(TRIM + " "):
        after = m
        m = _ZH_FORGET_BEFORE.search(segment)
        ahead = segment[: after.start()].strip(TRIM + " ") if after is not None else ""
        named = _ZH_BACK_REFERENCE.search(ahead) or _ZH_RECORD_REF.search(ahead)
        if m is None and ahead and named and not _SELF_FORGOT.search(ahead):
            # "吵架嗰单嘢你唔使记住喇": nothing after the verb but particles; the topic came first.
            return forget_request(re.sub(r"[你您]$", "", ahead))
        if m is None and after is not None and not ahead:
            m = after  # "删咗佢喇" alone: what it forgets is reconcile's to find
    if m is None:
        back = _ZH_TOPIC_THEN_VERB.match(segment.strip(TRIM + " "))
        if back and _ZH_WEAK_VERB.match(
            segment.strip(TRIM + " ")[back.end(1) :].lstrip("，, 你您们就也还是直接帮我给")
        ):
            # "清一下", "撤掉", "作废" also clear a cart or withdraw a complaint: only with
            # what names a record ("那条", "的事", "那个").
            back = back if _ZH_RECORD_REF.search(back.group(1)) else None
        if back and (
            _ZH_BACK_REFERENCE.search(back.group(1))
            or _ZH_RECORD_REF.search(back.group(1))
            or forget_key(back.group(1))
            or _ZH_PERSONAL_DATA.search(back.group(1))
        ):
            return forget_request(back.group(1))
    if m:
        topic = _zh_topic(next((g for g in m.groups() if g), ""))
        if not topic:
            return None
        key = forget_key(topic)
        # "别再记着旺财了": a verb only memory has names its object as the user's.
        mine = "我" in segment[: m.end()] or key is not None or _ZH_MEMORY_VERB.search(m.group(0))
        if mine and not re.match(r"^(?:这个|那个)?(?:文件|图片|照片|邮件|记录|订单)$", topic):
            return Match(
                f"用户要求忘记：{to_third_person(topic).strip(TRIM)}",
                key=key,
                importance=1.0,
                forget=True,
            )
    return None
