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

from langgraph_memory.nodes.rules._text import CJK as CJK_CHAR
from langgraph_memory.nodes.rules._text import cjk_pairs, word_set

# The labels memories start with: shared by many, they never make two the same subject.
_PREFIX: Final = re.compile(
    r"^(?:User said|用户说|Assistant committed|客服承诺|User agreed to|用户同意了客服的提议|"
    r"User asked to remember|用户要求记住|User's standing instruction|用户的长期要求)[:：]\s*"
)
_RESOLVED_PATTERN: Final = (
    r"\b(?:arrived|did arrive|has arrived|came through|come through|went through|received|got (?:it|them|the \w+|my \w+)"
    r"(?: back)?|sorted|resolved|fixed|working again|works again|all good now|refunded|credited|showed up|turned up|"
    r"paid back|cleared up|normally again|normal again|back to normal|eating \w+ again)\b"
    r"|收到了|收到啦|收到喇|收咗|到账了|到帳了|已到账|已到帳|退回来了|退了回来|到了|(?:修|弄|搞|处理|處理|办|辦|装|裝)好了|"
    r"解决了|解決了|搞定了|没问题了|沒問題了|正常了|恢复了|恢復了|能用了|可以用了"
)
_RESOLVED: Final = re.compile(_RESOLVED_PATTERN, re.IGNORECASE)
_UPDATE: Final = re.compile(
    r"\b(?:now|switched|switching|switch|moved|moving|changed|changing|instead|no longer|anymore|"
    r"any more|upgraded|downgraded|replaced|updated|rescheduled|postponed|pushed|cancell?ed|"
    r"these days|from now on|not anymore|gave up|quit|stopped|started|new|shifted|bumped|brought forward|"
    r"change of plans?|plans? changed)\b"
    r"|现在|改成|改为|改為|改到|换成|換成|换到|換到|换了|換了|搬到|搬去|搬家|不再|已经不|已經不|取消|推迟|推遲|延后|延後|延期|提前(?![^，,。；]{0,6}(?:提醒|通知|告诉|叫我|说))|改签|新的|变成|变了|开始|停了|不用了"
    # "改看 Clementi", "改住酒店", "就换129的", "决定不看 Bukit Timah 了", "调高", "提到3万"
    r"|改(?![善进革正良造装])[\u4e00-\u9fff]|换(?:个|成|到|了|去)?\s*\d|不(?:看|要|买|去|住|用|做|订|考虑)[^，,。]{0,12}了"
    r"|调高|调低|提高到?|降到|提到|加到|升到|涨到|减到|挪到|挪去|调到|移到|改在|转咗|转用|转到|唔再|唔用"
    # Something that stopped: "家教结束了", "不补了", "that class is over", "no more lessons".
    r"|修改|更改|变更|\b(?:modified|amended)\b|结束了|结束啦|完结了|不(?![错少多好行早晚久远够对])[\u4e00-\u9fff]了"
    r"|\b(?:ended|is over|are over|finished|no more|not any ?more)\b"
    # Something pending that came ("the refund did arrive", "退款收到了", "修好了"): it ends
    # the complaint or request about it (``_RESOLVED``).
    r"|" + _RESOLVED_PATTERN +
    # Stopping: "别打电话了", "不要再寄了", "stop calling me".
    r"|别[^，,。；;]{1,8}了|不要再|别再|\bstop \w+ing\b"
    # "升千兆", "升吧", "降到100M": a tier changed.
    r"|升吧|升级了|升級了|降级了|降級了|升到",
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
# "switched to the 300M package" replaces "I'm on 500M for 199 a month", "the doctor's
# switched my blood thinner" replaces "I take my warfarin at 6". Each family is broad on
# purpose (an unseen sentence of the class must land in it) and bilingual; a term that
# belongs to two families is in both.
_TOPICS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        (
            "home",
            r"\b(?:live|lives|living|(?:we|i|we have|i have|we've|i've) (?:just )?moved|moved (?:to|in|out|house)|moving (?:to|in|out|house)|relocat\w*|home|flat|apartment|house|"
            r"address|based in|we'?re in|i'?m in|(?:\d+(?:st|nd|rd|th)|ground|top|first|second|third) floor|elevator|lift|stairs|"
            r"neighbou?rhood|landlord|rent|renting|mortgage)\b"
            r"|住在|住址|地址|搬家|搬到|搬去|搬咗|新家|住处|(?:我|我们|我家|我們)(?:现在|而家)?住|(?:我|我们|我們)家(?:在|喺)|"
            r"楼层|\d+楼|[一二三四五六七八九十]楼|电梯|電梯|爬楼|小区|房东|租房|房租",
        ),
        (
            "plan",
            r"\b(?:(?<!change of )plan(?!s? changed)|tariff|package|bundle|subscription|contract|unlimited|"
            r"tier|membership|upgrad\w*|downgrad\w*|renewal|renew\w*|\d+\s?(?:mb|m|mbps))\b"
            # Not "宽带"/"broadband" alone: the service, which a fault ("宽带老掉线") also names.
            r"|套餐|月租|\d+\s?[mM兆](?![a-z])|千兆|百兆|升级|降级|升档|降档|升吧|续费|续约|会员|會員|订阅|訂閱",
        ),
        # A data pack is not the broadband tier: "流量包也跟着改" must not retire "升千兆".
        (
            "data",
            r"\b(?:data|roaming|\d+\s?gb|data pack|top-?up|sim)\b|流量|漫游|\d+\s?G\b",
        ),
        (
            "stay",
            r"\b(?:hotel|room|booking|reservation|check-?in|check-?out|nights?|suite|inn|airbnb|hostel)\b|"
            r"酒店|房间|入住|退房|民宿|房型|大床房|双床房|[一两二三四五六七八九十\d]晚",
        ),
        (
            "trip",
            r"\b(?:trip|travel\w*|holiday|vacation|getaway|journey|itinerary|fly(?:ing)? (?:out|home|back)|flew|"
            r"coming back|come back|heading (?:back|home|out|down|up)|back home|outbound|return(?:ing)? (?:flight|trip|home|on)|"
            r"depart\w*|booked \w+ to \w+|visit(?:ing)? (?:my|our|the)|going (?:down|up|over) to)\b"
            r"|出差|旅游|旅行|度假|行程|出行|去[\u4e00-\u9fff]{1,4}玩|那趟|这趟|那次旅|回国|回老家|回乡|出国|放假去|自由行",
        ),
        (
            "transport",
            r"\b(?:driv(?:e|es|ing|en)|drove|car|train|trains|rail|railway|coach|bus|fly|flying|flight|plane|taxi|uber|"
            r"cab|ferry|cycle|cycling|bike|tube|subway|metro|by road|lift from|pick(?:ing)? (?:me|us) up)\b"
            r"|开车|自驾|坐车|火车|高铁|動車|动车|飞机|飛機|航班|打车|打的|地铁|地鐵|公交|巴士|大巴|坐船|骑车|搭车|接送|接我|送我去",
        ),
        (
            "delivery",
            r"\b(?:deliver\w*|shipping|ship|shipped|courier|parcel|dispatch\w*|tracking|backorder\w*|eta|pick-?up|collection)\b"
            r"|送货|配送|快递|發貨|发货|收货|送到|寄出|寄到|寄过来|到货|物流|包裹|取件|上门取",
        ),
        (
            "contact",
            r"\b(?:call|calls|calling|ring|ringing|text|texts|texting|sms|email|e-mail|phone|whatsapp|voicemail|message me)\b|"
            r"电话|電話|短信|簡訊|邮件|郵件|邮箱|郵箱|微信|联系|聯絡|打给我|打我|发消息",
        ),
        (
            "work",
            r"\b(?:job|work|works|office|company|employer|shift|shifts|career|hired|promoted|commute)\b"
            r"|公司|上班|返工|工作|单位|單位|转工|跳槽|入职|入職|辞职|辭職|离职|離職",
        ),
        (
            "appointment",
            r"\b(?:appointment|install\w*|visit|technician|engineer|slot|gp|dentist|checkup|check-up)\b|预约|預約|安装|上门|师傅|约",
        ),
        # Taking a medicine: generic words, and drug names by their usual endings
        # (warfarin, apixaban, metformin, ramipril, atorvastatin, omeprazole ...).
        (
            "medication",
            r"\b(?:medication|medications|medicine|meds|pills?|tablets?|capsules?|dose|doses|dosage|prescription|prescribed|"
            r"blood thinner|thinners?|inhaler|insulin|antibiotics?|painkillers?|take my \w+|on (?:a|the) course of|"
            r"\w+(?:farin|xaban|gatran|pril|olol|statin|sartan|formin|prazole|azole|cillin|mycin|cycline|profen|"
            r"tamol|dipine|pam|oxetine|triptan|lukast|olone|sone|xine))\b"
            r"|药|藥|吃药|服用|处方|處方|剂量|胰岛素|降压|降糖|抗凝|打针|疗程|一天[一两二三]次",
        ),
        (
            "diet",
            r"\b(?:vegan|vegetarian|veggie|pescatarian|plant-based|meat|dairy|eggs?|omelettes?|gluten|halal|kosher|keto|"
            r"diet|dieting|lactose|meals?|eat(?:s|ing)? (?:normally|everything|anything|meat|fish|eggs|dairy|pork|beef|chicken|"
            r"healthy|clean)|normally again)\b"
            r"|吃素|食素|素食|吃斋|吃肉|食肉|不吃|唔食|戒口|忌口|饮食|飲食|牛肉|猪肉|豬肉|海鲜|鸡蛋|雞蛋|奶制品|清真|节食|减肥|餐食",
        ),
        # A recurring time: a standing meeting, a class, a habit "every evening".
        (
            "schedule",
            r"\b(?:stand-?up|meetings?|sync|one-on-one|1:1|every (?:day|week|morning|evening|night|monday|tuesday|wednesday|thursday|"
            r"friday|saturday|sunday|weekday|weekend)|daily|weekly|fortnightly|(?:mon|tues|wednes|thurs|fri|satur|sun)days|"
            r"weeknights?|rota|timetable|routine|practice|rehearsals?)\b"
            r"|每天|每日|每周|每週|每星期|每礼拜|每禮拜|逢星期|逢礼拜|周[一二三四五六日天](?:[一二三四五六日天、和])+|例会|開會|开会|站会|晨会|排班|作息",
        ),
        # The name of an account, a workspace, a team: "workspace 改名了" replaces "workspace 叫 X".
        (
            "account",
            r"\b(?:account|workspace|username|user ?name|login|handle|team name|org(?:anisation|anization)? name|"
            r"renamed|rename|display name)\b|账号|帳號|账户|帳戶|用户名|用戶名|工作区|工作空間|工作空间|改名|更名|户名|戶名",
        ),
        # Money owed to or by the user: refunds, charges, credits, compensation.
        (
            "refund",
            r"\b(?:refund\w*|reimburs\w*|money back|charged?|charges|overcharged|double[- ]charged|billed|bill|invoice|"
            r"payment|paid|fee|fees|waive\w*|chargeback)\b"
            r"|退款|退钱|退錢|退一[笔筆]|退回|退的|退我|扣了|扣费|扣費|扣款|重复扣|重複扣|帳單|账单|账户里|发票|發票|付款|支付|"
            r"到账|到帳",
        ),
        # A goodwill gesture is not the refund: "退的99块收到了" leaves "说好补偿的音箱" pending.
        (
            "compensation",
            r"\b(?:compensation|compensate\w*|voucher|coupon|credit|credited|goodwill|gift|free \w+|gesture)\b"
            r"|赔偿|賠償|补偿|補償|[优優]惠券|代金券|无门槛券|券|赠送|贈送|送的|送我|积分|積分",
        ),
        # Something broken and its repair.
        (
            "repair",
            r"\b(?:repair\w*|fix|broken|faulty|leak\w*|not working|stopped working|outage|drop(?:s|ping)? out|disconnect\w*|"
            r"replacement|replace|damaged?|torn|cracked|defect\w*|warranty|claim)\b"
            r"|维修|維修|修理|坏了|壞了|漏水|掉线|斷線|断网|换货|換貨|更换|更換|故障|检修|檢修|损坏|破损|質量|质量",
        ),
        # Safety facts: retired only by an update on the same topic (``_STICKY``).
        (
            "allergy",
            r"\b(?:allerg\w*|anaphyla\w*|epi-?pen|intoleran\w*|coeliac|celiac)|过敏|過敏|不耐受|乳糖不耐|哮喘",
        ),
        ("budget", r"\b(?:budget|spend|afford|price range)\b|预算|價位|价位"),
        (
            "dining",
            r"\b(?:table|restaurant|dinner|lunch|brunch|reservation|booking for \d+)\b|"
            r"餐厅|订座|订位|包间|饭店|晚饭|午饭",
        ),
        (
            "price",
            r"\b(?:price|cost|costs|expensive|cheap|cheaper|fee|per month|a month|monthly)\b|"
            r"[$¥£€]\s?\d|\b(?:gbp|usd|eur|rmb|hkd|sgd|aud|cad|nt\$?)\s?\d|\d\s?(?:gbp|usd|euros?|dollars?|pounds?|quid|bucks)\b|"
            r"\d\s?/\s?(?:month|mo|mth|year|yr)\b|\d\s?(?:元|块|蚊)|太贵|便宜|价格|月费|一个月|每个?月",
        ),
        ("school", r"\b(?:school|class|classes|course|lesson|semester|tutor\w*|kindergarten|nursery)\b|学校|上课|课程|报名|幼儿园|幼稚园|补习"),
    )
)


