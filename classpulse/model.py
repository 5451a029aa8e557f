"""What a class pulse stores, and the rules every store keeps: class codes, teacher tokens, questions, limits.

A class is a short random code (``7QX2K``) that students carry in their link, and a teacher token that only the
teacher's link carries. The token is random and independent of the code (nothing about one tells anything about
the other); a store keeps only its SHA-256 and compares digests with ``hmac.compare_digest``, so a guess of any
length or alphabet costs the same and a copy of the store does not open the teacher's view.

Nothing personal is stored: a student is a random voter id made by the student's session (no name, no address);
a question is what the page computed (a prompt, the choices, the index of the right one).
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L: read off a projector without mistakes
CODE_LENGTH = 5  # 31**5 = 28.6 million codes
CLASS_HOURS = 4.0  # a class ends this long after it was started
MAX_CLASSES = 500  # live classes one store holds at once
MAX_QUESTIONS = 40  # different questions per class (a student who changes the setting asks a new one)
MAX_ANSWERS = 3000  # answers per class (a change of mind replaces an answer and counts once)
MAX_REFUSED = 1000  # refused questions a class counts (the teacher's view says how many)
MAX_CHOICES = 512  # the largest seq_len: one choice per key
MAX_LABEL = 24  # characters kept of each choice's label
MAX_PROMPT = 200  # characters kept of a question's prompt
MAX_WHERE = 40  # characters kept of the page's name
MAX_SETTING = 32  # items kept of a question's setting
TOKEN_BYTES = 18  # a teacher token: 144 random bits, 24 URL-safe characters
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,64}")  # what a link's teacher= may look like at all
VOTER_PATTERN = re.compile(r"[0-9a-f]{16,64}")
QID_PATTERN = re.compile(r"[0-9a-f]{16}")


class Outcome(enum.Enum):
    """Why a store did not do what it was asked (or OK). The value is a sentence a page can show."""

    OK = "ok"
    NO_CLASS = "there is no class with this code"
    EXPIRED = "this class has ended (a class lasts a few hours)"
    FULL = "the class has as many answers or questions as it may hold"
    TOO_MANY_CLASSES = "the server holds as many classes as it may; try again later"
    FORBIDDEN = "this is not the teacher's link of the class"
    BAD = "the request was not valid"
    UNAVAILABLE = "the class tally is unavailable"


def new_code() -> str:
    """A random class code of CODE_LENGTH characters from ALPHABET."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def parse_code(raw: object) -> str | None:
    """The class code in ``raw`` (any case, spaces around it ignored), or None when it is not a code."""
    code = str(raw or "").strip().upper()
    if len(code) == CODE_LENGTH and all(c in ALPHABET for c in code):
        return code
    return None


def new_token() -> str:
    """A teacher token: random bits, never derived from the class code."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_digest(token: object) -> str:
    """SHA-256 of a token (any text, any length): what a store keeps and compares."""
    data = token.encode("utf-8", "surrogatepass") if isinstance(token, str) else b""
    return hashlib.sha256(data).hexdigest()


def token_matches(candidate: object, stored_digest: str) -> bool:
    """Whether ``candidate`` is the token whose digest is ``stored_digest``, in constant time.

    The candidate is hashed first, so the comparison is always of two 64-character digests whatever was sent
    (empty, a prefix, a megabyte, non-ASCII text); ``hmac.compare_digest`` then compares them in constant time."""
    if not isinstance(candidate, str) or not candidate or not isinstance(stored_digest, str):
        return False
    return hmac.compare_digest(token_digest(candidate).encode(), stored_digest.encode())


def new_voter() -> str:
    """A random voter id (nothing about the student in it); a class's pages use :func:`sign_voter`'s."""
    return secrets.token_hex(8)


def _voter_mac(digest: str, code: str, nonce: str) -> str:
    return hmac.new(digest.encode(), f"{code}:{nonce}".encode(), hashlib.sha256).hexdigest()[:16]


def sign_voter(digest: str, code: str, nonce: str | None = None) -> str:
    """A student id of class ``code``: 16 random hex digits and 16 of an HMAC of them keyed by the class's token
    digest (which only the store holds). It says nothing about the student and means nothing in another class;
    the student's browser keeps it (ui/classroom/pulse_device.py), so a reload or a second tab is the same student."""
    nonce = nonce or new_voter()
    return nonce + _voter_mac(digest, code, nonce)


