"""What every page draws for its class, under its title (ui.skeleton.page.Page calls :func:`class_panel`).

- The teacher (a link whose token the store accepts) sees the class's answers as bars, refreshed by a fragment
  every ``TEACHER_EVERY`` seconds, the question the page asks first, and "Reveal to the class". Before the reveal
  the bars do not tell which choice is right (the projector must not give it away).
- A student sees one line saying they are in the class. The reveal is pushed to their page (ui/classroom/pulse_push.py): the
  question's box shows the verdict, then the page reruns whole (the weights appear, no reload). A fragment at the
  end of the page (:func:`watch_reveals`) is the safety net: every ``STUDENT_IDLE`` seconds it asks whether a
  waiting question was revealed, and every ``STUDENT_EVERY`` seconds where the server cannot push.
"""

from __future__ import annotations

import math

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from classpulse import MAX_QUESTIONS, Outcome, Tally
from ui.classroom import pulse_push
from ui.classroom.follow import follow_slot, teacher_switch
from ui.classroom.lesson import answers_csv
from ui.classroom.lesson_panel import answer_steps
from ui.classroom.pulse import CURRENT, MEMBER, NOTICES, PENDING, PUSHED, membership, store, student_id
from ui.classroom.pulse_device import draw_keepsakes, join_card
from ui.classroom.pulse_questions import page_name
from ui.server.runtime import collect_garbage
from ui.session.links import link_options
from ui.text import md_escape

TEACHER_EVERY = 0.5  # seconds between refreshes of the teacher's tally (answers show within about this)
# Seconds between a student page's checks for a reveal while a question on it waits for one and the server cannot
# push the reveal (ui/classroom/pulse_push.py). Checking more often does not bring the reveal sooner to a class: each
# student's page reruns whole to show the answer (about 40 ms of server CPU), and thirty such runs on one process
# take 1-2 s whatever the interval; every 0.5 s, the checks made the reruns start together and cost 1.5x the CPU
# per answer (docs/BENCHMARKS.md, "Class pulse").
STUDENT_EVERY = 2.0
STUDENT_IDLE = 5.0  # while none waits, or while the reveal is pushed (a safety net: a push that never came)
ALL_BARS = 16  # questions with more choices show only the chosen ones (and the right one once revealed)
PICK, _FOLLOWED = "pulse_pick", "pulse_followed"  # the teacher's choice of question; the page question followed
_REVEAL_ERROR = "pulse_reveal_error"
_NET = "pulse_watch_net"  # the watcher saw a pushed reveal once: at its next tick it reruns the page itself
RIGHT_MARK = "✓"  # the revealed right answer, in words as well as colour


def class_panel() -> None:
    """The class's part of a page, under its title: notices, and the teacher's tally or the student's line."""
    m = membership()
    if m is not None and not m.teacher:
        student_id(m.code)  # this browser's id in the class (its notice, if any, shows below)
    for text in st.session_state.pop(NOTICES, None) or []:
        st.warning(f"Class: {text}", icon=":material/warning:")
    st.session_state[PENDING] = set()  # this run's questions add themselves (ui/classroom/pulse_questions.py)
    st.session_state[PUSHED] = False  # and their reveal slots, when the server can push (ui/classroom/pulse_push.py)
    ctx = get_script_run_ctx()
    if ctx is not None:
        pulse_push.forget_session(ctx.session_id)
    if m is None:
        return
    if m.teacher:
        with st.expander(f"Join class {m.code}: the code, the short address, a QR code", expanded=True):
            join_card(m.code)
        if not link_options().projector:  # the projector shows the room the tally, not the teacher's switches
            teacher_switch(m.code)
        _teacher_view(m.code, m.token)
    else:
        st.caption(
            f":material/school: You are in class **{m.code}**: your answers count for the class anonymously (nothing asks for your "
            "name), once per browser, and your teacher reveals the answers to everyone."
        )
        follow_slot(m.code)  # the page follows the teacher's (ui/classroom/follow.py)
    draw_keepsakes()


def watch_reveals() -> None:
    """At the end of a student's full run (ui.skeleton.page.Page): the watcher, which checks for the teacher's reveal every
    STUDENT_EVERY seconds while a question of this page waits for it and the server cannot push it, and every
    STUDENT_IDLE seconds otherwise: while it is pushed (a safety net), and while nothing waits (a check question
    answered in a body-only rerun starts waiting after this run chose the interval)."""
    m = membership()
    if m is None or m.teacher:
        return
    waits = bool(st.session_state.get(PENDING))
    pushed = waits and bool(st.session_state.get(PUSHED))
    fast = waits and not pushed
    st.session_state[_NET] = False
    st.fragment(_watch, run_every=STUDENT_EVERY if fast else STUDENT_IDLE)(m.code, waits, pushed)