# The redactor's masks ("[PHONE]") name a kind of value, not what the user talks about.
_MASK: Final = re.compile(r"\[[A-Z_]+(?::[0-9a-f]+)?\]")


def topics(text: str) -> set[str]:
    """The coarse topics ``text`` touches (see ``_TOPICS``).

    Example:
        >>> sorted(topics("User said: we moved last weekend, new job in Bath"))
        ['home', 'work']
    """
    text = _MASK.sub(" ", _PREFIX.sub("", text))
    return {name for name, pattern in _TOPICS if pattern.search(text)}


# Dates and clock times: two unrelated plans share "10" ("10月1号" and "12月10号"), so
# the parts of a date never make two statements the same subject.
_DATE_OR_TIME: Final = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{1,2}\s*(?:月|号|號|日|点|點|时|時)\d{0,2}"
    r"|\d{1,2}[:：.]\d{2}|\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}\s?(?:am|pm)\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)


def _distinctive(text: str) -> set[str]:
    """Names, codes and numbers ("Bukit Timah", "HI-73310", "500M"), and Chinese word pairs;
    never the parts of a date or a clock time."""
    text = _DATE_OR_TIME.sub(" ", _PREFIX.sub("", text))
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


# --- which pieces of an older statement an update retires ---------------------------

# Evidence joins a turn's pieces with "; " / "；"; a piece may hold clauses split by commas.
_PIECE_SPLIT: Final = re.compile(r"\s*[;；]\s*|\s*,\s+|\s*，\s*")
# A clause that leans on the one before it ("so if I ask ... remind me", "所以…") stays with it.
_LEANS_BACK: Final = re.compile(
    r"^(?:(?:and|but) )?(?:so|which|because|cuz|coz|since|but|though|then|that'?s why|it|it'?s|its|this|that|"
    r"he|she|they|he'?s|she'?s|they'?re|his|her|their)\b"
    r"|^(?:所以|因此|因为|因為|那就|然后|然後|但是|但|不过|不過|它|这个|那个|他|她|佢)",
    re.IGNORECASE,
)
# A piece about someone else ("she can't have gluten", "Clive's gone veggie", "他不想…").
_OTHER_SUBJECT: Final = re.compile(
    r"^(?:(?:and|also|oh|btw)[,\s]+)*(?:he|she|they|his|her|their|him)\b"
    r"|^(?:他|她|佢|他们|她们|他們|她們)",
)
_SELF_SUBJECT: Final = re.compile(r"^(?:i|i'm|i've|i'd|my|we|we're|our)\b|^(?:我|咱)(?![们們]?(?:儿子|女儿|老公|老婆|妈|爸|哥|姐|弟|妹|闺女|仔|女))", re.IGNORECASE)


