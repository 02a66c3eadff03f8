"""E-mail addresses and secrets: passwords, PINs, one-time codes, API keys and tokens,
URL credentials. Pure, stdlib-only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from langgraph_memory._redact_text import (
    _DIGIT,
    PLACEHOLDER_PATTERN,
    _Candidate,
)

_EMAIL: Final = re.compile(
    r"(?<![A-Za-z0-9._%+\-])"
    # An apostrophe may sit inside the local part (o'brien.k@...), not at its ends.
    r"[A-Za-z0-9](?:[A-Za-z0-9._%+\-']{0,62}[A-Za-z0-9._%+\-])?@"
    r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}"
    r"(?![A-Za-z0-9\-])"
)


# "icon@2x.png" is an image, not a mailbox: a file extension is no domain.
_EXTENSION_WORDS: Final = """
    png jpg jpeg gif svg webp bmp ico tif tiff pdf txt csv json yaml yml xml html htm css js ts
    mp3 mp4 mov wav zip gz log lock
"""
_FILE_EXTENSIONS: Final = frozenset(_EXTENSION_WORDS.split())
# "postgres://admin:S3cret@db.internal": the part before "@" is a password
# (reported by the password detector), not a mailbox.
_URL_USERINFO: Final = re.compile(
    r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,15}://[^\s/@:]{0,64}:(?P<secret>[^\s/@]{1,128})@"
)


def _detect_email(folded: str) -> Iterator[_Candidate]:
    for m in _EMAIL.finditer(folded):
        if m.group().rsplit(".", 1)[-1].lower() in _FILE_EXTENSIONS:
            continue
        if folded.startswith(":", m.end()) and folded[m.end() + 1 : m.end() + 2].strip():
            continue  # git@github.com:org/repo.git, an scp-style address
        if "://" in folded[max(0, m.start() - 80) : m.start()] and any(
            u.start("secret") <= m.start() < u.end("secret")
            for u in _URL_USERINFO.finditer(folded, max(0, m.start() - 100))
        ):
            continue
        yield _Candidate("email", m.start(), m.end(), m.group().lower())


# Words that follow "password is" / "token is" in prose and are not secrets.
_PROSE_WORDS: Final = """
    a an the my your his her our their its this that it not no none null n/a na blank empty
    incorrect wrong correct invalid valid expired required optional mandatory needed missing
    weak strong secure insecure long short too very also still now here there below above
    same different changed reset set saved stored sent hidden encrypted protected forgotten
    updated unknown ok okay fine case-sensitive sensitive being correctly just stuck
    what which where when why how mine yours safe unsafe easy hard simple complex new old
