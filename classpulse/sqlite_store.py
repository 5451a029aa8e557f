"""The embedded store: SQLite in a private temporary folder (or memory), for one server process.

One connection, used under a lock: Streamlit runs every session's script in a thread of its own, and each
operation here takes microseconds, so a lock costs less than a connection per thread. The file is bounded in size
(``PRAGMA max_page_count``): a store that reaches its bound, or a disk that fills, fails the write with SQLite's
"database or disk is full", which the store reports as UNAVAILABLE while reads go on. Ended classes are deleted
when a class is started.
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path

from classpulse.model import MAX_ANSWERS, MAX_CLASSES, MAX_QUESTIONS, MAX_REFUSED, Outcome, Question
from classpulse.store import Meta, PulseStore, Row

MAX_BYTES = 64 * 2**20  # the database file's bound

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (code TEXT PRIMARY KEY, digest TEXT NOT NULL, expires REAL NOT NULL,
    reveals INTEGER NOT NULL DEFAULT 0, answers INTEGER NOT NULL DEFAULT 0, link TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS refused (code TEXT NOT NULL, qid TEXT NOT NULL, PRIMARY KEY (code, qid));
CREATE TABLE IF NOT EXISTS questions (code TEXT NOT NULL, qid TEXT NOT NULL, body TEXT NOT NULL,
    first_seen REAL NOT NULL, revealed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (code, qid));
CREATE TABLE IF NOT EXISTS answers (code TEXT NOT NULL, qid TEXT NOT NULL, voter TEXT NOT NULL,
    choice INTEGER NOT NULL, PRIMARY KEY (code, qid, voter));
"""