# Who, not what: "travelling with my daughter Giulia" stays when the flight moves, and "my
# mum is allergic to penicillin" when the user turns out to be coeliac.
_KIN: Final = re.compile(
    r"\b(?:my|our) (mum|mom|mother|dad|father|parents|son|daughter|kids?|child|children|baby|wife|husband|"
    r"partner|sister|brother|grand\w+|in-laws?|aunt|uncle|cousin|niece|nephew|roommate|flatmate|family)\b"
    r"|(?:我|我们|我們|我家)(?:的)?(老婆|老公|儿子|兒子|女儿|女兒|闺女|爸妈|父母|孩子|妈|媽|爸|哥|姐|弟|妹|仔|囡|"
    r"爷爷|奶奶|外婆|外公|婆婆|公公|孙子|孙女|家人)",
    re.IGNORECASE,
)
_THIRD_PERSON: Final = re.compile(r"\b(?:he|she|him|her|his|they|them)\b|他|她|佢", re.IGNORECASE)
# Obligations still owed: only their resolution, or a change that names them, ends them.
_OWED: Final = frozenset({"refund", "compensation"})


def _sticky(text: str) -> set[str]:
    """What a piece holds that only an update on the same thing may retire."""
    out = topics(text) & ({"allergy"} | _OWED)
    return out | {"kin:" + next(g for g in m.groups() if g).lower() for m in _KIN.finditer(text)}


