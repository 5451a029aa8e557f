"""The store's contract: what a page may ask, checked once here for every backend, and never an exception.

A backend (:mod:`classpulse.sqlite_store`, :mod:`classpulse.redis_store`) implements six small primitives, each
atomic on its own; :class:`PulseStore` validates what comes in (codes, tokens, voter ids, choices), checks the
teacher's token, and turns every failure of the backend (Redis gone, a full disk) into ``Outcome.UNAVAILABLE``.
After a failure it answers UNAVAILABLE at once for ``retry_after`` seconds, so that a page whose store went away
does not wait for a connection timeout on every run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from classpulse.model import (
    CLASS_HOURS,
    LINK_PATTERN,
    QID_PATTERN,
    VOTER_PATTERN,
    ClassInfo,
    Outcome,
    Question,
    Started,
    Tally,
    new_code,
    new_token,
    parse_code,
    sign_voter,
    token_digest,
    token_matches,
    voter_signed,
)

_log = logging.getLogger(__name__)
Meta = tuple[str, float, int]  # (token digest, expires, reveals) of a class
Row = tuple[str, float, bool, list[int]]  # (question JSON, first seen, revealed, the choice of every answer)


class PulseStore:
    """A class pulse store. Every public method returns a value or an :class:`Outcome`, never raises.

    Args:
        clock: the time in epoch seconds (tests pass a fake one to expire classes).
        retry_after: seconds to answer UNAVAILABLE without asking the backend after it failed.
    """

    errors: tuple[type[BaseException], ...] = ()  # the backend's failures (they become UNAVAILABLE)
    kind = "abstract"  # "embedded" or "redis", for the pages and the benchmark

    def __init__(self, clock: Callable[[], float] = time.time, retry_after: float = 0.0):
        self.clock, self.retry_after = clock, retry_after
        self._down_until = 0.0
        self._breaker = threading.Lock()
        self.failures = 0  # calls the backend failed (each logged)

    # ---- the primitives a backend implements (each atomic)

    def _create(self, code: str, digest: str, now: float, expires: float) -> Outcome | bool:
        """Create the class; False when the code is taken, TOO_MANY_CLASSES when the store is full."""
        raise NotImplementedError

    def _meta(self, code: str) -> Meta | None:
        raise NotImplementedError

    def _record(self, code: str, question: Question, voter: str | None, choice: int, now: float) -> Outcome:
        """Add the question if new (bounded), then the voter's choice (replacing theirs; bounded) unless voter is
        None. NO_CLASS / EXPIRED when the class is gone."""
        raise NotImplementedError

    def _reveal(self, code: str, qid: str) -> Outcome:
        raise NotImplementedError

    def _revealed(self, code: str, qids: list[str]) -> set[str]:
        raise NotImplementedError

    def _rows(self, code: str) -> list[Row]:
        raise NotImplementedError

    def _mine(self, code: str, voter: str, qids: list[str]) -> dict[str, int]:
        """The choices ``voter`` recorded for those of ``qids`` they answered."""
        raise NotImplementedError

    def _set_link(self, code: str, link: str) -> Outcome:
        raise NotImplementedError

    def _link(self, code: str) -> str:
        """The class's students' link ("" before the teacher's page gave one)."""
        raise NotImplementedError

    def _refused(self, code: str) -> int:
        """How many different questions the class refused because it held MAX_QUESTIONS (``_record`` counts them)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the backend's connections (the store is not used afterwards)."""

    # ---- failure handling

    def _call(self, fn, *args):
        if self.retry_after and time.monotonic() < self._down_until:
            return Outcome.UNAVAILABLE
        try:
            return fn(*args)
        except self.errors as exc:
            with self._breaker:
                self._down_until = time.monotonic() + self.retry_after
            self.failures += 1
            _log.warning(
                "the class pulse store failed (%s: %s); unavailable for %g s", type(exc).__name__, exc, self.retry_after
            )
            return Outcome.UNAVAILABLE

    def _live(self, code: object) -> tuple[str, Meta] | Outcome:
        """The class's code and meta data when it exists and has not ended."""
        parsed = parse_code(code)
        if parsed is None:
            return Outcome.NO_CLASS
        meta = self._call(self._meta, parsed)
        if isinstance(meta, Outcome):
            return meta
        if meta is None:
            return Outcome.NO_CLASS
        if meta[1] <= self.clock():
            return Outcome.EXPIRED
        return parsed, meta

    # ---- what pages ask

    def start_class(self) -> Started | Outcome:
        """A new class with a fresh code and a fresh teacher token, ending CLASS_HOURS from now."""
        token, now = new_token(), self.clock()
        expires = now + CLASS_HOURS * 3600
        for _ in range(8):  # a taken code is retried; 8 collisions in a row would need a nearly full code space
            code = new_code()
            made = self._call(self._create, code, token_digest(token), now, expires)
            if made is True:
                return Started(code, token, expires)
            if isinstance(made, Outcome):
                return made
        return Outcome.TOO_MANY_CLASSES

    def info(self, code: object) -> ClassInfo | Outcome:
        """The class behind ``code`` (NO_CLASS for anything that is not a live class's code)."""
        live = self._live(code)
        if isinstance(live, Outcome):
            return live
        code, (_, expires, reveals) = live
        return ClassInfo(code, expires, reveals)

    def check_teacher(self, code: object, token: object) -> Outcome:
        """OK when ``token`` is the teacher token of the live class ``code`` (constant-time), else why not."""
        live = self._live(code)
        if isinstance(live, Outcome):
            return live
        return Outcome.OK if token_matches(token, live[1][0]) else Outcome.FORBIDDEN

    def add_question(self, code: object, question: Question) -> Outcome:
        """Make ``question`` known to the class (a teacher's page does, so it is listed before any answer)."""
        parsed = parse_code(code)
        if parsed is None:
            return Outcome.NO_CLASS
        if not isinstance(question, Question):
            return Outcome.BAD
        return self._call(self._record, parsed, question, None, -1, self.clock())

    def answer(self, code: object, question: Question, voter: object, choice: object) -> Outcome:
        """Record ``voter``'s choice for ``question`` (a later answer of the same voter replaces it)."""
        parsed = parse_code(code)
        if parsed is None:
            return Outcome.NO_CLASS
        ok = isinstance(question, Question) and isinstance(voter, str) and VOTER_PATTERN.fullmatch(voter)
        if not ok or type(choice) is not int or not 0 <= choice < len(question.choices):
            return Outcome.BAD
        return self._call(self._record, parsed, question, voter, choice, self.clock())

    def reveal(self, code: object, token: object, qid: object) -> Outcome:
        """The teacher reveals question ``qid`` to the class (FORBIDDEN without the class's teacher token)."""
        checked = self.check_teacher(code, token)
        if checked is not Outcome.OK:
            return checked
        if not isinstance(qid, str) or not QID_PATTERN.fullmatch(qid):
            return Outcome.BAD
        return self._call(self._reveal, parse_code(code), qid)

    def revealed(self, code: object, qids: Iterable[str]) -> frozenset[str] | Outcome:
        """Which of ``qids`` the teacher has revealed."""
        parsed = parse_code(code)
        if parsed is None:
            return Outcome.NO_CLASS
        wanted = [q for q in qids if isinstance(q, str) and QID_PATTERN.fullmatch(q)][:64]
        if not wanted:
            return frozenset()
        got = self._call(self._revealed, parsed, wanted)
        return got if isinstance(got, Outcome) else frozenset(got)

    def issue_voter(self, code: object) -> str | Outcome:
        """A new student id for class ``code`` (:func:`classpulse.model.sign_voter`)."""
        live = self._live(code)
        if isinstance(live, Outcome):
            return live
        return sign_voter(live[1][0], live[0])

    def check_voter(self, code: object, voter: object) -> Outcome:
        """OK when ``voter`` is an id class ``code`` issued; FORBIDDEN for one it did not (edited, made up, or from
        another class); NO_CLASS, EXPIRED or UNAVAILABLE as :meth:`info`."""
        live = self._live(code)
        if isinstance(live, Outcome):
            return live
        return Outcome.OK if voter_signed(live[1][0], live[0], voter) else Outcome.FORBIDDEN

    def answers_of(self, code: object, voter: object, qids: Iterable[str]) -> dict[str, int] | Outcome:
        """What ``voter`` answered to those of ``qids`` they answered (a reloaded page shows "Sent" again)."""
        parsed = parse_code(code)
        if parsed is None:
            return Outcome.NO_CLASS
        if not isinstance(voter, str) or not VOTER_PATTERN.fullmatch(voter):
            return Outcome.BAD
        wanted = [q for q in qids if isinstance(q, str) and QID_PATTERN.fullmatch(q)][:64]
        if not wanted:
            return {}
        return self._call(self._mine, parsed, voter, wanted)

    def set_link(self, code: object, token: object, link: object) -> Outcome:
        """The teacher's page sets where the short address (``/?join=CODE``) takes a student: a page name and its
        query (``Playground?seq_len=6&class=7QX2K&classroom=lock``), nothing else."""
        checked = self.check_teacher(code, token)
        if checked is not Outcome.OK:
            return checked
        if not isinstance(link, str) or not LINK_PATTERN.fullmatch(link):
            return Outcome.BAD
        return self._call(self._set_link, parse_code(code), link)

    def link(self, code: object) -> str | Outcome:
        """The students' link the teacher's page set last ("" before any), for a student who joins by the code."""
        live = self._live(code)
        if isinstance(live, Outcome):
            return live
        got = self._call(self._link, live[0])
        if isinstance(got, Outcome):
            return got
        return got if isinstance(got, str) and LINK_PATTERN.fullmatch(got) else ""

    def refused(self, code: object, token: object) -> int | Outcome:
        """How many questions the class refused because it was full (only with the class's teacher token)."""
        checked = self.check_teacher(code, token)
        if checked is not Outcome.OK:
            return checked
        return self._call(self._refused, parse_code(code))

    def tally(self, code: object, token: object) -> list[Tally] | Outcome:
        """Every question of the class with its counts, newest first; only with the class's teacher token."""
        checked = self.check_teacher(code, token)
        if checked is not Outcome.OK:
            return checked
        rows = self._call(self._rows, parse_code(code))
        if isinstance(rows, Outcome):
            return rows
        out = []
        for body, first_seen, shown, choices in rows:
            q = Question.from_json(body)
            counts = [0] * len(q.choices)
            for c in choices:
                if 0 <= c < len(counts):
                    counts[c] += 1
            out.append(Tally(q, tuple(counts), shown, first_seen))
        return sorted(out, key=lambda t: -t.first_seen)


class Unreachable(PulseStore):
    """A store that cannot be reached at all (a setting that names no usable Redis): always UNAVAILABLE."""

    kind = "unreachable"

    def _call(self, fn, *args):
        return Outcome.UNAVAILABLE
