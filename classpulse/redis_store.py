"""The shared store: Redis, for replicas behind nginx (students of one class land on different replicas).

Keys (all under ``aexp:pulse:``, each expiring a minute after its class ends, so Redis forgets a class by itself):

    classes              ZSET  code -> ends at (epoch s): bounds the number of live classes
    c:<code>             HASH  digest, expires, reveals, answers, link (the students' join link)
    c:<code>:q           HASH  qid -> "<first seen>|<question JSON>"
    c:<code>:rev         SET   revealed qids
    c:<code>:a:<qid>     HASH  voter -> choice
    c:<code>:refused     SET   qids refused because the class held MAX_QUESTIONS (at most MAX_REFUSED)

Every write is one Lua script (atomic in Redis), so two replicas recording at once keep the bounds. The scripts
declare themselves with ``#!lua`` (Redis 7): a Redis over its maxmemory then refuses them whole, where a script
without it ran once its first command freed memory and wrote on. A connection
or read timeout of ``timeout`` seconds, no retries, and the store's breaker keep a page quick when Redis is gone.
"""

from __future__ import annotations

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from classpulse.model import MAX_ANSWERS, MAX_CLASSES, MAX_QUESTIONS, MAX_REFUSED, Outcome, Question
from classpulse.store import Meta, PulseStore, Row

PREFIX = "aexp:pulse:"
KEEP_AFTER = 60  # seconds a class's keys outlive its end

CREATE = """#!lua
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return -1 end
redis.call('HSET', KEYS[2], 'digest', ARGV[2], 'expires', ARGV[4], 'reveals', 0, 'answers', 0)
redis.call('EXPIREAT', KEYS[2], math.ceil(tonumber(ARGV[4])) + tonumber(ARGV[6]))
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
return 1
"""

RECORD = """#!lua
local exp = redis.call('HGET', KEYS[1], 'expires')
if not exp then return 'NO_CLASS' end
if tonumber(exp) <= tonumber(ARGV[1]) then return 'EXPIRED' end
local keep = math.ceil(tonumber(exp)) + tonumber(ARGV[8])
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[6]) then
    if redis.call('SCARD', KEYS[4]) < tonumber(ARGV[9]) then
      redis.call('SADD', KEYS[4], ARGV[2])
      redis.call('EXPIREAT', KEYS[4], keep)
    end
    return 'FULL'
  end
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
  redis.call('EXPIREAT', KEYS[2], keep)
end
if ARGV[4] == '' then return 'OK' end
if redis.call('HEXISTS', KEYS[3], ARGV[4]) == 0 then
  if tonumber(redis.call('HGET', KEYS[1], 'answers')) >= tonumber(ARGV[7]) then return 'FULL' end
  redis.call('HINCRBY', KEYS[1], 'answers', 1)
end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
redis.call('EXPIREAT', KEYS[3], keep)
return 'OK'
"""

REVEAL = """#!lua
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 'BAD' end
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('EXPIREAT', KEYS[3], math.ceil(tonumber(redis.call('HGET', KEYS[1], 'expires'))) + tonumber(ARGV[2]))
redis.call('HINCRBY', KEYS[1], 'reveals', 1)
return 'OK'
"""

SET_LINK = """#!lua
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'link', ARGV[1])
return 1
"""  # HSET keeps the hash's expiry; a class that ended in between is not made again (NO_CLASS)


class RedisStore(PulseStore):
    """Class pulse in Redis.

    Args:
        url: a Redis URL, e.g. ``redis://127.0.0.1:6379/0``.
        timeout: seconds to connect or to wait for an answer before the store reports UNAVAILABLE.
        retry_after: seconds the store answers UNAVAILABLE without trying after a failure.
        clock: see :class:`classpulse.store.PulseStore`.
    """

    errors = (redis.RedisError, OSError)
    kind = "redis"

    def __init__(self, url: str, timeout: float = 1.0, retry_after: float = 2.0, clock=None):
        super().__init__(retry_after=retry_after, **({"clock": clock} if clock else {}))
        self._r = redis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            decode_responses=True,
        )
        self._create_script = self._r.register_script(CREATE)
        self._record_script = self._r.register_script(RECORD)
        self._reveal_script = self._r.register_script(REVEAL)
        self._set_link_script = self._r.register_script(SET_LINK)

    def close(self) -> None:
        self._r.close()

    @staticmethod
    def _key(code: str, *parts: str) -> str:
        return PREFIX + ":".join(("c", code, *parts))

    def _create(self, code: str, digest: str, now: float, expires: float) -> Outcome | bool:
        keys = [PREFIX + "classes", self._key(code)]
        made = int(self._create_script(keys, [code, digest, repr(now), repr(expires), MAX_CLASSES, KEEP_AFTER]))
        return Outcome.TOO_MANY_CLASSES if made < 0 else made == 1

    def _meta(self, code: str) -> Meta | None:
        got = self._r.hmget(self._key(code), "digest", "expires", "reveals")
        if got[0] is None:
            return None
        return got[0], float(got[1]), int(got[2])

    def _record(self, code: str, question: Question, voter: str | None, choice: int, now: float) -> Outcome:
        keys = [self._key(code), self._key(code, "q"), self._key(code, "a", question.qid), self._key(code, "refused")]
        entry = f"{now!r}|{question.to_json()}"
        args = [repr(now), question.qid, entry, voter or "", choice, MAX_QUESTIONS, MAX_ANSWERS, KEEP_AFTER]
        args.append(MAX_REFUSED)
        return Outcome[self._record_script(keys, args)]

    def _reveal(self, code: str, qid: str) -> Outcome:
        keys = [self._key(code), self._key(code, "q"), self._key(code, "rev")]
        return Outcome[self._reveal_script(keys, [qid, KEEP_AFTER])]

    def _revealed(self, code: str, qids: list[str]) -> set[str]:
        flags = self._r.smismember(self._key(code, "rev"), qids)
        return {q for q, f in zip(qids, flags) if f}

    def _rows(self, code: str) -> list[Row]:
        pipe = self._r.pipeline(transaction=False)
        pipe.hgetall(self._key(code, "q"))
        pipe.smembers(self._key(code, "rev"))
        entries, shown = pipe.execute()
        pipe = self._r.pipeline(transaction=False)
        qids = list(entries)
        for qid in qids:
            pipe.hvals(self._key(code, "a", qid))
        rows = []
        for qid, choices in zip(qids, pipe.execute() if qids else []):
            first, _, body = entries[qid].partition("|")
            rows.append((body, float(first), qid in shown, [int(c) for c in choices]))
        return rows

    def _mine(self, code: str, voter: str, qids: list[str]) -> dict[str, int]:
        pipe = self._r.pipeline(transaction=False)
        for qid in qids:
            pipe.hget(self._key(code, "a", qid), voter)
        return {q: int(c) for q, c in zip(qids, pipe.execute()) if c is not None}

    def _set_link(self, code: str, link: str) -> Outcome:
        done = self._set_link_script([self._key(code)], [link])
        return Outcome.OK if int(done) else Outcome.NO_CLASS

    def _link(self, code: str) -> str:
        return self._r.hget(self._key(code), "link") or ""

    def _refused(self, code: str) -> int:
        return int(self._r.scard(self._key(code, "refused")))