"""
_NOT_A_SECRET: Final = frozenset(_PROSE_WORDS.split())
_STAND_INS: Final = frozenset(("password", "passwd", "pass", "pw", "pwd", "secret", "pass_word"))
_PLACEHOLDER: Final = re.compile(PLACEHOLDER_PATTERN)

# The separator between a keyword and its value: 是/为/系 (Cantonese)/：/=/is/was, with a few
# Chinese adverbs (密码一直是 ...) and English "for <account>" (password for gmail is ...).
_SEPARATOR: Final = (
    # JSON and quoted keys: "password": "hunter2".
    r"[\"']?"
    r"(?:\s+for\s+(?:[^\s:=]{1,30}\s+){0,3}?[^\s:=]{1,30})?"
    # "the token I use is ...", "the password we set was ...".
    r"(?:\s+(?:that\s+)?(?:i|we|you|he|she|they)\s+(?:use|used|have|got|set|chose|picked|typed|entered))?"
    # "密码如下：", "token 登录：": a verb between the keyword and its colon.
    r"(?:\s*(?:如下|登录|登陆|输入|填写|填入)(?=\s*[:：]))?"
    r"\s*(?:"
    r"(?:都|也|还|一直|仍然|现在|已经|已|就|应该|应当|好像|大概|可能|估计|似乎|本来|原来|其实)?"
    r"(?:是|为|為|系|係|は|(?:改|重置|重设|换|设|设置|更新|变)(?:成|为|為)了?)\s*[:]?"
    r"|[:=]"
    r"|\s(?P<prose>is|was)(?:\s*:)?(?=\s)"
    r")\s*"
)
_SECRET_VALUE: Final = (
    r"(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|“(?P<cq>[^”\n]{1,200})”"
    r"|「(?P<jq>[^」\n]{1,200})」|`(?P<bq>[^`\n]{1,200})`|(?P<bare>[!-~]{1,200}))"
)
_PASSWORD_KEYWORD: Final = (
    r"(?:密码|口令|パスワード|暗証番号|비밀번호|(?<![A-Za-z])(?:password|passwd|passcode|passphrase|pwd"
    r"|passwort|kennwort|mot de passe|contraseña|senha)(?![A-Za-z]))"
)
# "mysql -u root -pS3cret123": the MySQL/MariaDB clients take the password glued to -p.
_CLI_PASSWORD: Final = re.compile(
    r"(?<![A-Za-z])(?:mysql|mysqldump|mysqladmin|mariadb)(?![A-Za-z])[^\n]{0,80}?\s-p(?P<bare>[^\s'\"]{3,100})"
)
# "user: admin pass: admin123", "pw=hunter22": the short keywords only before ":"
# or "=" and a value with a digit, and not a boarding/bus/season pass.
_SHORT_PASSWORD: Final = re.compile(
    r"(?<![A-Za-z])(?<!boarding )(?<!bus )(?<!season )(?<!day )(?<!ski )(?<!press )"
    r"(?:pw|pass)\s?[:=]\s*(?P<bare>[!-~]*[0-9][!-~]*)",
    re.IGNORECASE,
)
_PASSWORD: Final = re.compile(_PASSWORD_KEYWORD + _SEPARATOR + _SECRET_VALUE, re.IGNORECASE)
# "wifi密码 12345678": only a space between keyword and value. Accepted only
# when the value has a digit, so "password reset" stays prose.
_PASSWORD_SPACED: Final = re.compile(
    _PASSWORD_KEYWORD + r"[ \t]+(?P<bare>[!-~]*[0-9][!-~]*)", re.IGNORECASE
)
# "邮箱密码Zx9!kLm2", "pwd2024!x": the value glued to its keyword. After a
# Chinese keyword any printable-ASCII run with a digit (密码学 stays a word);
# after an English one the value must start with a digit ("passwords",
# "password-protected" stay prose) and have 4+ characters ("password123"
# named as an example has 3).
_PASSWORD_GLUED: Final = re.compile(
    r"(?:密码|口令)(?![:=])(?P<bare>[!-~]{0,100}[0-9][!-~]{0,100})"
    r"|(?<![A-Za-z])(?i:password|passwd|passcode|pwd)"
    # "password123abc", "passwordAbc123!": a digit first, or a capital and a digit later
    # ("passwords", "passwordless", "password-protected" stay words).
    r"(?P<latin>[0-9][!-~]{3,199}|[A-Z](?=[!-~]{0,60}[0-9])[!-~]{3,199})",
)
# "PIN4921", "PIN码0912", "pin码 1379": 4-12 digits right after the keyword
# ("PIN1", "GPIO pin17" are pin labels, too short to be a PIN).
_PIN_GLUED: Final = re.compile(
    r"(?<![A-Za-z])PIN(?:码|号)?[ \t]*(?P<pin>[0-9]{4,12})(?![0-9A-Za-z])", re.IGNORECASE
)
# A PIN is digits only, so "PIN is stuck in the machine" stays prose.
_PIN: Final = re.compile(
    r"(?<![A-Za-z])PIN(?:码|\s?(?:code|number|no\.?))?(?![A-Za-z])"
    + _SEPARATOR
    + r"[\"']?(?P<pin>[0-9]{4,12})(?![0-9A-Za-z])",
    re.IGNORECASE,
)
# "我把 wifi 密码发你：Home@5678": a few Chinese words between the keyword and a
# colon. "密码到期时间：2026-12-31" reads the same, so the value needs a letter and
# a digit.
_PASSWORD_INFIX: Final = re.compile(
    r"(?:密码|口令)[\u4e00-\u9fff]{1,4}\s*[:：]\s*(?P<bare>[!-~]{4,100})"
)
# "my key is 1a2b3c4d5e6f7g8h", "百度 AK: ... SK: ...": "key" alone and the AK/SK
# abbreviations, only with a value that looks generated.
_PROSE_KEY: Final = re.compile(
    r"(?<![A-Za-z])(?:(?i:(?:my|our|your|the|his|her|their)\s+(?:[A-Za-z]+\s+)?key\s+is)"
    r"|(?:AK|SK)\s*[:=：])\s*(?P<bare>[!-~]{12,200})"
)
_KEYED_KEYWORD: Final = (
    r"(?:密钥|秘钥|私钥|令牌|(?<![A-Za-z])(?:api[\s_\-]?key|apikey|access[\s_\-]?key(?:[\s_\-]?id)?"
    r"|secret[\s_\-]?access[\s_\-]?key|access[\s_\-]?key[\s_\-]?secret|secret(?:[\s_\-]?key)?"
    r"|client[\s_\-]?secret"
    r"|app[\s_\-]?secret|(?:access|auth|refresh|api|bearer|session)?[\s_\-]?token"
    r"|session[\s_\-]?id)(?![A-Za-z]))"
)
_KEYED_SECRET: Final = re.compile(_KEYED_KEYWORD + _SEPARATOR + _SECRET_VALUE, re.IGNORECASE)
# "use the token 9f8e7d6c5b4a3928 to log in": a key named in prose with only
# a space before it. Accepted when the value looks generated: 12+ characters
# with a letter and a digit ("token count 1200", "secret santa" stay prose).
_KEYED_SPACED: Final = re.compile(
    _KEYED_KEYWORD + r"[ \t]+(?P<bare>[!-+\--~]{12,200})", re.IGNORECASE
)
# Cloud access key ids; the secret that travels with one (AWS: 40 base64
# characters) is redacted too when it follows within a short span, whatever
# joins them ("AKIA... / wJalr...", "AKIA...:wJalr...", "... with secret ...").
_ACCESS_KEY_ID: Final = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:AKIA|ASIA)[0-9A-Z]{16}|LTAI[0-9A-Za-z]{12,24}|AKID[0-9A-Za-z]{32})"
    r"(?![A-Za-z0-9])"
)
_PAIRED_SECRET: Final = re.compile(
    r"(?<![A-Za-z0-9/+=_\-])[A-Za-z0-9/+]{24,64}={0,2}(?![A-Za-z0-9/+=_\-])"
)
_PAIR_WINDOW = 80
_KNOWN_KEY_FORMATS: Final = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    # Webhook URLs carry their secret in the path; the whole URL is the key.
    r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"
    r"|https://(?:discord|discordapp)\.com/api/webhooks/[0-9]{10,}/[A-Za-z0-9_\-]{30,}|"
    r"sk-(?:proj-|ant-[a-z0-9]{2,8}-|live_|test_)?[A-Za-z0-9_\-]{20,}"
    # A distinctive prefix is evidence enough: tokens pasted in chat are often cut short.
    r"|gh[pousr]_[A-Za-z0-9]{16,}"
    # Stripe-style live/test keys: "sk_live_...", "pk_test_...", "tk_live_...", "whsec_..."
    r"|[a-z]{2,6}_(?:live|test|prod)_[A-Za-z0-9]{10,}"
    r"|whsec_[A-Za-z0-9]{16,}"
    # GitLab, Hugging Face, npm, PyPI, SendGrid, DigitalOcean, Shopify, Slack app tokens
    r"|glpat-[A-Za-z0-9_\-]{16,}|hf_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{16,}"
    r"|pypi-[A-Za-z0-9_\-]{50,}|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"
    r"|do[por]_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|xapp-[0-9A-Za-z\-]{20,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|LTAI[0-9A-Za-z]{12,24}|AKID[0-9A-Za-z]{32}"
    r"|xox[bpoars]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"
    r")(?![A-Za-z0-9_\-])"
)
_BEARER: Final = re.compile(
    r"(?<![A-Za-z])Bearer\s+(?P<token>[A-Za-z0-9\-._~+/]{16,}=*)"
    # HTTP Basic credentials are base64("user:password").
    r"|Authorization\s*[:=]\s*Basic\s+(?P<basic>[A-Za-z0-9+/]{8,}={0,2})",
    re.IGNORECASE,
)


_NEXT_PARAMETER: Final = re.compile(r"&(?=[A-Za-z_][A-Za-z0-9_.\-]*=)")


def _secret_span(m: re.Match[str]) -> tuple[int, int] | None:
    for group in ("dq", "sq", "cq", "jq", "bq"):
        if group in m.re.groupindex and m.group(group) is not None:
            return m.start(group), m.end(group)
    start, end = m.start("bare"), m.end("bare")
    value = m.group("bare")
    # In a URL query the value ends where the next parameter starts.
    value = _NEXT_PARAMETER.split(value, maxsplit=1)[0]
    end = start + len(value)
    # Sentence punctuation after the value is not part of it; a closing
    # bracket is, unless it closes nothing.
    while value and (
        value[-1] in ".,;"
        or (value[-1] == ")" and value.count(")") > value.count("("))
        or (value[-1] == "]" and value.count("]") > value.count("["))
    ):
        value = value[:-1]
        end -= 1
    return (start, end) if value else None


def _is_filler(value: str) -> bool:
    return (
        value.lower() in _NOT_A_SECRET
        or _PLACEHOLDER.fullmatch(value) is not None
        or set(value) <= set("*•x·.")
    )


def _is_prose_word(m: re.Match[str], value: str) -> bool:
    # "my password was stolen": after English "is"/"was", an unquoted
    # lower-case word is prose. Quote it, or use ":", to have it redacted.
    return (
        m.group("prose") is not None
        and m.group("bare") is not None
        and value.isalpha()
        and value.islower()
    )


# One-time codes: 4-8 digits after 验证码/动态码/verification code/OTP ... (so
# "验证码 5 分钟内有效" stays prose; door and gate codes are ``_ENTRY_CODE``'s), card
# CVVs (3-4), and the two phrasings of a code SMS: "Use code 552031 to sign in",
# "552031 is your verification code".
_CODE_KEYWORD: Final = (
    r"(?:(?:短信|登录|登陆|手机|邮箱)?(?:验证码|校验码|认证码|动态码|确认码|授权码)|门禁码|开门码"
    r"|(?<![A-Za-z])(?:(?:verification|confirmation|security|one[\s\-]?time|login|sign[\s\-]?in"
    r"|access|auth(?:entication)?|2fa|mfa|otp|unlock)\s?(?:pass)?code"
    r"|otp|totp)(?![A-Za-z]))"
)
# Literals every code match contains (a cheap search before the keyword patterns).
_CODE_HINT: Final = re.compile(r"码|code|otp|cv[vc]|pin", re.IGNORECASE)
_ONE_TIME_CODE: Final = re.compile(
    _CODE_KEYWORD
    + r"(?:"
    + _SEPARATOR
    + r"|[ \t]*)[\"'“「]?(?P<code>[0-9]{4,8}[#*]?)(?![0-9A-Za-z])",
    re.IGNORECASE,
)
# Door-entry codes may mix letters and digits ("call box code is K9-3317"): after an
# entry word, a 3-12 character value with at least three digits.
_ENTRY_CODE: Final = re.compile(
    r"(?<![A-Za-z])(?:(?:call|lock|key)\s?box|buzzer|intercom|keypad|key\s?safe|door|gate"
    r"|entry|garage|building|alarm)\s?(?:access\s)?(?:code|pin|passcode)"
    + r"(?:"
    + _SEPARATOR
    + r"|[ \t]*)[\"'“「]?"
    r"(?P<code>(?=(?:[A-Za-z#*\-]*[0-9]){3})[A-Za-z0-9][A-Za-z0-9#*\-]{2,11})(?![0-9A-Za-z])",
    re.IGNORECASE,
)
_CVV: Final = re.compile(
    r"(?<![A-Za-z])(?:cvv2?|cvc2?|安全码)(?:"
    + _SEPARATOR
    + r"|[ \t]*)(?P<code>[0-9]{3,4})(?![0-9A-Za-z])",
    re.IGNORECASE,
)
_CODE_SMS: Final = re.compile(
    r"(?<![A-Za-z])(?:use|enter|type|input)\s+(?:the\s+)?(?:code|pin)\s*[:：]?\s*"
    # "to sign in", not "at checkout": a login code, not a numeric promo code.
    r"(?P<use>[0-9]{4,8})(?![0-9A-Za-z])(?=\s+(?:to|for)\s+(?:sign|log|verify|confirm|continue"
    r"|reset|complete|access|authenticate|unlock))"
    r"|(?<![0-9A-Za-z])(?P<yours>[0-9]{4,8})\s+is\s+your\s+(?:[A-Za-z\-]+\s+){0,3}?"
    r"(?:code|pin|otp|passcode|password)(?![A-Za-z])",
    re.IGNORECASE,
)


# Literals in every keyword of the patterns below; one search skips them all
# on most turns.
_PASSWORD_HINT: Final = re.compile(
    r"密码|口令|パスワード|暗証|비밀번호|pass|pwd|pw|pin|kennwort|contrase|senha", re.IGNORECASE
)
_KEY_HINT: Final = re.compile(r"密钥|秘钥|私钥|令牌|key|secret|token|session", re.IGNORECASE)


def _detect_password(folded: str) -> Iterator[_Candidate]:
    if _DIGIT.search(folded) and _CODE_HINT.search(folded):
        for pattern in (_ONE_TIME_CODE, _ENTRY_CODE, _CVV):
            for m in pattern.finditer(folded):
                yield _Candidate("password", m.start("code"), m.end("code"), m.group("code"))
        for m in _CODE_SMS.finditer(folded):
            group = "use" if m.group("use") is not None else "yours"
            yield _Candidate("password", m.start(group), m.end(group), m.group(group))
    if "://" in folded:
        for m in _URL_USERINFO.finditer(folded):
            value = m.group("secret")
            # "postgresql://user:password@host" in docs: the word itself is a stand-in.
            if _is_filler(value) or value.strip("<>{}[]$").lower() in _STAND_INS:
                continue
            yield _Candidate("password", m.start("secret"), m.end("secret"), value)
    if " -p" in folded:
        for m in _CLI_PASSWORD.finditer(folded):
            yield _Candidate("password", m.start("bare"), m.end("bare"), m.group("bare"))
    if _PASSWORD_HINT.search(folded) is None:
        return
    for m in _PASSWORD.finditer(folded):
        span = _secret_span(m)
        if span is None:
            continue
        value = folded[span[0] : span[1]]
        if len(value) < 3 or _is_filler(value) or _is_prose_word(m, value):
            continue
        yield _Candidate("password", span[0], span[1], value)
    for m in _PASSWORD_GLUED.finditer(folded):
        group = "bare" if m.group("bare") is not None else "latin"
        value = m.group(group).rstrip(".,;)]")
        if len(value) >= 4 and not _is_filler(value):
            yield _Candidate("password", m.start(group), m.start(group) + len(value), value)
    for m in _PASSWORD_SPACED.finditer(folded):
        span = _secret_span(m)
        if span is None or span[1] - span[0] < 4:
            continue
        yield _Candidate("password", span[0], span[1], folded[span[0] : span[1]])
    for m in _PASSWORD_INFIX.finditer(folded):
        span = _secret_span(m)
        if span is None:
            continue
        value = folded[span[0] : span[1]]
        if any(ch.isalpha() for ch in value) and any(ch.isdigit() for ch in value):
            yield _Candidate("password", span[0], span[1], value)
    for m in _SHORT_PASSWORD.finditer(folded):
        span = _secret_span(m)
        if span is not None and span[1] - span[0] >= 4:
            yield _Candidate("password", span[0], span[1], folded[span[0] : span[1]])
    for m in _PIN_GLUED.finditer(folded):
        yield _Candidate("password", m.start("pin"), m.end("pin"), m.group("pin"))
    for m in _PIN.finditer(folded):
        yield _Candidate("password", m.start("pin"), m.end("pin"), m.group("pin"))


def _looks_like_key(value: str) -> bool:
    # A key has digits or mixed case, or is long; "token is expired" is prose.
    has_digit = any(ch.isdigit() for ch in value)
    mixed_case = any(ch.isupper() for ch in value) and any(ch.islower() for ch in value)
    return len(value) >= 8 and (has_digit or mixed_case or len(value) >= 20)


def _generated(value: str) -> bool:
    return (
        len(value) >= 12 and any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value)
    )


def _detect_api_key(folded: str) -> Iterator[_Candidate]:
    for m in _KNOWN_KEY_FORMATS.finditer(folded):
        yield _Candidate("api_key", m.start(), m.end(), m.group())
    for m in _ACCESS_KEY_ID.finditer(folded):
        window = folded[m.end() : m.end() + _PAIR_WINDOW]
        paired = _PAIRED_SECRET.search(window)
        if (
            paired is not None
            and _generated(paired.group())
            and not _ACCESS_KEY_ID.match(paired.group())
        ):
            start = m.end() + paired.start()
            yield _Candidate("api_key", start, start + len(paired.group()), paired.group())
    for m in _BEARER.finditer(folded):
        group = "token" if m.group("token") is not None else "basic"
        yield _Candidate("api_key", m.start(group), m.end(group), m.group(group))
    if _KEY_HINT.search(folded) is None and "K" not in folded:  # "K": the AK/SK labels
        return
    for m in _PROSE_KEY.finditer(folded):
        span = _secret_span(m)
        if span is not None and _generated(folded[span[0] : span[1]]):
            yield _Candidate("api_key", span[0], span[1], folded[span[0] : span[1]])
    for m in _KEYED_SPACED.finditer(folded):
        span = _secret_span(m)
        if span is None:
            continue
        value = folded[span[0] : span[1]]
        if _generated(value) and not _is_filler(value):
            yield _Candidate("api_key", span[0], span[1], value)
    for m in _KEYED_SECRET.finditer(folded):
        span = _secret_span(m)
        if span is None:
            continue
        value = folded[span[0] : span[1]]
        if _is_filler(value) or not _looks_like_key(value):
            continue
        yield _Candidate("api_key", span[0], span[1], value)