def _unlocks(update: str) -> set[str]:
    out = _sticky(update)
    if _RESOLVED.search(update):
        out |= _OWED  # "the 75 did arrive" ends the fee it was owed
    return out


def _blocked(update: str, piece: str) -> bool:
    need = _sticky(piece) - _unlocks(update)
    if _THIRD_PERSON.search(_PREFIX.sub("", update)):
        need = {n for n in need if not n.startswith("kin:")}  # "we moved him to Oakwood"
    return bool(need)


# Topics too wide to pull a second piece along with the one an update retired.
_BROAD: Final = frozenset({"price", "schedule", "contact"})


def _says_something(piece: str) -> bool:
    """Not a bare date or filler ("12月1号到15号", "btw"): worth keeping alone ("5 個 seats" is)."""
    bare = _DATE_OR_TIME.sub(" ", piece)
    return len(CJK_CHAR.findall(bare)) + len(re.findall(r"[A-Za-z]{2,}|\d+", bare)) >= 2


def split_pieces(text: str) -> tuple[str, list[str]]:
    """``("User said: ", ["A", "B"])`` for ``"User said: A; B"``; clauses that lean on the one
    before them stay with it."""
    m = _PREFIX.match(text)
    prefix = m.group(0) if m else ""
    pieces: list[str] = []
    for raw in _PIECE_SPLIT.split(text[len(prefix) :]):
        piece = raw.strip()
        if not piece:
            continue
        if pieces and _LEANS_BACK.match(piece):
            pieces[-1] = f"{pieces[-1]}, {piece}" if piece.isascii() else f"{pieces[-1]}，{piece}"
        else:
            pieces.append(piece)
    return prefix, pieces


