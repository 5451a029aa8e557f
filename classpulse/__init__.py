"""Class pulse: what a class predicted, kept outside any one student's session, and the teacher's reveal.

No Streamlit here (the pages use it through ui/classroom/pulse.py). One process-wide store, chosen by one setting:

- ``AEXP_REDIS_URL`` unset: the embedded store (:class:`SQLiteStore`, SQLite in a private temporary folder),
  which serves one server process (a laptop, Streamlit Community Cloud).
- ``AEXP_REDIS_URL=redis://host:6379/0``: :class:`RedisStore`, shared by every replica behind nginx.

Every method returns a value or an :class:`Outcome` and never raises: a store that went away gives
``Outcome.UNAVAILABLE`` (see :mod:`classpulse.store`).
"""

from __future__ import annotations

import logging
import os

from classpulse.model import (
    ALPHABET,
    CLASS_HOURS,
    CODE_LENGTH,
    MAX_ANSWERS,
    MAX_QUESTIONS,
    TOKEN_PATTERN,
    ClassInfo,
    Outcome,
    Question,
    Started,
    Tally,
    new_voter,
    parse_code,
    question_id,
    token_matches,
)
from classpulse.sqlite_store import SQLiteStore
from classpulse.store import PulseStore, Unreachable

ENV = "AEXP_REDIS_URL"

__all__ = [
    "ALPHABET",
    "CLASS_HOURS",
    "CODE_LENGTH",
    "ENV",
    "MAX_ANSWERS",
    "MAX_QUESTIONS",
    "TOKEN_PATTERN",
    "ClassInfo",
    "Outcome",
    "PulseStore",
    "Question",
    "SQLiteStore",
    "Started",
    "Tally",
    "new_voter",
    "open_store",
    "parse_code",
    "question_id",
    "token_matches",
]


def open_store(environ: dict | None = None) -> PulseStore:
    """The store the environment asks for: Redis when ``AEXP_REDIS_URL`` holds a URL, else the embedded one.

    A URL that Redis's client cannot parse gives a store that is always UNAVAILABLE (the teacher's view says the
    tally is unavailable; it never falls back to a store of its own, which would split a class across replicas). A
    Redis that is down is not an error here either: the store reports UNAVAILABLE until it is back.
    """
    url = (environ if environ is not None else os.environ).get(ENV, "").strip()
    if not url:
        return SQLiteStore()
    from classpulse.redis_store import RedisStore  # redis is imported only when it is used

    try:
        return RedisStore(url)
    except ValueError as exc:
        logging.getLogger(__name__).error("%s is not a Redis URL (%s): the class tally is unavailable", ENV, exc)
        return Unreachable()
