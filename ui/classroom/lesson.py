"""A lesson: the steps a teacher leads a class through, each a page with its whole setting, and a question.

The format (``FORMAT``, version 1), one JSON object; a file the teacher downloads and opens again, and, compressed,
a link's ``lesson=`` parameter (when the link stays under ``MAX_LINK`` characters)::

    {"format": "attention-explorer-lesson", "version": 1, "title": "Why scale?",
     "steps": [{"page": "Compare",                      # a page's address (its file name without .py)
                "query": {"seq_len": "16", "a_scaled": "1"},  # the page's link parameters, as its address bar
                "note": "What changes when d_model grows?",   # optional: what the teacher says (plain text)
                "question": {"prompt": "Which side is sharper?", "choices": ["A", "B"], "right": 1}}]}

``question`` is optional: without it the step asks the page's own prediction (classroom mode). Every field is
checked (:func:`parse_lesson`): a wrong one is refused with a message that names the step and the field and says
what is allowed, never an exception of another kind. The shared settings are read as a link's are
(ui/session/url.py: a value out of range is refused here, not clamped, so a file says what it does); the lesson
options are a link's (``hide``, ``classroom``, ``view``, ``preset``, ui/session/links.py); a class's code or a
teacher token is never part of a lesson; a page's own parameters (Compare's ``a_``/``b_`` sides, Step by step's
matrices, a page's controls) are names and values of bounded length that the page checks when it opens, as from
any link. Typed text (title, note, prompt, choices) is plain text: angle brackets are refused, and the pages show
it escaped. This module does not import streamlit.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from classpulse.model import MAX_LABEL, MAX_PROMPT
from ui.session.links import parse_link_options
from ui.session.url import URL_NAMES, from_query_params
from ui.skeleton.registry import address

FORMAT, VERSION = "attention-explorer-lesson", 1
MAX_STEPS = 30
MAX_TITLE = 80
MAX_NOTE = 400
MAX_CHOICES = 8
MAX_PARAMS = 80  # parameters of one step's link
MAX_VALUE = 600  # characters of one parameter's value (a typed sentence, a matrix)
MAX_LINK = 2000  # characters of a whole lesson link (presets keep their links under the same)
MAX_FILE = 256 * 1024  # bytes of a lesson file
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
LINK_OPTIONS = ("hide", "classroom", "view", "preset")
NOT_IN_A_LESSON = ("class", "teacher", "join", "lead", "lesson", "lesson_step", "ask")  # a class's, or the lesson's own
MARKUP = re.compile(r"[<>]")
REPLACED = re.compile(r"; (?:using|kept) [^(]*?(?=\s*\(allowed|\.$)")  # "; using 512" in a link's notice
ROOT = Path(__file__).resolve().parents[2]
PAGE_NAMES = ("", *sorted(p.stem for p in (ROOT / "pages").glob("*.py")))  # "" is Home


class LessonError(ValueError):
    """What is wrong with a lesson, in a sentence that names the step and the field."""


@dataclass(frozen=True)
class StepQuestion:
    """A question the teacher typed: the prompt, two to MAX_CHOICES choices, the right one's index."""

    prompt: str
    choices: tuple[str, ...]
    right: int

    def to_dict(self) -> dict:
        return {"prompt": self.prompt, "choices": list(self.choices), "right": self.right}


@dataclass(frozen=True)
class Step:
    page: str  # "" (Home) or a page's address, "Playground"
    query: tuple[tuple[str, str], ...]  # the page's link parameters, in order
    note: str = ""
    question: StepQuestion | None = None  # None: the page's own prediction

    def params(self) -> dict[str, str]:
        return dict(self.query)

    def to_dict(self) -> dict:
        out: dict = {"page": self.page, "query": self.params()}
        if self.note:
            out["note"] = self.note
        if self.question is not None:
            out["question"] = self.question.to_dict()
        return out


