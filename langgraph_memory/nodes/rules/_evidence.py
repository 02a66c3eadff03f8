"""How evidence (raw user turns no rule understood) stays current: the lexicon.

Evidence has no slot key, so the same-key supersede cannot retire it. Three
offline rules keep it from serving an old value as current (reconcile applies
them, ``nodes/reconcile/_offline.py`` ``_offline_op``):

- **an update retires what it updates**: a statement that carries an update
  marker (``updates``: "now", "switched", "instead", "改成", "搬到"; a resolution,
  "the refund arrived", "收到了", "修好了"; a cessation, "别再打电话了"; a new name,
  "改名了") retires the older pieces on the same coarse topic (``topics``: home,
  plan, data, trip, transport, medication, diet, schedule, account, refund,
  compensation, repair, delivery ... in both languages), so "I'm on apixaban now"
  retires "I take my warfarin at 6" without a shared word. Which pieces go and
  which stay is ``_retire.py``;
- **a forget request deletes the evidence on its topic** (``_forget.py``);
- **dated evidence expires** once its stated end or its day has passed (the
  extractor sets ``expires_at``).

Dates and clock times never make two statements the same subject ("10月1号" and
"12月10号" share a "10"), and the labels memories start with ("User said:",
"客服承诺：") are never compared.

Example:
    >>> shares_salient_term("User said: I'm on the 50GB plan", "User said: switched to unlimited plan")
    True
    >>> updates("User said: I switched to the unlimited plan"), updates("User said: I like tea")
    (True, False)
"""

from __future__ import annotations

import re
from typing import Final

from langgraph_memory._redact_text import PLACEHOLDER_PATTERN
from langgraph_memory.nodes.rules._text import PROPOSED_TIME, cjk_pairs, to_simplified, word_set