def _watch(code: str, waited: bool, pushed: bool) -> None:
    """Has the teacher revealed a question this page is waiting for? Then rerun the page (its questions show the
    answer). Where the reveal is pushed, the watcher leaves it to the push for one tick (a full run started here
    would clear the verdict the push is sending) and reruns the page at the next tick if the push did not come.
    A watcher drawn while nothing waited that finds a question waiting reruns the page too, which draws the
    question's reveal slot and chooses the watcher's interval again."""
    pending = st.session_state.get(PENDING)
    if pending:
        shown = store().revealed(code, sorted(pending))
        revealed = not isinstance(shown, Outcome) and bool(shown)
        if revealed and pushed and not st.session_state.get(_NET):
            st.session_state[_NET] = True  # the push brings it; the next tick is the safety net
        elif revealed or not waited:
            st.rerun()  # the whole page
    collect_garbage()


def ends_in(expires: float, now: float) -> str:
    """' · ends in 3 h 05 min' until ``expires``; "" when the end is not known (the store was away when the page
    first asked)."""
    if not math.isfinite(expires):
        return ""
    minutes = max(0, int((expires - now) // 60))
    return f" · ends in {minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f" · ends in {minutes} min"


def tally_sentence(t: Tally) -> str:
    """What the teacher reads under the bars: the count, and once revealed the share that was right."""
    n = t.total
    count = f"**{n}** {'answer' if n == 1 else 'answers'}"
    if not t.revealed or t.question.right < 0:
        return f"{count} so far; the right answer stays hidden until you reveal it."
    right = f"#{t.question.right + 1} {md_escape(t.question.choices[t.question.right])}"
    if n == 0:
        return f"Revealed: **{right}** was right; nobody had answered."
    return f"{count}. Revealed: **{t.right_count} of {n}** ({100 * t.right_count / n:.0f}%) chose **{right}**, the right answer."


def refused_sentence(n: int) -> str:
    """What the teacher reads when the class turned questions away (it holds MAX_QUESTIONS)."""
    those = "a question" if n == 1 else f"{n} questions"
    return (
        f"The class is full: it holds {MAX_QUESTIONS} questions and turned {those} away. Students who met "
        f"{'it' if n == 1 else 'them'} were told so and reveal on their own; start a new class for a new lesson."
    )


def tally_lines(t: Tally) -> list[tuple[str, int, bool]]:
    """One line per bar: what it says ("**#3 t3** · 4 answers", the right one marked in words once revealed), its
    count, and whether it is the revealed right answer. A long list of keys shows the chosen ones."""
    right = t.question.right if t.revealed else -1
    lines = []
    for i, (choice, n) in enumerate(zip(t.question.choices, t.counts)):
        if len(t.counts) > ALL_BARS and n == 0 and i != right:
            continue
        mark = f"{RIGHT_MARK} " if i == right else ""
        said = f"{mark}**#{i + 1} {md_escape(choice)}** · {n} {'answer' if n == 1 else 'answers'}"
        lines.append((said + (" · the right answer" if i == right else ""), n, i == right))
    return lines


def show_tally(t: Tally) -> None:
    """The bars of ``t``: each a line of text with its count over a bar as long as the count (the longest bar is
    the most chosen answer); large enough for the back row in the projector view (ui.skeleton.page.PROJECTOR_CSS)."""
    lines = tally_lines(t)
    most = max([1, *(n for _, n, _ in lines)])
    with st.container(key="pulse_tally"):
        for i, (said, n, right) in enumerate(lines):
            with st.container(key=f"pulse_bar_{'right' if right else i}"):
                st.markdown(said)
                st.progress(n / most)


def question_names(tallies: list[Tally]) -> dict[str, str]:
    """The teacher's list: "Page: prompt (answers)", and where questions read the same (students who changed the
    setting), what differs between them ("seed 5"), so no two entries read alike."""
    groups: dict[tuple[str, str], list[Tally]] = {}
    for t in tallies:
        groups.setdefault((t.question.where, t.question.prompt), []).append(t)
    names = {}
    for (where, prompt), same in groups.items():
        shared = set.intersection(*(set(t.question.setting) for t in same))
        for n, t in enumerate(same):
            differs = [item for item in t.question.setting if item not in shared]
            if len(same) > 1 and not differs:
                differs = [f"version {len(same) - n}"]  # check questions that differ in their choices alone
            what = f" · {', '.join(differs)}" if len(same) > 1 else ""
            names[t.question.qid] = f"{where}: {prompt}{what} ({t.total} {'answer' if t.total == 1 else 'answers'})"
    return names


@st.fragment(run_every=TEACHER_EVERY)
def _teacher_view(code: str, token: str) -> None:
    """The teacher's tally: every question of the class, the one the page asks now first, refreshed by itself."""
    s = store()
    tallies = s.tally(code, token)
    with st.container(border=True):
        if isinstance(tallies, Outcome):
            if tallies is Outcome.UNAVAILABLE:
                st.warning(
                    f":material/co_present: Class **{code}**: the class tally is unavailable right now (the class store does not answer). "
                    "Your students' pages keep working and keep their answers; the tally comes back with the store.",
                    icon=":material/warning:",
                )
            else:
                st.warning(f":material/co_present: Class **{code}**: {tallies.value}.", icon=":material/warning:")
            collect_garbage()
            return
        answers = sum(t.total for t in tallies)
        st.markdown(
            f"**:material/co_present: Class {code}** · {answers} {'answer' if answers == 1 else 'answers'} to {len(tallies)} "
            f"{'question' if len(tallies) == 1 else 'questions'}{ends_in(_expires(code), s.clock())}"
        )
        refused = s.refused(code, token)
        if isinstance(refused, int) and refused:
            st.warning(refused_sentence(refused), icon=":material/block:")
        if not tallies:
            st.caption("No question yet: your students' predictions appear here as they send them.")
        else:
            _show_tally(code, token, tallies)
            st.download_button(
                "Download the class's answers (CSV)",
                answers_csv(tallies, answer_steps()),
                file_name=f"class-{code}-answers.csv",
                mime="text/csv",
                icon=":material/download:",
                key="pulse_csv",
                help="A row per choice of every question: the lesson's step that asked it, the page, the question, "
                "the choice, how many chose it, and whether it is the right one. No names: there are none.",
            )
        error = st.session_state.pop(_REVEAL_ERROR, None)
        if error:
            st.warning(f"Not revealed: {error}.", icon=":material/warning:")
    collect_garbage()


def _expires(code: str) -> float:
    kept = st.session_state.get(MEMBER)
    return kept[1].expires if kept and kept[1].code == code else math.inf


def _show_tally(code: str, token: str, tallies: list[Tally]) -> None:
    by_id = {t.question.qid: t for t in tallies}
    current = st.session_state.get(CURRENT)
    if current in by_id and st.session_state.get(_FOLLOWED) != current:  # the page asks a new question: follow it
        st.session_state[PICK], st.session_state[_FOLLOWED] = current, current
    if st.session_state.get(PICK) not in by_id:
        st.session_state[PICK] = current if current in by_id else _page_question(tallies)
    if len(tallies) > 1:
        names, options, pick = question_names(tallies), list(by_id), st.session_state[PICK]
        widget = f"{PICK}_{pick}"  # a new widget when the page picks: its index is what shows, never a stale one
        st.selectbox(
            "Question",
            options,
            index=options.index(pick),
            key=widget,
            format_func=names.get,
            on_change=_picked,
            args=(widget,),
        )
    t = by_id[st.session_state[PICK]]
    st.markdown(f"**{md_escape(t.question.prompt)}** ({md_escape(t.question.where)})")
    show_tally(t)
    st.markdown(tally_sentence(t))
    if not t.revealed:
        st.button("Reveal to the class", key="pulse_reveal", on_click=_reveal, args=(code, token, t.question.qid))


def _picked(widget: str) -> None:
    st.session_state[PICK] = st.session_state[widget]


def _page_question(tallies: list[Tally]) -> str:
    """Before this page's run has said which question it asks (its first run is still drawing): the newest
    prediction asked on this page (a prediction names its setting; a check question does not), else the newest."""
    here = page_name()
    return next(
        (t.question.qid for t in tallies if t.question.where == here and t.question.setting), tallies[0].question.qid
    )


def _reveal(code: str, token: str, qid: str) -> None:
    got = store().reveal(code, token, qid)
    if got is not Outcome.OK:
        st.session_state[_REVEAL_ERROR] = got.value
    pulse_push.poke()  # this process's waiting students hear of it now, the other replicas' within their POLL
    st.rerun()  # the whole page: the teacher's own question shows its weights too