class SQLiteStore(PulseStore):
    """Class pulse in SQLite.

    Args:
        path: the database file; None makes one in a new private temporary folder (removed at exit);
            ":memory:" keeps it in memory.
        max_bytes: the file's bound (rounded down to whole pages).
        clock: see :class:`classpulse.store.PulseStore`.
    """

    errors = (sqlite3.Error, OSError)
    kind = "embedded"

    def __init__(self, path: str | Path | None = None, max_bytes: int = MAX_BYTES, clock=None):
        super().__init__(**({"clock": clock} if clock else {}))
        if path is None:
            folder = tempfile.mkdtemp(prefix="aexp-pulse-")  # mode 0700: this process's user only
            atexit.register(shutil.rmtree, folder, True)
            path = Path(folder) / "pulse.sqlite"
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        page = self._db.execute("PRAGMA page_size").fetchone()[0]
        self._db.execute(f"PRAGMA max_page_count = {max(8, int(max_bytes) // page)}")
        self._db.execute("PRAGMA journal_mode = MEMORY")  # one connection: no journal file to fill the disk
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _tx(self, fn, *args):
        """Run ``fn(cursor, *args)`` in one transaction under the lock."""
        with self._lock:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                out = fn(cur, *args)
            except BaseException:
                if self._db.in_transaction:  # SQLite may have rolled back already (a full disk does)
                    cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")
            return out

    def _create(self, code: str, digest: str, now: float, expires: float) -> Outcome | bool:
        def tx(cur):
            ended = [r[0] for r in cur.execute("SELECT code FROM classes WHERE expires <= ?", (now,))]
            for table in ("answers", "questions", "refused", "classes"):
                cur.executemany(f"DELETE FROM {table} WHERE code = ?", [(c,) for c in ended])
            if cur.execute("SELECT 1 FROM classes WHERE code = ?", (code,)).fetchone():
                return False
            if cur.execute("SELECT COUNT(*) FROM classes").fetchone()[0] >= MAX_CLASSES:
                return Outcome.TOO_MANY_CLASSES
            cur.execute("INSERT INTO classes (code, digest, expires) VALUES (?, ?, ?)", (code, digest, expires))
            return True

        return self._tx(tx)

    def _meta(self, code: str) -> Meta | None:
        with self._lock:
            row = self._db.execute("SELECT digest, expires, reveals FROM classes WHERE code = ?", (code,)).fetchone()
        return None if row is None else (row[0], float(row[1]), int(row[2]))

    def _record(self, code: str, question: Question, voter: str | None, choice: int, now: float) -> Outcome:
        def tx(cur):
            row = cur.execute("SELECT expires, answers FROM classes WHERE code = ?", (code,)).fetchone()
            if row is None:
                return Outcome.NO_CLASS
            if row[0] <= now:
                return Outcome.EXPIRED
            key = (code, question.qid)
            if not cur.execute("SELECT 1 FROM questions WHERE code = ? AND qid = ?", key).fetchone():
                if cur.execute("SELECT COUNT(*) FROM questions WHERE code = ?", (code,)).fetchone()[0] >= MAX_QUESTIONS:
                    if cur.execute("SELECT COUNT(*) FROM refused WHERE code = ?", (code,)).fetchone()[0] < MAX_REFUSED:
                        cur.execute("INSERT OR IGNORE INTO refused VALUES (?, ?)", key)
                    return Outcome.FULL
                cur.execute("INSERT INTO questions VALUES (?, ?, ?, ?, 0)", (*key, question.to_json(), now))
            if voter is None:
                return Outcome.OK
            if not cur.execute(
                "SELECT 1 FROM answers WHERE code = ? AND qid = ? AND voter = ?", (*key, voter)
            ).fetchone():
                if row[1] >= MAX_ANSWERS:
                    return Outcome.FULL
                cur.execute("UPDATE classes SET answers = answers + 1 WHERE code = ?", (code,))
            cur.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)", (*key, voter, choice))
            return Outcome.OK

        return self._tx(tx)

    def _reveal(self, code: str, qid: str) -> Outcome:
        def tx(cur):
            if not cur.execute("UPDATE questions SET revealed = 1 WHERE code = ? AND qid = ?", (code, qid)).rowcount:
                return Outcome.BAD
            cur.execute("UPDATE classes SET reveals = reveals + 1 WHERE code = ?", (code,))
            return Outcome.OK

        return self._tx(tx)

    def _revealed(self, code: str, qids: list[str]) -> set[str]:
        marks = ",".join("?" * len(qids))
        sql = f"SELECT qid FROM questions WHERE code = ? AND revealed = 1 AND qid IN ({marks})"
        with self._lock:
            return {r[0] for r in self._db.execute(sql, (code, *qids))}

    def _rows(self, code: str) -> list[Row]:
        with self._lock:
            qs = self._db.execute("SELECT qid, body, first_seen, revealed FROM questions WHERE code = ?", (code,))
            qs = qs.fetchall()
            answers: dict[str, list[int]] = {}
            for qid, choice in self._db.execute("SELECT qid, choice FROM answers WHERE code = ?", (code,)):
                answers.setdefault(qid, []).append(choice)
        return [(body, first, bool(rev), answers.get(qid, [])) for qid, body, first, rev in qs]

    def _mine(self, code: str, voter: str, qids: list[str]) -> dict[str, int]:
        marks = ",".join("?" * len(qids))
        sql = f"SELECT qid, choice FROM answers WHERE code = ? AND voter = ? AND qid IN ({marks})"
        with self._lock:
            return {q: int(c) for q, c in self._db.execute(sql, (code, voter, *qids))}

    def _set_link(self, code: str, link: str) -> Outcome:
        with self._lock:
            self._db.execute("UPDATE classes SET link = ? WHERE code = ?", (link, code))
        return Outcome.OK

    def _link(self, code: str) -> str:
        with self._lock:
            row = self._db.execute("SELECT link FROM classes WHERE code = ?", (code,)).fetchone()
        return row[0] if row else ""

    def _refused(self, code: str) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM refused WHERE code = ?", (code,)).fetchone()[0])
