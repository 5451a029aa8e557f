"""The lesson format (ui/classroom/lesson.py): a lesson round-trips through its file and its link, every bad field
is refused with a message that names the step and the field, and the shipped lesson is the shipped experiments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.classroom import lesson as L
from ui.classroom.presets import load_presets

SHIPPED = Path(__file__).resolve().parents[1] / "presets" / "lessons" / "six_experiments.json"
PLAIN = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="<>"), min_size=1, max_size=30
).filter(lambda t: t.split())
SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "seq_len": st.integers(2, 512).map(str),
        "temperature": st.sampled_from(["0.1", "1.0", "10.0"]),
        "scaled": st.sampled_from(["0", "1"]),
        "mask": st.sampled_from(["none", "causal", "padding", "causal+padding"]),
        "a_seed": st.integers(0, 9999).map(str),
        "wq": st.just("0,1;0,1"),
        "hide": st.just("d_model"),
        "classroom": st.sampled_from(["1", "lock"]),
    },
)
QUESTION = st.one_of(
    st.none(),
    st.lists(PLAIN.map(lambda t: " ".join(t.split())[:24]), min_size=2, max_size=8, unique=True).flatmap(
        lambda cs: st.builds(
            L.StepQuestion, PLAIN.map(lambda t: " ".join(t.split())), st.just(tuple(cs)), st.integers(0, len(cs) - 1)
        )
    ),
)
STEP = st.builds(
    L.Step,
    st.sampled_from(L.PAGE_NAMES),
    SETTINGS.map(lambda d: tuple(d.items())),
    st.one_of(st.just(""), PLAIN.map(lambda t: " ".join(t.split()))),
    QUESTION,
)
LESSON = st.builds(
    L.Lesson, PLAIN.map(lambda t: " ".join(t.split())), st.lists(STEP, min_size=1, max_size=8).map(tuple)
)


@settings(max_examples=60, deadline=None)
@given(LESSON)
def test_a_lesson_round_trips_through_its_file_and_its_link(lesson):
    assert L.read_lesson(lesson.to_json()) == lesson
    assert L.read_lesson(lesson.to_json().encode()) == lesson
    assert L.from_param(lesson.to_param()) == lesson
    link = L.step_link(lesson, 0, "https://example.streamlit.app")
    assert link == "" or len(link) <= L.MAX_LINK


def good() -> dict:
    return {
        "format": L.FORMAT,
        "version": 1,
        "title": "Why scale?",
        "steps": [
            {"page": "Playground", "query": {"seq_len": "6"}},
            {
                "page": "Compare",
                "query": {"a_scaled": "1"},
                "note": "Look at B.",
                "question": {"prompt": "Sharper?", "choices": ["A", "B"], "right": 1},
            },
        ],
    }


BAD = [
    (lambda d: d.update(format="x"), "format must be"),
    (lambda d: d.update(version=2), "version must be 1"),
    (lambda d: d.update(extra=1), "unknown fields ['extra']"),
    (lambda d: d.update(title=""), "title must not be empty"),
    (lambda d: d.update(title="x" * 81), "title is longer than 80"),
    (lambda d: d.update(steps=[]), "steps must be a list of 1 to 30"),
    (lambda d: d.update(steps=d["steps"] * 16), "steps must be a list of 1 to 30"),
    (lambda d: d["steps"][1].update(page="Nope"), "step 2.page 'Nope' is not a page of this app"),
    (lambda d: d["steps"][1].update(page=3), "step 2.page '3' is not a page"),
    (lambda d: d["steps"][0].update(query={"seq_len": "9999"}), "step 1.query: seq_len=9999 is outside 1 to 512."),
    (lambda d: d["steps"][0].update(query={"seq_len": "many"}), "step 1.query: seq_len='many' is not a whole"),
    (
        lambda d: d["steps"][0].update(query={"d_model": "16", "heads": "3"}),
        "heads=3 does not divide d_model=16 (allowed",
    ),
    (lambda d: d["steps"][0].update(query={"class": "7QX2K"}), "step 1.query.class: a lesson holds no class="),
    (lambda d: d["steps"][0].update(query={"teacher": "t"}), "step 1.query.teacher: a lesson holds no teacher="),
    (lambda d: d["steps"][0].update(query={"Bad Name": "1"}), "step 1.query: 'Bad Name' is not a parameter name"),
    (lambda d: d["steps"][0].update(query={"sentence": "x" * 700}), "step 1.query.sentence must be text of at most"),
    (lambda d: d["steps"][0].update(query={"hide": "nothing"}), "step 1.query: hide='nothing' is not a control"),
    (lambda d: d["steps"][0].update(query=[1]), "step 1.query must be an object"),
    (lambda d: d["steps"][0].update(oops=1), "step 1 has unknown fields ['oops']"),
    (lambda d: d["steps"][1].update(note="<b>hi</b>"), "step 2.note holds < or >"),
    (lambda d: d["steps"][1]["question"].update(prompt="<script>x</script>"), "step 2.question.prompt holds < or >"),
    (lambda d: d["steps"][1]["question"].update(choices=["A"]), "step 2.question.choices must be a list of 2 to 8"),
    (lambda d: d["steps"][1]["question"].update(choices=["A", "A"]), "step 2.question.choices has the same choice"),
    (lambda d: d["steps"][1]["question"].update(choices=["A", "x" * 25]), "step 2.question.choices[1] is longer"),
    (lambda d: d["steps"][1]["question"].update(right=2), "step 2.question.right must be the index"),
    (lambda d: d["steps"][1]["question"].update(right=True), "step 2.question.right must be the index"),
    (lambda d: d["steps"][1]["question"].update(why="x"), "step 2.question has unknown fields ['why']"),
]


@pytest.mark.parametrize("breaks,message", BAD, ids=[m[:40] for _, m in BAD])
def test_a_bad_field_is_refused_with_a_message_naming_the_step_and_the_field(breaks, message):
    data = good()
    L.parse_lesson(data)  # the good one parses
    breaks(data)
    with pytest.raises(L.LessonError) as err:
        L.read_lesson(json.dumps(data))
    assert message in str(err.value), str(err.value)


def test_a_pages_own_parameter_named_like_the_lessons_words_is_the_pages():
    data = good()
    data["steps"][0] = {"page": "Train", "query": {"mode": "live", "step": "5", "steps": "200"}}
    assert L.parse_lesson(data).steps[0].params()["step"] == "5", "Train's step= is Train's, not the lesson's"


@pytest.mark.parametrize(
    "raw,message",
    [
        (b"\xff\xfe", "not UTF-8"),
        (b"{", "not valid JSON"),
        (b"[]", "a lesson is a JSON object"),
        (b" " * (L.MAX_FILE + 1), "larger than 256 KB"),
    ],
)
def test_a_file_that_is_no_lesson_says_so(raw, message):
    with pytest.raises(L.LessonError, match=message):
        L.read_lesson(raw)


@pytest.mark.parametrize("value", ["", "%%%", "abc", "x" * (L.MAX_LINK + 1), "eJzLSM3JyQcABiwCFQ"[:-6]])
def test_a_bad_lesson_link_says_so(value):
    with pytest.raises(L.LessonError, match="lesson="):
        L.from_param(value)
    with pytest.raises(L.LessonError, match="steps must be a list"):
        L.from_param(L.Lesson("A lesson without steps", ()).to_param())


def test_the_shipped_lesson_is_the_shipped_experiments_and_each_step_fits_a_link():
    presets, errors = load_presets()
    assert not errors and len(presets) == 6
    shipped = L.read_lesson(SHIPPED.read_bytes())
    assert shipped == L.lesson_from_presets(presets), "regenerate: python -m ui.classroom.lesson"
    assert [s.page for s in shipped.steps] == [Path(p.page).stem for p in presets]
    for i in range(len(shipped.steps)):
        assert L.step_link(shipped, i, "https://example.streamlit.app"), f"step {i + 1} fits a link"
