"""The class pulse's store (classpulse/): the same contract for the embedded SQLite store and Redis on loopback.

Answers and tallies, a change of mind, the reveal, expiry, the bounds, hostile codes and hostile teacher-token
guesses, many threads at once, a full disk, and Redis going away mid-class and coming back.
"""

from __future__ import annotations

import sys
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from classpulse import ALPHABET, CODE_LENGTH, Outcome, Question, SQLiteStore, new_voter, open_store, question_id
from classpulse.model import MAX_LABEL, new_token, parse_code, token_digest, token_matches
from harness.redis_server import redis_binary, redis_server

needs_redis = pytest.mark.skipif(redis_binary() is None, reason="redis-server is not installed (scripts/test.sh)")


class Clock:
    """A clock the test moves forward (epoch seconds)."""

    def __init__(self):
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis_url():
    if redis_binary() is None:
        pytest.skip("redis-server is not installed (scripts/test.sh installs it)")
    with redis_server() as server:
        yield server.url


@pytest.fixture(params=["embedded", "redis"])
def make_store(request):
    """A factory of fresh stores of one kind (each call: a new store with its own clock)."""
    made = []

    def make(clock=None):
        if request.param == "embedded":
            store = SQLiteStore(":memory:", clock=clock)
        else:
            from classpulse.redis_store import RedisStore

            store = RedisStore(request.getfixturevalue("redis_url"), clock=clock)
        made.append(store)
        return store

    yield make
    for s in made:
        s.close()


def q(n_choices: int = 3, right: int = 1, *identity) -> Question:
    return Question(
        question_id("test", n_choices, right, *identity),
        "Playground",
        "Which key?",
        tuple(f"t{i + 1}" for i in range(n_choices)),
        right,
    )


def counts(store, started, question: Question) -> tuple[int, ...]:
    tallies = store.tally(started.code, started.token)
    assert not isinstance(tallies, Outcome), tallies
    return next(t.counts for t in tallies if t.question.qid == question.qid)


def test_students_answer_and_a_change_of_mind_replaces_the_answer(make_store):
    store = make_store()
    c = store.start_class()
    assert len(c.code) == CODE_LENGTH and set(c.code) <= set(ALPHABET)
    question = q()
    voters = [new_voter() for _ in range(5)]
    for v, choice in zip(voters, [0, 1, 1, 2, 1]):
        assert store.answer(c.code, question, v, choice) is Outcome.OK
    assert counts(store, c, question) == (1, 3, 1)
    assert store.answer(c.code, question, voters[0], 2) is Outcome.OK  # the first student changes their mind
    assert counts(store, c, question) == (0, 3, 2)
    (t,) = store.tally(c.code, c.token)
    assert t.total == 5 and t.right_count == 3 and not t.revealed
    assert t.question == question


def test_questions_are_listed_newest_first_and_a_teacher_question_before_any_answer(make_store):
    clock = Clock()
    store = make_store(clock)
    c = store.start_class()
    first, second = q(3, 0, "a"), q(4, 2, "b")
    assert store.answer(c.code, first, new_voter(), 0) is Outcome.OK
    clock.now += 1
    assert store.add_question(c.code, second) is Outcome.OK
    tallies = store.tally(c.code, c.token)
    assert [t.question.qid for t in tallies] == [second.qid, first.qid]
    assert tallies[0].counts == (0, 0, 0, 0)


def test_reveal_needs_the_token_and_reaches_everyone(make_store):
    store = make_store()
    c = store.start_class()
    question = q()
    store.answer(c.code, question, new_voter(), 1)
    assert store.info(c.code).reveals == 0
    assert store.reveal(c.code, "x" * len(c.token), question.qid) is Outcome.FORBIDDEN
    assert store.revealed(c.code, [question.qid]) == frozenset()
    assert store.reveal(c.code, c.token, "0" * 16) is Outcome.BAD, "a question the class never saw"
    assert store.reveal(c.code, c.token, question.qid) is Outcome.OK
    assert store.revealed(c.code, [question.qid, "f" * 16]) == {question.qid}
    assert store.info(c.code).reveals == 1
    assert store.tally(c.code, c.token)[0].revealed