# The labels memories start with: shared by many, they never make two the same subject.
LABEL: Final = re.compile(
    r"^(?:User said|用户说|Assistant committed|客服承诺|User agreed to|用户同意了客服的提议|"
    r"User asked to remember|用户要求记住|User's standing instruction|用户的长期要求)[:：]\s*"
)
_RESOLVED_PATTERN: Final = (
    r"\b(?:arrived|did arrive|has arrived|came through|come through|went through|received|got (?:the \w+|my \w+)"
    r"(?: back)?|sorted|resolved|fixed|working again|works again|all good now|refunded|credited|showed up|turned up|"
    r"paid back|cleared up|normally again|normal again|back to normal|eating \w+ again)\b"
    r"|收到了|收到啦|收到喇|收咗|到账了|到帳了|已到账|已到帳|退回来了|退了回来|(?<![我你他她们們])到了|(?:修|弄|搞|处理|處理|办|辦|装|裝)好了|"
    r"解决了|解決了|搞定了|搞掂|没问题了|沒問題了|正常了|恢复了|恢復了|能用了|可以用了|已经好了|已經好了|到咗|收到咗"
)
RESOLVED: Final = re.compile(_RESOLVED_PATTERN, re.IGNORECASE)
# A day put right: "the concert's on the 10th, not the 11th", "是10号，不是11号". It is an
# update (``UPDATE``) and a change of when (``_retire._TIME_CHANGE``).
CORRECTED_DAY: Final = (
    r"\b(?:not|rather than) (?:on )?(?:the )?\d{1,2}(?:st|nd|rd|th)?\b|不是\s*\d{1,2}\s*[号號日]"
)
# The user puts their own words right: "哦不对，是周四", "我看错群消息了", "sorry, I misread
# the email". Not the business's mistake ("你们搞错了"). Narrower than ``_retire._MISTAKE``
# (which also reads "送错了"): that one marks an earlier report as no fact, this one an update.
OWN_MISTAKE: Final = (
    r"不对(?!劲|勁)|不對(?!勁)|(?<![你他她们們])(?:说错|說錯|看错|看錯|记错|記錯|搞错|搞錯|弄错|弄錯)"
    r"|\b(?:my bad|i misread|i misremembered|i got (?:it|that|the \w+) wrong|i was wrong)\b"
)
UPDATE: Final = re.compile(
    r"\b(?:now|switched|switching|switch|moved|moving|relocated|relocating|changed|changing|instead|no longer|anymore|"
    r"any more|upgraded|downgraded|replaced|updated|rescheduled|postponed|pushed|cancel(?:l?ed|l?ing)?|"
    r"these days|from now on|not anymore|gave up|quit|stopped|started|new|shifted|bumped|brought forward|"
    r"change of plans?|plans? changed|gone|became|become|turned|gave up|given up|giving up|transferr?(?:ed|ing)?|"
    r"upgrade|downgrade|drop me to|bump (?:me|us) (?:up )?to|"
    # Pulling out of something: "I'm out of the half", "deferred my entry", "took him off the pills".
    r"out of the|deferr?(?:ed|ing)|withdr[ae]wn?|withdrawing|pulled out|off the|dropp?(?:ed|ing)? (?:the|my|our))\b"
    # A career change: "转行做产品了", "跳槽去了字节", "从京东跳到小红书", "下个月去新公司".
    r"|转行|改行|跳槽|跳到|跳去|辞职了|离职了|放弃了|放弃|调过去|调去"
    r"|新(?:公司|工作|单位|岗位|部门|家|房子|房|地址|号码|号|手机|卡|套餐|老师|医生|学校)"
    r"|现在|而家|而今|改成|改为|改為|改到|换成|換成|换到|換到|换了|換了|搬到|搬去|搬家|搬咗|不再|已经不|已經不|取消|推迟|推遲|延后|延後|延期|提前(?![^，,。；]{0,6}(?:提醒|通知|告诉|叫我|说))|改签|新的|变成|变了|开始|停了|不用了"
    # "改看 Clementi", "改住酒店", "就换129的", "决定不看 Bukit Timah 了", "调高", "提到3万"
    r"|改(?![善进革正良造装])[\u4e00-\u9fff]|换(?:个|成|到|了|去)?\s*\d|不(?:看|要|买|去|住|用|做|订|考虑)[^，,。]{0,12}了"
    r"|调高|调低|提高到?|降到|提到|加到|升到|涨到|减到|瘦到|胖到|瘦了|胖了|挪到|挪去|调到|移到|改在|转咗|转用|转到|唔再|唔用"
    # Cantonese perfective 咗 on a change ("換咗部 Pixel 9", "改咗做星期三"), a new tier
    # named by its number ("轉 100GB 嗰個").
    r"|换咗|改咗|升咗|降咗|取消咗|退咗|转(?:个|去|成)?\s*\d|转去|轉去|转到|轉到"
    # Code-switched: "换 team 了", "換咗 plan".
    r"|[换換]\s?[A-Za-z]{2,}\s?(?:了|咗)"
    # Gone over to another one: "Yoga 我去周四晚上 8 点那班了".
    r"|去[^，,。；;]{1,12}那(?:班|个|家|间|节)了"
    # A value put right by a better one: "晚上七點那個，其實八點以後比較好", "actually 8 works better".
    r"|其实[^，,。；;]{0,12}(?:比较|更|会比较)(?:好|方便|合适)|\bactually\b[^,;.]{0,24}\b(?:works|would be|is) better\b"
    # Something that stopped: "家教结束了", "不补了", "that class is over", "no more lessons".
    r"|修改|更改|变更|\b(?:modified|amended)\b|结束了|结束啦|完结了|不(?![错少多好行早晚久远够对])[\u4e00-\u9fff]了"
    r"|\b(?:ended|is over|are over|finished|no more|not any ?more)\b"
    # Something pending that came ("the refund did arrive", "退款收到了", "修好了"): it ends
    # the complaint or request about it (``RESOLVED``).
    r"|" + _RESOLVED_PATTERN +
    # Stopping: "别打电话了", "不要再寄了", "stop calling me".
    r"|别[^，,。；;]{1,8}了|不要再|别再|\bstop \w+ing\b"
    # Giving something up or turning it down: "断食坚持不下去了", "丰巢那个也不行", "佢话唔要喇".
    r"|坚持不下去|撑不下去|也不行|都不行|唔要|不要了|cut\s?(?:咗|了|掉)"
    # A new name: "we renamed the workspace", "改名叫 X".
    r"|\b(?:renamed|now called|new name|goes by)\b|改名|更名|改叫|新名字"
    # A value put right: a day (``CORRECTED_DAY``), a clock time ("是10点，不是11点").
    r"|" + CORRECTED_DAY + r"|不是\s*\d{1,2}\s*[点點]|而不是"
    # A life that ended or left the home: "Max passed away", "咪咪送给我表姐养了".
    r"|\b(?:passed away|died|put down|put to sleep|rehomed|gave (?:him|her|them|it) away)\b"
    r"|去世|过世|過世|送人了|送给[^，。；]{1,6}(?:养|了)|卖掉了|卖了|賣咗|卖咗"
    # "we went up to the 500Mb one", "Luna's back on normal food", "女儿转学了".
    # A value that moved: "down to 36.2 stone", "dropped to 5000" (not "driving down to Bristol").
    r"|\b(?:down to|dropped to|(?:gone|crept|climbed|shot) (?:up|down) to)(?= (?:about |around |just )?[£$€]?\d)"
    r"|" + OWN_MISTAKE + r"|" + PROPOSED_TIME +
    # A new billing term: "I went annual on ShopPlus".
    r"|\b(?:went|gone|going) (?:annual|yearly|monthly|quarterly)\b"
    r"|\b(?:went up to|went down to|moved up to|moved schools|changed schools|(?:left|ditched|dropped) \w+(?: \w+)? for|back on (?:normal|regular|the usual|(?:her|his|my) usual))\b|转学|轉學|换学校"
    # "升千兆", "升吧", "降到100M": a tier changed.
    r"|升吧|升级了|升級了|降级了|降級了|升到|升级(?:成|到|为)|降级(?:成|到|为)"
    # A school year moved on: "儿子上一年级了", "升初中了".
    r"|上[一二三四五六七八九]年级了|升(?:上)?(?:[一二三四五六七八九]年级|初中|高中|大学|小学)|上(?:小学|初中|高中|大学)了"
    # "From now on" in Chinese, with what is to change: "以后快递放驿站吧", "以后都发邮件".
    r"|(?:以后|今后|往后|从今以后)[\u4e00-\u9fff]{0,4}?(?:都|就|请|帮我|把|给我|放|寄|送|用|发|打|改|换|走)",
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
    text = LABEL.sub("", text).lower()
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
            # Living somewhere, not "live ops" or "a live show".
            r"\b(?:(?:i|we|they|still|now|currently|to|where i|where we) live|live (?:in|at|near|with|on|by|out of|close to)|lives|living (?:in|at|with|near|out)|(?:we|i|we have|i have|we've|i've) (?:just )?moved|moved (?:to|in|out|house)|moving (?:to|in|out|house)|relocat\w*|home|flat|apartment|house|"
            r"address|based in|we'?re in|i'?m in|(?:\d+(?:st|nd|rd|th)|ground|top|first|second|third) floor|elevator|lift|stairs|"
            r"neighbou?rhood|landlord|rent|renting|mortgage|new place|our place|my place)\b"
            # Where the user is now: "we're at the Grandview place now".
            r"|\b(?:we'?re|i'?m|we are|i am) (?:now )?at (?:the|our|my) (?:\w+ )?(?:place|flat|apartment|house)\b"
            r"|\bshifted (?:to|house|home)\b|住在|住址|地址|搬家|搬到|搬去|搬咗|新家|住处|(?:我|我们|我家|我們)(?:现在|而家)?住|(?:我|我们|我們)家(?:现在|而家)?(?:在|喺)|"
            # Where the user's things are: "板橋家裡的光世代", "我 Tampines 家里的 fibre".
            r"[A-Za-z\u4e00-\u9fff]\s?家里(?!人)|"
            r"(?:我|我们|我們)?屋企(?:喺|在|住)|住喺|住係|"
            r"楼层|\d+楼|[一二三四五六七八九十]楼|电梯|電梯|爬楼|小区|房东|租房|房租",
        ),
        (
            "plan",
            r"\b(?:(?<!change of )plan(?!s? changed)|tariff|package|bundle|subscription|contract|unlimited|"
            r"tier|membership|upgrad\w*|downgrad\w*|renewal|renew\w*|\d+\s?(?:mb|m|mbps))\b"
            # Not "宽带"/"broadband" alone: the service, which a fault ("宽带老掉线") also names.
            r"|套餐|月租|\d+\s?[mM兆](?![a-z])|千兆|百兆|升级|降级|升档|降档|升吧|续费|续约|会员|會員|订阅|訂閱"
            # Membership cards by their term: "月卡能不能改成年卡" changes "我是月卡会员".
            r"|[月年季周]卡|包月|包年|连续包月|連續包月"
            # How it is paid: "月供计划" -> "改成年付", "monthly billing" -> "annual plan".
            r"|月供|年付|月付|季付|按月付|按年付|年费|年費|月费|月費|\b(?:monthly|annual|annually|yearly) (?:plan|payment|billing|fee)s?\b"
            # The billing term alone: "switch me to annual", "I went annual on ShopPlus".
            r"|\b(?:switch|move|put|change)(?: (?:me|us|it))? (?:to|on|onto) (?:the )?(?:annual|yearly|monthly|quarterly)\b"
            r"|\b(?:went|gone|going|go) (?:annual|yearly|monthly|quarterly)\b(?! (?:to|for)\b)"
            # Paying by the term: "I pay for ShopPlus monthly", "we're billed yearly".
            r"|\b(?:pay|pays|paying|paid|billed|charged)\b(?:\s+[\w.$£€-]+){0,4}?\s+"
            r"(?:monthly|annually|yearly|quarterly|per (?:month|year)|a (?:month|year))\b",
        ),
        # Body weight: "I weighed 38.5 stone" -> "down to 36.2 this week", "体重120斤" -> "瘦到110了".
        (
            "weight",
            r"\b(?:weigh\w*|stone|st|kg|kgs|kilos?|lbs?|pounds)\b(?! (?:of|bag|luggage|baggage|suitcase))|体重|體重|\d+\s?(?:斤|公斤)|瘦了|胖了|减重|減重",
        ),
        # The user's own handset or computer: "我现在用的是小米 14" replaces "iPhone 15 Pro",
        # "switched to a Pixel" replaces "my iPhone 13 drops calls". A phone *number* is contact.
        (
            "device",
            # (?<![a-z]) not \b: "用户购买了iPhone" has no word boundary before the brand.
            r"(?<![a-z])(?:iphone|ipad|macbook|pixel|galaxy|samsung|huawei|xiaomi|redmi|oppo|vivo|oneplus|honor|nokia|"
            r"motorola|xperia|handset|smartphone|laptop|(?:new|old) (?:phone|mobile)(?! (?:number|no))|phone model|"
            r"android)(?![a-z])"
            r"|(?<!打)(?:手机|手機)(?!号|號|壳|殼|膜|套)|小米|华为|華為|荣耀|榮耀|三星|苹果手机|蘋果手機|平板|笔记本电脑|筆記本電腦|电脑|電腦",
        ),
        # A data pack is not the broadband tier: "流量包也跟着改" must not retire "升千兆".
        (
            "data",
            r"\b(?:data|roaming|\d+\s?gb|data pack|top-?up|sim)\b|流量|漫游|\d+\s?G\b",
        ),
        (
            "stay",
            r"\b(?:hotel|room|booking|reservation|check-?in|check-?out|nights?|suite|inn|airbnb|hostel)\b|"
            r"酒店|房间|入住|退房|民宿|房型|大床房|双床房|"
            # "住三晚", not "周四晚上" (Thursday evening) or "8点晚饭".
            r"(?<![周週期拜])[一两二三四五六七八九十\d]\s?晚(?![上饭餐班些点安])",
        ),
        (
            "trip",
            r"\b(?:trip|travel\w*|holiday|vacation|getaway|journey|itinerary|fly(?:ing)? (?:out|home|back)|flew|"
            r"coming back|come back|heading (?:back|home|out|down|up)|back home|outbound|return(?:ing)? (?:flight|trip|home|on)|"
            r"depart\w*|booked \w+ to \w+|visit(?:ing)? (?:my|our|the)|going (?:down|up|over) to)\b"
            r"|出差|旅游|旅行|度假|行程|出行|去[\u4e00-\u9fff]{1,4}玩|那趟|这趟|那次旅|回国|回老家|回乡|出国|放假去|自由行"
            # A planned trip and its change: "我们计划十月去日本" -> "日本不去了，改去泰国".
            r"|(?:计划|打算|准备)[^，。；]{0,6}去|改去|不去[^，。；]{0,4}了",
        ),
        (
            "transport",
            r"\b(?:driv(?:e|es|ing|en)|drove|car|train|trains|rail|railway|coach|bus|fly|flying|flight|plane|taxi|uber|"
            r"cab|ferry|cycle|cycling|bike|tube|subway|metro|by road|lift from|pick(?:ing)? (?:me|us) up)\b"
            r"|开车|自驾|坐车|火车|高铁|動車|动车|飞机|飛機|航班|打车|打的|地铁|地鐵|公交|巴士|大巴|坐船|骑车|搭车|接送|接我|送我去"
            # The user's own car: "我开的是一辆比亚迪", "换车了".
            r"|[一这那]辆|换车|換車|买车|買車|新车|新車|汽车|汽車|轿车|電車|电车|\b(?:suv|ev|hybrid)\b"
            r"|车牌|車牌|车(?:卖|賣)了|没车|冇车|卖车|賣車",
        ),
        # Three sides of getting goods: how they are brought (delivery), whether they have
        # left (shipping), and fetching them back (pickup): "以后送货不用扛了" leaves
        # "到现在还没发货" and "上门取件啥时候" alone.
        (
            "delivery",
            r"\b(?:deliver\w*|courier|drop-?off|leave it|doorstep|buzz(?:er)?|concierge)\b"
            r"|送货|送貨|配送|送到|送上|收货|收貨|签收|簽收|快递员|派送",
        ),
        (
            "shipping",
            r"\b(?:shipping|ship|shipped|dispatch\w*|tracking|backorder\w*|back-?ordered|eta|in stock|out of stock)\b"
            r"|發貨|发货|寄出|寄到|寄过来|到货|到貨|物流|缺货|缺貨|出库",
        ),
        (
            "pickup",
            r"\b(?:pick-?up|collection|collect it|return label|send it back)\b|取件|上门取|退货|退貨|寄回",
        ),
        (
            "contact",
            r"\b(?:call|calls|calling|ring|ringing|text|texts|texting|sms|email|e-mail|phone|whatsapp|voicemail|message me)\b|"
            r"电话|電話|短信|簡訊|邮件|郵件|邮箱|郵箱|电邮|電郵|微信|联系|聯絡|打给我|打我|发消息",
        ),
        (
            "work",
            # ("it works out cheaper", "that works for me", "my work email" are no job)
            r"\b(?:jobs?|work(?! (?:e-?mail|phone|number|mobile|address|laptop)\b)|works(?! out| for)|where i work|employer details|(?:new |working |work |my )?hours|(?:my|our|new|old) (?:boss|manager)|line manager|office|company|employer|shift|shifts|career|hired|promoted|commute|teams?)\b"
            r"|公司|上班|返工|工作|单位|老板|上司|领导|主管|组长|組長|上班时间|工作时间|朝九晚[五六七]|转工|跳槽|入职|辞职|离职|转行|改行|裁员|被裁|裁了|炒鱿鱼|炒鱿|失业|失業"
            r"|\b(?:fired|laid off|made redundant|redundancy|sacked|unemployed|out of work)\b"
            # Where the user works and on which shift: "我在阿里做产品经理", "而家轉咗夜更".
            r"|(?:我|我们)(?:在|喺)[A-Za-z\u4e00-\u9fff]{1,8}(?:做|当|上班|工作|返工)|做嘢|边度做|夜更|夜班|早班|晚班|早更|轮班|輪班|转咗工|轉咗工|换咗工",
        ),
        # What the user earns: "I'd rather you didn't store my salary" reaches "my salary is 85k";
        # "工资信息别保存" reaches "我月薪两万五".
        (
            "income",
            r"\b(?:salary|salaries|wages?|income|earn|earns|earning|earnings|pay ?rise|take-home|paid \d|"
            r"\d+k (?:a|per) year)\b|工资|工資|月薪|年薪|薪水|薪资|薪資|收入|人工(?!智能)|底薪|奖金|獎金",
        ),
        # Seeing a therapist: mental health the user may want kept off the record.
        (
            "therapy",
            r"\b(?:therap\w*|counsell?or|counsell?ing|psychiatr\w*|psycholog\w*|mental health|anxiety|depression)\b"
            r"|心理医生|心理醫生|心理咨询|心理諮詢|心理治疗|看心理|咨询师|諮詢師|抑郁|焦虑|焦慮",
        ),
        # Money the user owes: "the bit about my debts" reaches "我欠了信用卡八万"'s kind.
        (
            "debt",
            r"\b(?:debts?|owe|owes|owed|owing|loans?|borrow\w*|arrears|overdrawn|overdraft|payday|bankrupt\w*|"
            r"credit score|payment plan|iva)\b|欠(?!佳|妥)|债|債|贷款|貸款|网贷|網貸|借钱|借錢|借了|还款|還款|分期|逾期|破产|破產",
        ),
        (
            "bank",
            r"\b(?:bank|banks|banking|building society|current account|savings account|branch)\b|银行|銀行|分行|支行",
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
            r"|药|藥|吃药|服用|处方|處方|剂量|胰岛素|降压|降糖|抗凝|打针|疗程|一天[一两二三]次"
            # Drug names by their usual Chinese endings (华法林, 利伐沙班, 阿托伐他汀, 二甲双胍 ...).
            r"|[\u4e00-\u9fff]{1,4}(?:沙班|法林|他汀|普利|洛尔|沙坦|双胍|雙胍|拉唑|西林|霉素|黴素|环素|地平|匹林|格雷|多巴|甲状腺素)"
            r"|布洛芬|美多芭|优甲乐|優甲樂"
            # A dose is the medicine's: "the doctor has me on 20mg now".
            r"|\d+(?:\.\d+)?\s?(?:mg|mcg|µg|ml|iu)\b|\d+\s?(?:毫克|微克|毫升)|[一两二三]片"
            # A named medicine taken for something: "Biscuit is on Apoquel for his itchy skin".
            r"|(?-i:\bon [A-Z][a-z]{3,} for\b)",
        ),
        (
            "diet",
            r"\b(?:vegan|vegetarian|veggie|pescatarian|plant-based|meat|dairy|eggs?|omelettes?|gluten|halal|kosher|keto|"
            r"diet|dieting|lactose|meals?|eat(?:s|ing)? (?:normally|everything|anything|meat|fish|eggs|dairy|pork|beef|chicken|"
            r"healthy|clean)|normally again)\b"
            r"|吃素|食素|素食|吃斋|吃肉|食肉|不吃|唔食|戒口|忌口|饮食|飲食|牛肉|猪肉|豬肉|海鲜|鸡蛋|雞蛋|奶制品|清真|节食|减肥|餐食"
            r"|断食|斷食|\bfasting\b|\beating window\b|减脂|控糖|戒糖|碳水|主食|低碳|生酮"
            # An eating window ("16:8", "18:6", "5:2"; no clock has a one-digit minute) and meals.
            r"|(?<![\d:])(?:1[2-9]|20|5):[2-8](?![\d:])|进食|之间吃饭|一日三餐|三餐|\bmeals? a day\b"
            r"|\b(?:normal|regular|diet|wet|dry|special|prescription) food\b|\bkibble\b|猫粮|狗粮|处方粮",
        ),
        # A recurring time: a standing meeting, a class, a habit "every evening".
        (
            "schedule",
            r"\b(?:stand-?up|meetings?|sync|one-on-one|1:1|every (?:day|week|morning|evening|night|monday|tuesday|wednesday|thursday|"
            r"friday|saturday|sunday|weekday|weekend)|daily|weekly|fortnightly|(?:mon|tues|wednes|thurs|fri|satur|sun)days|"
            r"weeknights?|rota|timetable|routine|practice|rehearsals?|"
            r"(?:mon|tues|wednes|thurs|fri|satur|sun)day (?:mornings|afternoons|evenings|nights))\b"
            r"|每天|每日|每周|每週|每星期|每礼拜|每禮拜|逢星期|逢礼拜|周[一二三四五六日天](?:[一二三四五六日天、和])+|例会|開會|开会|站会|晨会|排班|作息"
            r"|时段|上课时间",
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
            r"|退款|退钱|退錢|退一[笔筆]|退回|退还|退還|退的|退我|扣了|扣费|扣費|扣款|重复扣|重複扣|帳單|账单|账户里|发票|發票|付款|支付|"
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
        # What the user drinks: "戒咖啡，一天最多一杯 latte" -> "coffee 那个我放弃了".
        (
            "drinks",
            r"\b(?:coffee|coffees|latte|lattes|cappuccino|espresso|caffeine|decaf|alcohol|booze|beer|wine|"
            r"drinking|sober|teetotal|dry january)\b|咖啡|拿铁|拿鐵|奶茶|喝酒|戒酒|饮酒|飲酒|啤酒|红酒|紅酒|白酒",
        ),
        (
            "budget",
            r"\b(?:budget|spend|afford|price range|stretch to|can go up to|max(?:imum)? of)\b|预算|價位|价位|最多花|顶多",
        ),
        # Exercise and training: "physio says no running" ends "running 4x a week".
        (
            "fitness",
            r"\b(?:run|runs|running|jog\w*|gym|workouts?|training for|marathon|half|swim\w*|cycling|yoga|pilates|"
            r"physio\w*|exercis\w*|lifting|crossfit)\b|跑步|健身|游泳|瑜伽|锻炼|鍛煉|运动|運動|马拉松|普拉提|理疗",
        ),
        (
            "pet",
            r"\b(?:dog|dogs|puppy|cat|cats|kitten|pet|pets|hamster|rabbit|parrot)\b|(?<!热)狗|(?<![光熊])[猫貓]|宠物|寵物|兔子|仓鼠",
        ),
        (
            "relationship",
            r"\b(?:boyfriend|girlfriend|dating|engaged|engagement|married|divorc\w*|separated|broke up|break-?up|fianc\w*)\b"
            r"|男朋友|女朋友|男友|女友|结婚|結婚|离婚|離婚|分手|订婚|訂婚|对象",
        ),
        (
            "order",
            r"\b(?:order|ordered|orders|purchase\w*|checkout)\b|订单|訂單|下单|下單|单号|單號",
        ),
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
        # Who provides a service: "宽带换成联通了" replaces "我们家宽带是电信的".
        (
            "provider",
            r"\b(?:provider|carrier|network|isp|telco|bank with|banking with)\b|电信|電信|联通|聯通|中国移动|移动的|运营商|運營商|广电",
        ),
        (
            "age",
            # A birthday, not any "is 7" ("the order is 12 days late").
            r"\b(?:turned|turns|turning|just turned) \d{1,2}\b|\b\d{1,2} (?:years? old|yo)\b|\d{1,2}\s?[岁歲]",
        ),
        (
            "pregnancy",
            r"\b(?:pregnan\w*|due (?:in|on|date)|expecting|baby (?:arrived|came|is here|was born)|was born|gave birth)\b"
            r"|怀孕|懷孕|预产期|預產期|生了|出生了|宝宝出生",
        ),
        (
            "weight",
            r"\b(?:weigh\w*|\d+(?:\.\d+)?\s?(?:kg|kgs|lbs?|pounds|stone))\b|体重|體重|\d+\s?(?:公斤|斤)|[一二三四五六七八九十百]+(?:公斤|斤)",
        ),
        # A dated occasion: "the wedding's pushed to September" moves "a June wedding".
        (
            "occasion",
            r"\b(?:wedding|party|concert|recital|ceremony|graduation|anniversary|reunion|gala|prom|christening|"
            r"baby shower|hen do|stag do|bbq|barbecue|fete|f\u00eate|festival|performance|"
            r"sports day|tournament|exhibition)\b"
            r"|婚礼|婚禮|演唱会|音乐会|聚会|聚餐|生日会|毕业典礼|家长会|年会|满月酒|派对|酒席|运动会|表演|演出|比赛|展览|义卖",
        ),
        # A payment card: "got a new card, old one was cloned" ends "my bank card ends 4421".
        (
            "card",
            r"\b(?:card|debit card|credit card|bank card)\b(?! (?:game|table|reader))|银行卡|信用卡|储蓄卡|借记卡|卡号|尾号",
        ),
        (
            "school",
            r"\b(?:school|schools|class|classes|course|lesson|lessons|semester|tutor\w*|kindergarten|nursery|"
            r"year \d{1,2}|grade \d{1,2}|primary|secondary)\b|学校|上课|课程|报名|幼儿园|幼稚园|补习"
            # A school year: "儿子上一年级了" moves on from "在读幼儿园大班".
            r"|[一二三四五六七八九]年级|[大中小]班|初[一二三]|高[一二三]|小学|中学|初中|高中|小[一二三四五六]|中[一二三四五六](?![国文心间午])"
            r"|(?:钢琴|编程|英语|数学|游泳|舞蹈|美术|画画|网球|足球|篮球|体育|音乐|书法|围棋|奥数|小提琴|吉他)课"
            # Learning an instrument or a skill: "我女儿学钢琴" is what "钢琴课调到周日" moves.
            r"|学(?:钢琴|琴|画画?|舞蹈?|游泳|英语|日语|韩语|法语|德语|外语|粤语|书法|围棋|编程|吉他|小提琴|跆拳道|奥数)",
        ),
    )
)