def _subjects_differ(update: str, piece: str) -> bool:
    """The update is about the user, the piece about someone else (or the other way)."""
    update = _PREFIX.sub("", update)
    mine, theirs = bool(_SELF_SUBJECT.match(update)), bool(_OTHER_SUBJECT.match(piece))
    return (mine and theirs) or (bool(_OTHER_SUBJECT.match(update)) and bool(_SELF_SUBJECT.match(piece)))


def _changed_topics(update: str) -> set[str]:
    """The topics of the pieces that carry the change ("我们搬家了；现在住滨江路；以后送货不用扛了":
    home, not delivery); all of them when no piece names a topic of its own."""
    if _AGREED.match(update):
        return topics(update)
    _, pieces = split_pieces(update)
    marked = set().union(*(topics(p) for p in pieces if _UPDATE.search(p)))
    return marked or topics(update)


def _shares_distinctive(a: str, b: str) -> bool:
    shared = _distinctive(a) & _distinctive(b)
    latin = {t for t in shared if t.isascii()}
    return bool(latin) or len(shared - latin) >= 2


# Moving a time, not any change: "提前三天提醒我" moves nothing.
_MOVE: Final = re.compile(
    r"\b(?:instead|shift(?:ed|s)?|mov(?:ed|e|ing)|reschedul\w*|postpon\w*|push(?:ed)? (?:back|to)|"
    r"brought forward|bring (?:it )?forward|can we do|make it|change (?:it|that) to)\b"
    r"|改到|改成|改为|改在|换到|推迟|延后|延期|提前到|挪到|调到|移到|改天|改日"
    r"|改(?=[上下]午|晚上|早上|中午|明天|后天|周|星期|礼拜|\d)",
    re.IGNORECASE,
)