def voter_signed(digest: str, code: str, voter: object) -> bool:
    """Whether ``voter`` is a student id that class ``code`` (token digest ``digest``) issued (constant time)."""
    if not isinstance(voter, str) or len(voter) != 32 or not VOTER_PATTERN.fullmatch(voter):
        return False
    return hmac.compare_digest(_voter_mac(digest, code, voter[:16]), voter[16:])


LINK_PATTERN = re.compile(r"[A-Za-z0-9_-]{0,60}(\?[A-Za-z0-9_.,%=&+-]{0,1900})?")  # "Playground?seq_len=6&class=…"
# The stored link is also where the class is led: the students' pages follow it (ui/classroom/follow.py) unless the
# teacher let them explore freely, which the link says with this parameter (never part of a student's address).
FREE_PARAM = "lead"
FREE = f"{FREE_PARAM}=free"


def split_lead(link: str) -> tuple[str, bool]:
    """A stored link without its "explore freely" mark, and whether it had one."""
    page, _, query = link.partition("?")
    items = [item for item in query.split("&") if item]
    kept = [item for item in items if item.split("=", 1)[0] != FREE_PARAM]
    return (f"{page}?{'&'.join(kept)}" if kept else page), FREE in items


def lead_link(link: str, free: bool) -> str:
    """``link`` (a page name and its query) with the "explore freely" mark when ``free``."""
    link = split_lead(link)[0]
    if not free:
        return link
    return f"{link}{'&' if '?' in link else '?'}{FREE}"


def _clip(text: object, n: int) -> str:
    s = str(text)
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass(frozen=True)
class Question:
    """One question of a class, as the page computed it.

    ``qid`` names the question by what was asked (page and setting), so every student who sees the same
    question on any replica answers the same one. ``right`` is the index of the right choice, -1 when none is.
    """

    qid: str  # 16 hex digits (see :func:`question_id`)
    where: str  # the page, e.g. "Playground"
    prompt: str  # "Which key will query t1 attend to most?"
    choices: tuple[str, ...]  # labels, in the order the student picks from
    right: int = -1
    setting: tuple[str, ...] = ()  # what the page was set to ("seed 3", ...): the teacher tells questions apart

    def __post_init__(self):
        if not isinstance(self.qid, str) or not QID_PATTERN.fullmatch(self.qid):
            raise ValueError(f"qid={self.qid!r} must be 16 lowercase hex digits")
        if not 1 <= len(self.choices) <= MAX_CHOICES:
            raise ValueError(f"a question has 1 to {MAX_CHOICES} choices, not {len(self.choices)}")
        if not -1 <= self.right < len(self.choices):
            raise ValueError(f"right={self.right} must be -1 (none) or a choice index below {len(self.choices)}")
        object.__setattr__(self, "where", _clip(self.where, MAX_WHERE))
        object.__setattr__(self, "prompt", _clip(self.prompt, MAX_PROMPT))
        object.__setattr__(self, "choices", tuple(_clip(c, MAX_LABEL) for c in self.choices))
        object.__setattr__(self, "setting", tuple(_clip(c, MAX_LABEL) for c in self.setting[:MAX_SETTING]))

    def to_json(self) -> str:
        body = [self.qid, self.where, self.prompt, list(self.choices), self.right, list(self.setting)]
        return json.dumps(body, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Question:
        qid, where, prompt, choices, right, *setting = json.loads(text)  # a class stored before settings had none
        return cls(qid, where, prompt, tuple(choices), right, tuple(setting[0]) if setting else ())


def question_id(*identity: object) -> str:
    """A question's id from what identifies it (page, setting, head, query): the same on every replica."""
    return hashlib.sha256(repr(identity).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Started:
    """A new class: the code for the students, the token for the teacher, when it ends (epoch seconds)."""

    code: str
    token: str
    expires: float


@dataclass(frozen=True)
class ClassInfo:
    """A live class as a student sees it: when it ends, and how many reveals it has had (a student page reruns
    when this number moves)."""

    code: str
    expires: float
    reveals: int


@dataclass(frozen=True)
class Tally:
    """One question's answers: a count per choice, and whether the teacher has revealed it."""

    question: Question
    counts: tuple[int, ...]  # one per choice
    revealed: bool
    first_seen: float  # when the class first saw the question (epoch seconds), for ordering

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def right_count(self) -> int:
        return self.counts[self.question.right] if self.question.right >= 0 else 0