# The redactor's masks ("[PHONE]") name a kind of value, not what the user talks about.
_MASK: Final = re.compile(PLACEHOLDER_PATTERN)


def topics(text: str) -> set[str]:
    """The coarse topics ``text`` touches (see ``_TOPICS``).

    Example:
        >>> sorted(topics("User said: we moved last weekend, new job in Bath"))
        ['home', 'work']
    """
    text = to_simplified(_MASK.sub(" ", LABEL.sub("", text)))  # "換時段" reads as "换时段"
    return {name for name, pattern in _TOPICS if pattern.search(text)}


# Dates and clock times: two unrelated plans share "10" ("10月1号" and "12月10号"), so
# the parts of a date never make two statements the same subject.
DATE_OR_TIME: Final = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{1,2}\s*(?:月|号|號|日|点|點|时|時)\d{0,2}"
    r"|\d{1,2}[:：.]\d{2}|\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}\s?(?:am|pm)\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)


def distinctive(text: str) -> set[str]:
    """Names, codes and numbers ("Bukit Timah", "HI-73310", "500M"), and Chinese word pairs;
    never the parts of a date or a clock time."""
    text = DATE_OR_TIME.sub(" ", LABEL.sub("", text))
    out = {w.lower() for w in re.findall(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-zA-Z]{2,}\b", text)}
    # A name even where a sentence starts, when its case says so ("DashPlus 我想 cancel 掉").
    out |= {w.lower() for w in re.findall(r"\b[A-Za-z]+[a-z][A-Z][A-Za-z]*\b", text)}
    out |= {w.lower() for w in re.findall(r"[A-Za-z0-9-]*\d[A-Za-z0-9-]*", text) if len(w) >= 2}
    return out | (cjk_pairs(text) - _ZH_STOP)


# An offer the user accepted is a change by nature ("User agreed to: ... I can move you").
AGREED: Final = re.compile(r"^(?:User agreed to|用户同意了客服的提议)[:：]")


def updates(text: str) -> bool:
    """Does ``text`` state a change ("switched to", "搬到了", "now", an accepted offer)?"""
    return bool(AGREED.match(text)) or bool(UPDATE.search(to_simplified(LABEL.sub("", text))))