def test_a_class_expires(make_store):
    clock = Clock()
    store = make_store(clock)
    c = store.start_class()
    assert c.expires - clock.now == pytest.approx(4 * 3600)
    store.answer(c.code, q(), new_voter(), 0)
    clock.now = c.expires + 1
    assert store.info(c.code) is Outcome.EXPIRED
    assert store.answer(c.code, q(), new_voter(), 0) is Outcome.EXPIRED
    assert store.tally(c.code, c.token) is Outcome.EXPIRED
    assert store.reveal(c.code, c.token, q().qid) is Outcome.EXPIRED
    assert store.check_teacher(c.code, c.token) is Outcome.EXPIRED


HOSTILE_CODES = ["", " ", "7QX2", "7QX2KK", "0O1IL", "AAAA\x00", "'; DROP TABLE classes; --", "*", "aexp:pulse:*",
                 "ÄÖÜßé", "\ud800\ud800\ud800\ud800\ud800", "7" * 1_000_000, None, 12345, b"ABCDE", ["ABCDE"]]  # fmt: skip


@pytest.mark.parametrize("code", HOSTILE_CODES, ids=range(len(HOSTILE_CODES)))
def test_hostile_codes_give_no_class_and_never_raise(make_store, code):
    store = make_store()
    store.start_class()
    assert store.info(code) is Outcome.NO_CLASS
    assert store.answer(code, q(), new_voter(), 0) is Outcome.NO_CLASS
    assert store.check_teacher(code, "anything") is Outcome.NO_CLASS
    assert store.tally(code, "anything") is Outcome.NO_CLASS
    assert store.revealed(code, [q().qid]) is Outcome.NO_CLASS


def test_an_unknown_code_of_the_right_shape_is_no_class(make_store):
    store = make_store()
    c = store.start_class()
    other = next(a + c.code[1:] for a in ALPHABET if a != c.code[0])
    assert store.info(other) is Outcome.NO_CLASS
    assert store.info(c.code.lower()).code == c.code, "a code typed in lower case is the same class"


def hostile_tokens(token: str) -> list:
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    return [flipped, token[:-1], token[:1], token + "A", "", " " * len(token), token.upper() if token.upper() != token
            else token.lower(), "A" * len(token), token_digest(token), "é" * len(token), "\ud800" * 8, "🙂" * 50,
            "x" * 1_000_000, None, 0, b"bytes", [token]]  # fmt: skip


def test_hostile_teacher_token_guesses_are_refused(make_store):
    store = make_store()
    c, other = store.start_class(), store.start_class()
    question = q()
    store.answer(c.code, question, new_voter(), 1)
    for guess in [*hostile_tokens(c.token), other.token]:
        assert store.check_teacher(c.code, guess) is Outcome.FORBIDDEN, (
            guess if not isinstance(guess, str) else guess[:40]
        )
        assert store.tally(c.code, guess) is Outcome.FORBIDDEN
        assert store.reveal(c.code, guess, question.qid) is Outcome.FORBIDDEN
    assert store.revealed(c.code, [question.qid]) == frozenset(), "no guess revealed anything"
    assert store.check_teacher(c.code, c.token) is Outcome.OK
    assert store.check_teacher(other.code, c.token) is Outcome.FORBIDDEN, "a teacher's token opens no other class"


@given(guess=st.text(max_size=80))
def test_only_the_token_itself_matches_its_digest(guess):
    token = "i4dPykXKt7Mxcb6ekeHP2_hC"
    assert token_matches(guess, token_digest(token)) is (guess == token)


def test_tokens_are_random_and_independent_of_the_code():
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200 and all(len(t) == 24 for t in tokens)
    store = SQLiteStore(":memory:")
    started = [store.start_class() for _ in range(50)]
    assert not any(s.code in s.token or s.code.lower() in s.token.lower() for s in started)
    codes = {s.code for s in started}
    assert len(codes) == 50 and all(parse_code(s) == s for s in codes)


def test_what_a_student_may_send_is_checked(make_store):
    store = make_store()
    c = store.start_class()
    good = q()
    for voter, choice in [("me", 0), ("Z" * 16, 0), (None, 0), (new_voter(), 3), (new_voter(), -1), (new_voter(), True),
                          (new_voter(), "1"), (new_voter(), 1.0)]:  # fmt: skip
        assert store.answer(c.code, good, voter, choice) is Outcome.BAD, (voter, choice)
    assert store.answer(c.code, "not a question", new_voter(), 0) is Outcome.BAD
    assert store.tally(c.code, c.token) == []


