"""Redaction of personal identifiers and secrets before anything is stored.

Pure and stdlib-only: no I/O, no logging of values. Every memory text passes
through :class:`Redactor` before it is embedded, indexed or logged, so the
vector store, the keyword index and the logs only ever see placeholders.

Detected kinds (names as in ``config.IDENTIFIER_KINDS``):

=================  ===============================================================
``cn_mobile``      mainland-China mobile numbers, ``1[3-9]`` + 9 digits, optional
                   ``+86``/``0086``, spaces, dashes or dots as ``138 0013 8000``
``cn_resident_id`` 18-digit resident ID numbers: valid birth date and the
                   GB 11643 check character (last char may be ``X``), compact or
                   grouped 6-8-4; legacy 15-digit numbers: province code and a
                   valid 19YYMMDD date
``national_id``    identity numbers outside the mainland, each with its check
                   digit: Hong Kong ``A123456(7)``, Taiwan ``A123456789``,
                   Singapore ``S1234567D``, US SSN ``123-45-6789``, UK National
                   Insurance ``AB 12 34 56 C`` (the compact and undashed forms
                   only after their keyword)
``bank_card``      13-19 digits, contiguous or in groups, passing the Luhn check;
                   IBANs (mod-97 and the country's length); 8-30 digits after a
                   bank-account keyword (银行账号/收款账户/bank account/account no.)
``email``          e-mail addresses (not ``icon@2x.png``, not ``git@host:repo``)
``phone``          international numbers (``+44 20 7946 0958``, ``0049 30 123456``),
                   US-style ``(415) 555-2671`` / ``1-800-555-0199``, national numbers
                   with their trunk 0 (``07700 900123``, ``0151 23456789``,
                   ``06 12 34 56 78``, ``090-1234-5678``); after a phone word also
                   ``415 555 2671``, 8-digit HK/SG numbers and compact national ones
``cn_landline``    mainland-China landlines without a country code: ``010-12345678``,
                   ``0755-1234567``, ``(021) 6123 4567``, extensions; 11 contiguous
                   digits (``01012345678``) only after a phone word (电话/座机/tel);
                   ``020 7946 0958`` (London's shape too) only in a text with Chinese
``passport``       passport and HK/Macau permit numbers after 护照/通行证/passport
                   (``E12345678``, ``G1234567``, 6-9 digits, ``C01X00T47``), JSON keys
``ip_address``     IPv4 (octets 0-255, no leading zeros) and IPv6 (validated)
``password``       the value after 密码/口令/password/passwd/pwd and ``:``, ``：``,
                   ``=``, ``是``, ``为``, ``is``/``was`` (quoted values whole, CJK
                   included), or after only a space when it has a digit
                   (``wifi密码 12345678``); 4-12 digits after PIN/PIN码; one-time
                   and door codes (验证码 583920, ``OTP: 482913``, ``552031 is your
                   code``), CVVs, the password in ``scheme://user:password@host``
``api_key``        the value after api key/token/secret/密钥/令牌..., and known
                   formats: ``sk-``, ``sk-proj-``, ``ghp_``, ``github_pat_``, ``AKIA``,
                   ``xoxb-``/``xoxp-``, ``AIza``, ``glpat-``, ``hf_``, ``npm_``,
                   SendGrid ``SG.``, Stripe-style ``sk_live_``, JWTs,
                   ``Bearer <token>``, ``Authorization: Basic <base64>``
=================  ===============================================================

Hard negatives are kept on purpose: order and tracking numbers (a number whose
clause starts with 订单号/运单号/order/tracking/meeting ... is not a phone or a
card, unless a word such as 电话/phone/card follows), dates, prices, model
numbers, version and section strings (``v1.2.3.4``, "Chapter 12.3.4.5" are not
IPs), an 18-digit string whose check character is wrong, a 16-digit number
failing Luhn, prose such as "the password is incorrect", a landline-shaped
group inside a longer digit sequence, a passport-shaped code without its
keyword, a 15-digit number in an order/IMEI clause, lottery draws and number
lists, numeric promo codes, pickup codes, subnet masks. Not detected: street addresses,
licence plates, names, secrets that look like ordinary words.

Full-width digits and letters (``１３８``) are folded to ASCII, and the
Traditional characters of the keywords (密碼, 驗證碼, 護照號碼, 電話) to their
simplified forms, before matching; finding offsets always index the original
text. Password words of other languages count too (Passwort, mot de passe,
パスワード, 暗証番号, 비밀번호), as do ``pw:``/``pass:`` with a value holding a digit,
JSON keys (``"password": "..."``), a clause between keyword and value ("the token I
use is ...", 密码发你：...), "my ... key is <generated>", AK/SK labels and session ids;
a value inside a URL query ends at the next ``&name=``; hedges before 是 count
(密码应该是 ...), and so do ``mysql -pSECRET`` and Slack/Discord webhook URLs.

Example:
    >>> redact("call me on 138 0013 8000 or mail li.lei@example.com").text
    'call me on [PHONE:*8000] or mail [EMAIL:@example.com]'
    >>> redact("订单号 202611301234567890 已发货").findings
    ()
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from langgraph_memory._checksums import (
    is_valid_hkid,
    is_valid_iban,
    is_valid_nric,
    is_valid_resident_id,
    is_valid_ssn,
    is_valid_taiwan_id,
    luhn_valid,
    resident_id_check_char,
)
from langgraph_memory._redact_ids import (
    _detect_bank_card,
    _detect_ip,
    _detect_national_id,
    _detect_passport,
    _detect_resident_id,
    _detect_resident_id_15,
    is_valid_legacy_resident_id,
)
from langgraph_memory._redact_phones import _detect_cn_landline, _detect_cn_mobile, _detect_phone
from langgraph_memory._redact_secrets import _detect_api_key, _detect_email, _detect_password
from langgraph_memory._redact_text import _DIGIT, _FOLD_WIDTH, _Candidate, _Detector
from langgraph_memory.config import IDENTIFIER_KINDS, PrivacyPolicy, RedactionAction
from langgraph_memory.errors import (
    ConfigurationError,
    InvalidUserIdError,
    RedactionRejectedError,
)

# The poisoning defence lives in its own module (this one is redaction); both
# are privacy's public API.
from langgraph_memory.poisoning import is_instruction_override, neutralize_markup

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = [
    "PLACEHOLDER_LABELS",
    "Finding",
    "RedactionResult",
    "Redactor",
    "fingerprint_user_id",
    "is_instruction_override",
    "is_valid_hkid",
    "is_valid_iban",
    "is_valid_legacy_resident_id",
    "is_valid_nric",
    "is_valid_resident_id",
    "is_valid_ssn",
    "is_valid_taiwan_id",
    "luhn_valid",
    "neutralize_markup",
    "redact",
    "redact_for_log",
    "redact_messages",
    "resident_id_check_char",
]

# Placeholder label per kind: ``[PHONE]`` when masked, ``[PHONE:3f9a1c2b]`` when hashed.
# Both phone kinds share a label so a hashed number matches across formats.
PLACEHOLDER_LABELS: Final[Mapping[str, str]] = {
    "cn_mobile": "PHONE",
    "cn_resident_id": "ID_NUMBER",
    "bank_card": "BANK_CARD",
    "email": "EMAIL",
    "phone": "PHONE",
    "ip_address": "IP_ADDRESS",
    "password": "PASSWORD",
    "api_key": "API_KEY",
    "cn_landline": "PHONE",
    "passport": "PASSPORT",
    # Same label as the mainland ID: "forget my ID number" reaches both.
    "national_id": "ID_NUMBER",
}

# When two candidates overlap, the longer one wins; on equal length the kind
# listed first here wins (a valid ID checksum is stronger evidence than Luhn).
_SPECIFICITY: Final[Mapping[str, int]] = {
    kind: rank
    for rank, kind in enumerate(
        (
            "api_key",
            "email",
            "cn_resident_id",
            "national_id",
            "passport",
            "bank_card",
            "cn_mobile",
            "cn_landline",
            "ip_address",
            "phone",
            "password",
        )
    )
}


# Kinds whose last digits identify nobody and let the user be answered ("the number ending
# 1937", "the card ending 4410"); the digits must be at least twice the kept ones.
_TAIL_DIGITS: Final[Mapping[str, int]] = {
    "cn_mobile": 4, "phone": 4, "cn_landline": 4, "bank_card": 4,
}  # fmt: skip


def _tail(kind: str, value: str) -> str:
    """What ``partial`` keeps of an identifier: ``":*1937"``, ``":@outlook.com"`` or ``""``."""
    if kind == "email" and "@" in value:
        return ":@" + value.rsplit("@", 1)[1].lower()
    keep = _TAIL_DIGITS.get(kind)
    if keep is None:
        return ""
    digits = "".join(ch for ch in value.translate(_FOLD_WIDTH) if ch.isdigit())
    if len(digits) < 2 * keep:
        return ""
    return ":*" + digits[-keep:]


@dataclass(frozen=True, slots=True)
class Finding:
    """One identifier found in a text: its kind, its place, what was done.

    ``start``/``end`` index the *original* text (``text[start:end]`` is the
    identifier). A finding never holds the identifier itself, so findings can
    be logged and stored in receipts.
    """

    kind: str
    start: int
    end: int
    action: RedactionAction


@dataclass(frozen=True, slots=True)
class RedactionResult:
    """The redacted text and what was found in the original.

    Example:
        >>> result = redact("my email is ann@example.org")
        >>> result.text, [f.kind for f in result.findings]
        ('my email is [EMAIL:@example.org]', ['email'])
    """

    text: str
    findings: tuple[Finding, ...]

    @property
    def changed(self) -> bool:
        """True when at least one identifier was masked or hashed."""
        return any(f.action in ("partial", "mask", "hash") for f in self.findings)

    def counts(self) -> dict[str, int]:
        """Number of findings per kind, e.g. for a content-free receipt."""
        out: dict[str, int] = {}
        for finding in self.findings:
            out[finding.kind] = out.get(finding.kind, 0) + 1
        return out


# --- detectors ----------------------------------------------------------------
# In _redact_phones.py, _redact_ids.py and _redact_secrets.py (shared text
# handling in _redact_text.py, check digits in _checksums.py). The number
# detectors only run on a text with a digit in it (IPv6 included: an address
# with no decimal digit is not reported); most conversation turns have none, and
# then only the key and password detectors run, and the e-mail one on an "@".
_DETECTORS: Final[tuple[_Detector, ...]] = (_detect_api_key, _detect_password)
_DIGIT_DETECTORS: Final[tuple[_Detector, ...]] = (
    _detect_resident_id,
    _detect_resident_id_15,
    _detect_national_id,
    _detect_passport,
    _detect_bank_card,
    _detect_cn_mobile,
    _detect_cn_landline,
    _detect_ip,
    _detect_phone,
)


def _resolve_overlaps(candidates: list[_Candidate]) -> list[_Candidate]:
    """Keep the longest candidate of each overlapping group (most specific on ties)."""
    ordered = sorted(candidates, key=lambda c: (-(c.end - c.start), _SPECIFICITY[c.kind], c.start))
    kept: list[_Candidate] = []
    for candidate in ordered:
        if all(candidate.end <= k.start or candidate.start >= k.end for k in kept):
            kept.append(candidate)
    return sorted(kept, key=lambda c: c.start)


# --- hashing ------------------------------------------------------------------


@lru_cache(maxsize=32)
def _salt_key(salt: str) -> bytes:
    # blake2b keys are at most 64 bytes; hashing the salt accepts any length.
    return hashlib.blake2b(salt.encode("utf-8"), digest_size=32).digest()


def _digest(label: str, canonical: str, salt: str) -> str:
    return hashlib.blake2b(
        canonical.encode("utf-8"),
        digest_size=4,
        key=_salt_key(salt),
        person=label.encode("ascii")[:16],
    ).hexdigest()


def fingerprint_user_id(user_id: str, *, salt: str = "langgraph-memory") -> str:
    """A salted, stable fingerprint of a user id for content-free receipts and logs.

    Args:
        user_id: The user id to fingerprint.
        salt: Deployment secret; the same id gives a different fingerprint under
            another salt, so fingerprints cannot be joined across deployments.

    Raises:
        InvalidUserIdError: ``user_id`` is not a non-empty string.

    Example:
        >>> fp = fingerprint_user_id("alice")
        >>> fp.startswith("user:"), len(fp), fp == fingerprint_user_id("alice")
        (True, 21, True)
    """
    if not isinstance(user_id, str) or not user_id:
        raise InvalidUserIdError(
            f"fingerprint_user_id() needs a non-empty string user id, got {user_id!r}."
        )
    digest = hashlib.blake2b(
        user_id.encode("utf-8"), digest_size=8, key=_salt_key(salt), person=b"lgm-user-id"
    ).hexdigest()
    return f"user:{digest}"


# --- public API ---------------------------------------------------------------

# Message fields besides ``content`` that can carry user text into storage.
_MESSAGE_PAYLOAD_FIELDS: Final = (
    "tool_calls",
    "invalid_tool_calls",
    "tool_call_chunks",
    "additional_kwargs",
    "response_metadata",
    "artifact",
)
# Keys whose values are wiring, not text: redacting an id would unpair a tool
# call from its result, and a thinking block's signature is opaque.
_STRUCTURAL_KEYS: Final = frozenset(
    {"id", "tool_call_id", "type", "name", "index", "signature", "model_name", "model"}
)
_MEDIA_BLOCK_TYPES: Final = frozenset(
    {"image", "image_url", "file", "audio", "input_audio", "video", "document"}
)


class Redactor:
    """Finds identifiers and applies a :class:`PrivacyPolicy` to them.

    Patterns are compiled once at import; a ``Redactor`` only binds a policy,
    so building one is cheap and instances are safe to share across threads.

    Args:
        policy: What to do per identifier kind; ``None`` masks every kind.

    Raises:
        ConfigurationError: ``policy`` is not a ``PrivacyPolicy``.

    Example:
        >>> from types import MappingProxyType
        >>> policy = PrivacyPolicy(actions=MappingProxyType({"email": "hash"}))
        >>> Redactor(policy).redact("write to Ann@Example.org").text  # doctest: +ELLIPSIS
        'write to [EMAIL:...]'
    """

    __slots__ = ("_actions", "_salt", "policy")

    def __init__(self, policy: PrivacyPolicy | None = None) -> None:
        if policy is None:
            policy = PrivacyPolicy()
        if not isinstance(policy, PrivacyPolicy):
            raise ConfigurationError(
                f"Redactor(policy={policy!r}): pass a langgraph_memory.config.PrivacyPolicy or None."
            )
        self.policy = policy
        self._actions: dict[str, RedactionAction] = {
            kind: policy.action_for(kind) for kind in IDENTIFIER_KINDS
        }
        self._salt = policy.hash_salt

    def find(self, text: str) -> tuple[Finding, ...]:
        """Locate identifiers without changing the text or raising for ``reject``.

        Example:
            >>> [(f.kind, f.start, f.end) for f in Redactor().find("IP 10.0.0.8")]
            [('ip_address', 3, 11)]
        """
        return tuple(
            Finding(c.kind, c.start, c.end, self._actions[c.kind]) for c in self._scan(text)
        )

    def redact(self, text: str) -> RedactionResult:
        """Apply the policy to every identifier in ``text``.

        Raises:
            RedactionRejectedError: An identifier's kind is set to ``reject``;
                the message names the kind and position, never the value.
            TypeError: ``text`` is not a string.

        Example:
            >>> Redactor().redact("我的手机号是13800138000").text
            '我的手机号是[PHONE:*8000]'
        """
        candidates = self._scan(text)
        for candidate in candidates:
            if self._actions[candidate.kind] == "reject":
                raise RedactionRejectedError(
                    f"Text contains a {candidate.kind!r} identifier at characters "
                    f"{candidate.start}-{candidate.end}, and the privacy policy rejects "
                    f"{candidate.kind!r}. Remove it from the text, or set "
                    f"PrivacyPolicy(actions={{{candidate.kind!r}: 'mask'}}) (or 'hash')."
                )
        pieces: list[str] = []
        cursor = 0
        findings: list[Finding] = []
        for candidate in candidates:
            action = self._actions[candidate.kind]
            findings.append(Finding(candidate.kind, candidate.start, candidate.end, action))
            if action == "keep":
                continue
            label = PLACEHOLDER_LABELS[candidate.kind]
            if action == "hash":
                replacement = f"[{label}:{_digest(label, candidate.canonical, self._salt)}]"
            elif action == "partial":
                replacement = (
                    f"[{label}{_tail(candidate.kind, text[candidate.start : candidate.end])}]"
                )
            else:
                replacement = f"[{label}]"
            pieces.append(text[cursor : candidate.start])
            pieces.append(replacement)
            cursor = candidate.end
        pieces.append(text[cursor:])
        return RedactionResult("".join(pieces), tuple(findings))

    def redact_messages(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """Copies of LangChain messages with redacted content; the inputs are untouched.

        Everything a message carries into storage (the memory queue serialises
        whole messages) is covered: string content; every string inside
        content blocks (``text``, a ``tool_use`` block's ``input``, reasoning)
        except media blocks and structural fields; ``tool_calls`` args,
        ``invalid_tool_calls`` and ``tool_call_chunks`` args (raw JSON strings);
        ``additional_kwargs`` (a provider's raw ``function.arguments``);
        ``response_metadata``; a ``ToolMessage``'s ``artifact``. Ids, names and
        types are kept, so tool calls still pair with their results.

        Example:
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> Redactor().redact_messages([HumanMessage("pwd: hunter2!")])[0].content
            'pwd: [PASSWORD]'
            >>> call = {"name": "sms", "args": {"to": "13800138000"}, "id": "c1"}
            >>> Redactor().redact_messages([AIMessage("", tool_calls=[call])])[0].tool_calls[0]["args"]
            {'to': '[PHONE:*8000]'}
        """
        out: list[BaseMessage] = []
        for message in messages:
            update: dict[str, Any] = {"content": self._redact_content(message.content)}
            for field_name in _MESSAGE_PAYLOAD_FIELDS:
                value = getattr(message, field_name, None)
                if value:
                    update[field_name] = self._redact_value(value)
            out.append(message.model_copy(update=update))
        return out

    def _redact_content(self, content: str | list[str | dict[Any, Any]]) -> Any:
        if isinstance(content, str):
            return self.redact(content).text
        blocks: list[str | dict[Any, Any]] = []
        for block in content:
            if isinstance(block, str):
                blocks.append(self.redact(block).text)
            elif block.get("type") in _MEDIA_BLOCK_TYPES:
                blocks.append(block)  # base64 payloads and URLs, not prose
            else:
                blocks.append(self._redact_value(block))
        return blocks

    def _redact_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value).text
        if isinstance(value, dict):
            return {
                key: item if key in _STRUCTURAL_KEYS else self._redact_value(item)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return type(value)(self._redact_value(item) for item in value)
        return value

    def _scan(self, text: str) -> list[_Candidate]:
        if not isinstance(text, str):
            raise TypeError(f"redact() needs a str, got {type(text).__name__}: {text!r:.60}")
        if not text:
            return []
        folded = text.translate(_FOLD_WIDTH)
        detectors = _DETECTORS + _DIGIT_DETECTORS if _DIGIT.search(folded) else _DETECTORS
        candidates = [c for detect in detectors for c in detect(folded)]
        if "@" in folded:
            candidates.extend(_detect_email(folded))
        return _resolve_overlaps(candidates) if candidates else []


_DEFAULT_REDACTOR: Final = Redactor()
# Logs keep no tail: they are kept longer and read by more people than the memories.
_LOG_REDACTOR: Final = Redactor(PrivacyPolicy.every_kind("mask"))


def redact(text: str, policy: PrivacyPolicy | None = None) -> RedactionResult:
    """Redact identifiers in ``text`` under ``policy`` (``None``: mask everything).

    Example:
        >>> redact("card 4111 1111 1111 1111, ID 11010519491231002X").text
        'card [BANK_CARD:*1111], ID [ID_NUMBER]'
    """
    redactor = _DEFAULT_REDACTOR if policy is None else Redactor(policy)
    return redactor.redact(text)


def redact_for_log(value: object, limit: int = 160) -> str:
    """``str(value)`` with every identifier masked whole, cut to ``limit`` characters.

    For log lines and stored error notes that quote model or user text (a cited
    id, a validation error echoing the model's answer): logs are kept longer and
    read by more people than the memories themselves.

    Example:
        >>> redact_for_log("bad id 'call 13812345678 now'")
        "bad id 'call [PHONE] now'"
    """
    text = _LOG_REDACTOR.redact(str(value)).text
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "\u2026"


def redact_messages(
    messages: Sequence[BaseMessage], policy: PrivacyPolicy | None = None
) -> list[BaseMessage]:
    """Copies of ``messages`` with identifiers redacted (see :meth:`Redactor.redact_messages`)."""
    redactor = _DEFAULT_REDACTOR if policy is None else Redactor(policy)
    return redactor.redact_messages(messages)