def moves_a_value(update: str) -> bool:
    """A change of a time or an amount ("can we do the 6th instead?", "改下午吧"), not any
    change ("这次别再出岔子"): what a subject-less update may change in the previous turn."""
    return bool(_MOVE.search(_PREFIX.sub("", update)))


def moves_a_date(update: str) -> bool:
    """A change whose only subject is a date ("Dates shifted, can we do Dec 12 to 15
    instead?", "改到周五吧"): it moves the latest dated plan."""
    body = _PREFIX.sub("", update)
    when = _DATE_OR_TIME.search(body) or _DAY.search(body)
    return bool(_MOVE.search(body)) and not topics(body) and when is not None


_DAY: Final = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:today|tomorrow|tonight|next week)\b|"
    r"\bnext month\b|周[一二三四五六日天]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|明天|后天|下周|下週|下个?月|下個月",
    re.IGNORECASE,
)


def retired_dates(old: str) -> str | None:
    """``old`` without its dated pieces (``moves_a_date``): ``""`` when all of it is dated,
    ``None`` when it names no date."""
    prefix, pieces = split_pieces(old)
    dated = [p for p in pieces if _DATE_OR_TIME.search(p) or _DAY.search(p)]
    if not dated:
        return None
    kept = [p for p in pieces if p not in dated and _says_something(p)]
    if not kept:
        return ""
    return prefix + ("; ".join(kept) if all(p.isascii() for p in kept) else "；".join(kept))


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
        return None
    # The pieces on what the retired ones were about go with them ("still waiting on the
    # 75 euro fee; it was charged anyway" once "the 75 did arrive").
    gone = set().union(*(topics(pieces[i]) for i in stale)) - _BROAD
    stale += [i for i, p in enumerate(pieces) if i not in stale and usable[i] and topics(p) & gone]
    if _DATE_OR_TIME.search(update) or _DAY.search(update):
        # A new date also retires the bare dates of what it changes ("out Nov 20 and back Dec 10").
        stale += [
            i for i, p in enumerate(pieces)
            if i not in stale and not topics(p) and (_DATE_OR_TIME.search(p) or _DAY.search(p))
        ]  # fmt: skip
    # Sticky pieces (an allergy, who the user travels with) go only when the update is on them.
    stale = [i for i in stale if not _blocked(update, pieces[i])]
    if not stale:
        return None
    kept = [p for i, p in enumerate(pieces) if i not in stale and _says_something(p)]
    if not kept:
        return ""
    body = "; ".join(kept) if all(p.isascii() for p in kept) else "；".join(kept)
    return prefix + body


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
        value = (next((g for g in m.groups() if g is not None), "") if m else piece).strip(" ,.!，。")
        if m and not value:
            if marker is not None:
                out.append(marker)
            marker = piece
            continue
        values = list(_VALUE.finditer(out[-1])) if out else []
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