def test_question_fields_are_bounded():
    long = Question(question_id("x"), "P" * 500, "Q" * 5000, ("é" * 100,) * 512, 511)
    assert len(long.prompt) == 200 and len(long.where) == 40 and all(len(c) == MAX_LABEL for c in long.choices)
    assert Question.from_json(long.to_json()) == long
    for bad in [dict(qid="zz"), dict(choices=()), dict(choices=("a",) * 513), dict(right=3), dict(right=-2)]:
        fields = dict(qid=question_id("y"), where="P", prompt="?", choices=("a", "b", "c"), right=1) | bad
        with pytest.raises(ValueError):
            Question(**fields)


def test_a_class_holds_a_bounded_number_of_answers_and_questions(make_store, monkeypatch):
    store = make_store()
    module = sys.modules[type(store).__module__]
    monkeypatch.setattr(module, "MAX_ANSWERS", 4)
    monkeypatch.setattr(module, "MAX_QUESTIONS", 2)
    c = store.start_class()
    question = q()
    voters = [new_voter() for _ in range(5)]
    assert [store.answer(c.code, question, v, 0) for v in voters] == [Outcome.OK] * 4 + [Outcome.FULL]
    assert store.answer(c.code, question, voters[0], 2) is Outcome.OK, "a change of mind is no new answer"
    assert counts(store, c, question) == (3, 0, 1)
    assert store.add_question(c.code, q(4, 0)) is Outcome.OK
    assert store.add_question(c.code, q(5, 0)) is Outcome.FULL
    assert len(store.tally(c.code, c.token)) == 2
    assert store.answer(c.code, q(6, 0), voters[0], 0) is Outcome.FULL
    assert store.answer(c.code, q(6, 0), voters[1], 0) is Outcome.FULL  # the same question, refused again
    assert store.refused(c.code, c.token) == 2, "two different questions were refused"
    assert store.refused(c.code, "x" * 24) is Outcome.FORBIDDEN, "only the teacher reads it"


def test_a_student_id_is_the_classs_own_and_brings_back_what_the_student_sent(make_store):
    store = make_store()
    a, b = store.start_class(), store.start_class()
    alice, bob = store.issue_voter(a.code), store.issue_voter(a.code)
    assert alice != bob and len(alice) == 32 and store.check_voter(a.code, alice) is Outcome.OK
    assert store.check_voter(b.code, alice) is Outcome.FORBIDDEN, "an id of another class is not this class's"
    forged = alice[:16] + ("0" if alice[16] != "0" else "1") + alice[17:]
    for bad in (forged, new_voter(), new_voter() * 2, "", None, "<script>", alice.upper()):
        assert store.check_voter(a.code, bad) is Outcome.FORBIDDEN, bad
    assert store.check_voter("ZZZZZ", alice) is Outcome.NO_CLASS
    first, second = q(3, 1, "first"), q(3, 1, "second")
    assert store.answers_of(a.code, alice, [first.qid, second.qid]) == {}
    assert store.answer(a.code, first, alice, 2) is Outcome.OK
    assert store.answer(a.code, first, alice, 0) is Outcome.OK  # a second tab of the same browser: replaced
    assert store.answer(a.code, first, bob, 1) is Outcome.OK
    assert store.answers_of(a.code, alice, [first.qid, second.qid]) == {first.qid: 0}
    assert counts(store, a, first) == (1, 1, 0), "one browser, one answer"
    assert store.answers_of(a.code, "not hex", [first.qid]) is Outcome.BAD
    assert store.answers_of("bad", alice, [first.qid]) is Outcome.NO_CLASS


def test_the_join_link_is_the_teachers_to_set_and_only_a_page_and_its_query(make_store):
    store = make_store()
    c = store.start_class()
    assert store.link(c.code) == ""
    link = f"Playground?seq_len=6&class={c.code}&classroom=lock"
    assert store.set_link(c.code, "y" * 24, link) is Outcome.FORBIDDEN
    assert store.set_link(c.code, c.token, link) is Outcome.OK and store.link(c.code) == link
    for bad in ("https://evil.example/", "//evil.example", "javascript:alert(1)", "Play ground", "x" * 3000, None):
        assert store.set_link(c.code, c.token, bad) is Outcome.BAD, bad
    assert store.link(c.code) == link and store.link("ZZZZZ") is Outcome.NO_CLASS


def test_the_embedded_store_holds_a_bounded_number_of_classes(monkeypatch):
    monkeypatch.setattr("classpulse.sqlite_store.MAX_CLASSES", 3)
    clock = Clock()
    store = SQLiteStore(":memory:", clock=clock)
    first = [store.start_class() for _ in range(3)]
    assert store.start_class() is Outcome.TOO_MANY_CLASSES
    clock.now = first[0].expires + 1  # ended classes are deleted when the next one starts
    assert store.start_class().code