@dataclass(frozen=True)
class Lesson:
    title: str
    steps: tuple[Step, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "title": self.title, "steps": [s.to_dict() for s in self.steps]}

    def to_json(self) -> str:
        """The lesson as a file's text (indented, UTF-8 as it is)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"

    def to_param(self) -> str:
        """The lesson as a link's ``lesson=`` value: compact JSON, deflated, URL-safe base64 without padding."""
        raw = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def _text(value: object, where: str, limit: int, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise LessonError(f"{where} must be text")
    text = " ".join(value.split())
    if required and not text:
        raise LessonError(f"{where} must not be empty")
    if len(text) > limit:
        raise LessonError(f"{where} is longer than {limit} characters ({len(text)})")
    if MARKUP.search(text):
        raise LessonError(f"{where} holds < or >: a lesson's text is plain text (no markup)")
    return text


def _question(raw: object, where: str) -> StepQuestion | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise LessonError(f"{where} must be an object with prompt, choices and right (or left out)")
    extra = sorted(set(raw) - {"prompt", "choices", "right"})
    if extra:
        raise LessonError(f"{where} has unknown fields {extra}; allowed: prompt, choices, right")
    prompt = _text(raw.get("prompt"), f"{where}.prompt", MAX_PROMPT)
    choices = raw.get("choices")
    if not isinstance(choices, list) or not 2 <= len(choices) <= MAX_CHOICES:
        raise LessonError(f"{where}.choices must be a list of 2 to {MAX_CHOICES} texts")
    labels = tuple(_text(c, f"{where}.choices[{i}]", MAX_LABEL) for i, c in enumerate(choices))
    if len(set(labels)) != len(labels):
        raise LessonError(f"{where}.choices has the same choice twice")
    right = raw.get("right")
    if not isinstance(right, int) or isinstance(right, bool) or not 0 <= right < len(labels):
        raise LessonError(f"{where}.right must be the index of the right choice, 0 to {len(labels) - 1}")
    return StepQuestion(prompt, labels, right)


def _query(raw: object, where: str) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise LessonError(f"{where} must be an object of link parameters (name: value)")
    if len(raw) > MAX_PARAMS:
        raise LessonError(f"{where} has {len(raw)} parameters; at most {MAX_PARAMS}")
    out = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not PARAM_NAME.fullmatch(name):
            raise LessonError(f"{where}: {str(name)[:40]!r} is not a parameter name (a-z, 0-9 and _)")
        if name in NOT_IN_A_LESSON:
            raise LessonError(f"{where}.{name}: a lesson holds no {name}= (a class's or the lesson's own)")
        if isinstance(value, bool):
            value = "1" if value else "0"
        if isinstance(value, (int, float)):
            value = str(value)
        if not isinstance(value, str) or len(value) > MAX_VALUE:
            raise LessonError(f"{where}.{name} must be text of at most {MAX_VALUE} characters")
        out[name] = value
    shared = {k: v for k, v in out.items() if k in URL_NAMES.values()}
    _, notices = from_query_params(shared)
    if notices:  # a link's notice says what the page would use instead; a lesson's value is refused
        raise LessonError(f"{where}: {' '.join(REPLACED.sub('', n) for n in notices)}")
    _, notices = parse_link_options({k: v for k, v in out.items() if k in LINK_OPTIONS})
    if notices:
        raise LessonError(f"{where}: {' '.join(notices)}")
    return tuple(out.items())


def parse_lesson(data: object) -> Lesson:
    """A lesson from its JSON object; LessonError names what is wrong."""
    if not isinstance(data, dict):
        raise LessonError("a lesson is a JSON object with format, version, title and steps")
    if data.get("format") != FORMAT:
        raise LessonError(f"format must be {FORMAT!r}")
    if data.get("version") != VERSION:
        raise LessonError(f"version must be {VERSION} (this app reads version {VERSION})")
    extra = sorted(set(data) - {"format", "version", "title", "steps"})
    if extra:
        raise LessonError(f"unknown fields {extra}; allowed: format, version, title, steps")
    title = _text(data.get("title"), "title", MAX_TITLE)
    steps = data.get("steps")
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise LessonError(f"steps must be a list of 1 to {MAX_STEPS} steps")
    out = []
    for i, raw in enumerate(steps, start=1):
        where = f"step {i}"
        if not isinstance(raw, dict):
            raise LessonError(f"{where} must be an object with page, query, and optionally note and question")
        extra = sorted(set(raw) - {"page", "query", "note", "question"})
        if extra:
            raise LessonError(f"{where} has unknown fields {extra}; allowed: page, query, note, question")
        page = raw.get("page")
        if not isinstance(page, str) or page.strip("/") not in PAGE_NAMES:
            shown = str(page)[:40]
            raise LessonError(f"{where}.page {shown!r} is not a page of this app; one of: {', '.join(PAGE_NAMES[1:])}")
        out.append(
            Step(
                page.strip("/"),
                _query(raw.get("query"), f"{where}.query"),
                _text(raw.get("note"), f"{where}.note", MAX_NOTE, required=False),
                _question(raw.get("question"), f"{where}.question"),
            )
        )
    return Lesson(title, tuple(out))


def read_lesson(text: str | bytes) -> Lesson:
    """A lesson file's text; LessonError says what is wrong (not JSON, too large, a field)."""
    if isinstance(text, bytes):
        if len(text) > MAX_FILE:
            raise LessonError(f"the file is larger than {MAX_FILE // 1024} KB")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise LessonError("the file is not UTF-8 text") from None
    if len(text) > MAX_FILE:
        raise LessonError(f"the file is larger than {MAX_FILE // 1024} KB")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LessonError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return parse_lesson(data)


def from_param(value: str) -> Lesson:
    """A lesson from a link's ``lesson=`` value; LessonError says what is wrong."""
    if not isinstance(value, str) or len(value) > MAX_LINK or not re.fullmatch(r"[A-Za-z0-9_-]*", value):
        raise LessonError(f"lesson= must be the link's lesson text (letters, digits, - and _, at most {MAX_LINK})")
    try:
        raw = zlib.decompressobj().decompress(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)), MAX_FILE)
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, zlib.error, UnicodeDecodeError):
        raise LessonError("lesson= is not a lesson (cut short, or changed by hand?)") from None
    return parse_lesson(data)


def step_link(lesson: Lesson, index: int, base: str = "") -> str:
    """The link that opens step ``index`` (0-based) of ``lesson`` with the lesson in it ("" when it would be longer
    than MAX_LINK: the lesson then travels as a file)."""
    from urllib.parse import urlencode

    step = lesson.steps[index]
    link = f"{base.rstrip('/')}/{step.page}?" + urlencode(
        {**step.params(), "lesson": lesson.to_param(), "lesson_step": str(index + 1)}
    )
    return link if len(link) <= MAX_LINK else ""


def lesson_from_presets(presets, title: str = "Six experiments: why attention works as it does") -> Lesson:
    """The shipped experiments (ui/classroom/presets.py) as one lesson: a step per preset, its page and link, its
    question and where to look as the note, the page's own prediction as the question."""
    steps = []
    for p in presets:
        params = {k: v for k, v in p.query_params().items() if k != "preset"}
        note = f"{p.name}: {p.question} What to look for: {p.look_for}"
        steps.append(Step(address(p.page), tuple(params.items()), " ".join(note.split())[:MAX_NOTE]))
    return Lesson(title, tuple(steps))


ANSWERS_HEADER = ("step", "page", "question", "choice", "count", "right")


def answers_csv(tallies, steps: dict[str, int]) -> str:
    """The class's answers as CSV: a row per choice of every question, first asked first (``tallies``: the store's
    ``Tally`` list); ``step`` is the lesson's step that asked it (``steps``: question id -> step number), empty for a
    question asked outside the lesson; ``right`` is yes or no, empty where the question has no right answer."""
    import csv
    import io

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(ANSWERS_HEADER)
    for t in sorted(tallies, key=lambda t: t.first_seen):
        q = t.question
        for i, (choice, n) in enumerate(zip(q.choices, t.counts)):
            right = "" if q.right < 0 else "yes" if i == q.right else "no"
            w.writerow((steps.get(q.qid, ""), q.where, _cell(q.prompt), _cell(choice), n, right))
    return out.getvalue()


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one that starts like a formula gets a leading apostrophe."""
    return f"'{text}" if text[:1] in ("=", "+", "-", "@") else text


SHIPPED = ROOT / "presets" / "lessons" / "six_experiments.json"

if __name__ == "__main__":  # python -m ui.classroom.lesson: write the shipped lesson from the shipped experiments
    from ui.classroom.presets import load_presets

    SHIPPED.parent.mkdir(parents=True, exist_ok=True)
    SHIPPED.write_text(lesson_from_presets(load_presets()[0]).to_json(), encoding="utf-8")
    print(f"wrote {SHIPPED.relative_to(ROOT)}")