def test_threads_answering_at_once_are_all_counted(tmp_path):
    store = SQLiteStore(tmp_path / "pulse.sqlite")
    c = store.start_class()
    question = q(4, 0)
    results = []

    def student(i):
        v = new_voter()
        for choice in (i % 4, (i + 1) % 4, i % 4):  # two changes of mind each
            results.append(store.answer(c.code, question, v, choice))

    threads = [threading.Thread(target=student, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [Outcome.OK] * 120
    assert counts(store, c, question) == (10, 10, 10, 10)


def test_a_full_disk_makes_writes_unavailable_and_reads_go_on(tmp_path):
    store = SQLiteStore(tmp_path / "pulse.sqlite", max_bytes=64 * 1024)  # SQLite's "database or disk is full"
    c = store.start_class()
    question = q(3, 1)
    store.answer(c.code, question, new_voter(), 1)
    other = q(3, 1, "other")
    outcomes = [store.answer(c.code, other, new_voter(), 0) for _ in range(2000)]
    assert Outcome.UNAVAILABLE in outcomes, "the bound was never reached"
    assert set(outcomes) == {Outcome.OK, Outcome.UNAVAILABLE}
    assert store.info(c.code).code == c.code, "the class is still there"
    assert counts(store, c, question) == (0, 1, 0), "the teacher's tally still reads"


def test_open_store_follows_the_environment(redis_url):
    assert open_store({}).kind == "embedded"
    assert open_store({"AEXP_REDIS_URL": "  "}).kind == "embedded"
    store = open_store({"AEXP_REDIS_URL": redis_url})
    assert store.kind == "redis" and isinstance(store.start_class().code, str)


def test_redis_that_is_not_there_is_unavailable_and_not_asked_again_at_once(monkeypatch):
    from classpulse.redis_store import RedisStore
    from harness.server import free_port

    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", retry_after=30)
    assert store.start_class() is Outcome.UNAVAILABLE
    asked = []
    monkeypatch.setattr(store, "_meta", lambda code: asked.append(code))
    monkeypatch.setattr(store, "_record", lambda *a: asked.append(a))
    assert store.info("ABCDE") is Outcome.UNAVAILABLE
    assert store.answer("ABCDE", q(), new_voter(), 0) is Outcome.UNAVAILABLE
    assert asked == [], "within retry_after the breaker answers without asking Redis (no connection timeout per run)"


@needs_redis
def test_redis_stopped_mid_class_degrades_then_comes_back():
    from classpulse.redis_store import RedisStore

    with redis_server() as server:
        store = RedisStore(server.url, retry_after=0)
        c = store.start_class()
        question = q()
        alice, bob = new_voter(), new_voter()
        assert store.answer(c.code, question, alice, 1) is Outcome.OK
        server.stop()
        assert store.answer(c.code, question, bob, 1) is Outcome.UNAVAILABLE
        assert store.tally(c.code, c.token) is Outcome.UNAVAILABLE
        assert store.info(c.code) is Outcome.UNAVAILABLE
        assert store.revealed(c.code, [question.qid]) is Outcome.UNAVAILABLE
        assert store.start_class() is Outcome.UNAVAILABLE
        server.start()  # same port, its append-only file: the class is still there
        assert store.answer(c.code, question, bob, 2) is Outcome.OK
        assert counts(store, c, question) == (0, 1, 1)


def test_a_full_redis_refuses_new_answers_and_still_reads(redis_url):
    import redis as redis_client

    from classpulse.redis_store import RedisStore

    store = RedisStore(redis_url, retry_after=0)
    c = store.start_class()
    question = q()
    assert store.answer(c.code, question, new_voter(), 1) is Outcome.OK
    admin = redis_client.Redis.from_url(redis_url)
    limit = admin.config_get("maxmemory")["maxmemory"]
    admin.config_set("maxmemory", 1)  # used memory is above it now: with noeviction every write is refused (OOM)
    try:
        assert store.answer(c.code, question, new_voter(), 2) is Outcome.UNAVAILABLE
        assert store.start_class() is Outcome.UNAVAILABLE
        assert counts(store, c, question) == (0, 1, 0), "what was counted is kept and still reads"
    finally:
        admin.config_set("maxmemory", limit)
    assert store.answer(c.code, question, new_voter(), 2) is Outcome.OK
