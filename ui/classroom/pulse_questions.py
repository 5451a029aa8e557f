"""The questions a class answers: the prediction gate's (ui.classroom.mode) and check questions with choices (ui.skeleton.lesson).

A question is named by what was asked (page, setting, head, query; or the check question's text and choices), so
every student who sees the same question, on any replica, answers the same one; a student who changed the setting
answers another, which the teacher's list shows apart. In a class a student's answer is sent to the store (a
change of mind replaces it) and kept in the session; the answer appears when the teacher reveals it. When the store
is unavailable the page works as without a class: the student predicts and reveals on their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from classpulse import MAX_ANSWERS, MAX_QUESTIONS, Outcome, Question, question_id
from ui.classroom import pulse_push
from ui.classroom.pulse import CURRENT, PUSHED, membership, store, voter, watch
from ui.text import md_escape, plain_text

CHOOSE_FIRST = "Choose one of the answers first: nothing is chosen for you."
WAITING = "The answer appears when your teacher reveals it to the class; you can change yours until then."


def page_name() -> str:
    """The page this run draws, as its URL names it ("Step by step"), for the teacher's list of questions."""
    ctx = get_script_run_ctx()
    info = ctx.pages_manager.get_pages().get(ctx.page_script_hash) if ctx is not None else None
    return str((info or {}).get("page_name", "")).replace("_", " ") or "Home"


def setting_items(signature: tuple) -> tuple[str, ...]:
    """What a prediction's signature says about the setting, as short items for the teacher's list ("seed 3"): the
    fields of each setting in it (prefixed A / B when there are two, as on Compare), then its other parts."""
    settings = [x for x in signature if dataclasses.is_dataclass(x) and not isinstance(x, type)]
    items, n = [], 0
    for x in signature:
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            prefix = "" if len(settings) == 1 else f"{'AB'[n] if len(settings) == 2 else n + 1} "
            items += [f"{prefix}{f.name} {getattr(x, f.name)}" for f in dataclasses.fields(x)]
            n += 1
        elif isinstance(x, (str, int, float, bool)):
            items.append(str(x))
    return tuple(items)


def sent_caption(label: str | None, outcome: Outcome | None) -> str:
    """What a student reads under a question they answered in class (or have not answered yet)."""
    if label is None:
        return "Your teacher sees how the class answers (anonymously) and then reveals the weights to everyone."
    if outcome is Outcome.OK:
        return f"Sent: you chose **{md_escape(label)}**. {WAITING}"
    if outcome is Outcome.UNAVAILABLE:
        return (
            f"You chose **{md_escape(label)}**; it is kept on this page, but the class tally is unavailable right now, so "
            "it was not counted. Send it again in a moment."
        )
    return f"You chose **{md_escape(label)}**, but it was not counted: {outcome.value if outcome else 'not sent'}."


def class_gate(p, state: dict, ask: Callable, tell: Callable) -> bool | None:
    """The prediction ``p`` (a ui.classroom.mode.Prediction) in a class. None outside a class (or while the store is
    unavailable to a student): the ordinary gate applies. Else whether the answer may show (the teacher revealed
    the question); when it may not, the question is drawn here. ``state`` is the gate's session dict for this
    question; the student's sent answer is kept in it ("sent", "outcome") and becomes the guess once revealed.
    ``ask(p)`` draws the question and its picker (ui.classroom.mode.ask) and returns the pick; ``tell(p, guess)`` draws
    the verdict of a guess (ui.classroom.mode.verdict), which the question's box shows as soon as the reveal is pushed
    (ui/classroom/pulse_push.py), before the page's full run shows what the question hid."""
    m = membership()
    if m is None:
        return None
    question = Question(
        question_id(p.key, p.signature),
        page_name(),
        plain_text(p.question),
        p.choices,
        p.correct,
        setting_items(p.signature),
    )
    s = store()
    if m.teacher:
        st.session_state[CURRENT] = question.qid  # the tally follows the teacher's page
        added = s.add_question(m.code, question)
        shown = s.revealed(m.code, [question.qid])
        if isinstance(shown, Outcome) or question.qid in shown:
            return True  # revealed (or the store is away: the teacher's page is not held back)
        if added is Outcome.FULL:
            st.caption(f"This question is not in the class's list: {full_sentence(m.code)} It is shown here at once.")
            return True
        with st.container(border=True):
            st.markdown(f":material/school: **Your class predicts now:** {p.question}")
            st.caption(
                "Their answers come in at the top of the page; **Reveal to the class** there shows the answer here and "
                "on every student's page."
            )
        return False
    _restore(m.code, question.qid, state, f"guess_{p.key}")
    if state.get("outcome") is Outcome.FULL:
        st.caption(f"{full_sentence(m.code)} This one is not counted: predict and reveal on your own.")
        return None
    shown = s.revealed(m.code, [question.qid])
    if isinstance(shown, Outcome):
        st.caption(f"Class {m.code}: the class tally is unavailable right now, so you predict and reveal on your own.")
        return None
    if question.qid in shown:
        _settle(m.code, question.qid, state)
        return True
    watch(question.qid)
    sent = state.get("sent")
    with st.container(border=True):
        guess = ask(p)
        if st.button("Send my prediction" if sent is None else "Change my prediction", key=f"pulse_send_{p.key}"):
            if guess is None:
                st.warning(CHOOSE_FIRST, icon=":material/touch_app:")
            else:
                state["sent"], state["outcome"] = int(guess), send(m.code, question, int(guess))
                st.rerun()
        st.caption(sent_caption(None if sent is None else p.choices[sent], state.get("outcome")))

        def told() -> None:  # the verdict, drawn in the box by the pushed reveal
            _settle(m.code, question.qid, state)
            if state["guess"] is not None:
                tell(p, state["guess"])

        reveal_slot(m.code, question.qid, told)
    return False


def _settle(code: str, qid: str, state: dict) -> None:
    """Once the question is revealed, once: the guess is what this browser sent last (from any tab)."""
    if state["guess"] is None and not state.get("verdict"):
        state["verdict"] = True
        me = voter()
        mine = store().answers_of(code, me, [qid]) if me else {}
        last = mine.get(qid) if isinstance(mine, dict) else None
        state["guess"] = last if last is not None else state.get("sent")


def reveal_slot(code: str, qid: str, verdict: Callable[[], object]) -> None:
    """In a waiting question's box: the fragment the reveal is pushed to (ui/classroom/pulse_push.py). Drawn in a full run it
    draws nothing and registers; rerun by the push, once the store says the question was revealed, it draws
    ``verdict()`` (the student reads the answer at once), and the page's full run (what the question hid) follows."""
    st.fragment(_slot)(code, qid, verdict)


def _slot(code: str, qid: str, verdict: Callable[[], object]) -> None:
    ctx = get_script_run_ctx()
    if ctx is not None and ctx.fragment_ids_this_run:  # a pushed run (or the watcher's): was it revealed?
        shown = store().revealed(code, [qid])
        if not isinstance(shown, Outcome) and qid in shown:
            verdict()
            pulse_push.verdict_shown()  # the page's full run follows (what the question hid)
            return
    if pulse_push.register(code, qid):
        st.session_state[PUSHED] = True


def send(code: str, q: Question, choice: int) -> Outcome:
    """This browser's answer to ``q`` (replacing any it sent before); UNAVAILABLE while it has no student id."""
    me = voter()
    return store().answer(code, q, me, choice) if me else Outcome.UNAVAILABLE


def full_sentence(code: str) -> str:
    return f"Class {code} is full: it holds {MAX_QUESTIONS} questions (or {MAX_ANSWERS} answers)."


def _restore(code: str, qid: str, state: dict, widget: str) -> None:
    """Once per question and session: what this browser's student sent before (a reload, a second tab) comes back
    as sent, and into the picker (``widget``, not drawn yet this run)."""
    me = voter()
    if "sent" in state or state.get("restored") or me is None:
        return
    mine = store().answers_of(code, me, [qid])
    if isinstance(mine, Outcome):
        return  # asked again on the next run
    state["restored"] = True
    if qid in mine:
        state["sent"], state["outcome"] = mine[qid], Outcome.OK
        st.session_state[widget] = mine[qid]


def choice_question(prompt: str, answer: str, choices: Sequence[str], right: int) -> None:
    """A check question with choices (inside its expander): the student picks one, then sees the answer; in a class
    the pick is counted and the answer waits for the teacher's reveal; the teacher sees the answer at once."""
    name = page_name()
    q = Question(question_id("check", name, prompt, tuple(choices), right), name, prompt, tuple(choices), right)
    m = membership()
    if m is not None and m.teacher:
        store().add_question(m.code, q)
        st.markdown(answer)
        st.caption(
            "Your class's answers to this question are in the panel at the top of the page (pick it in its list)."
        )
        return
    key = f"pulse_check_{q.qid}"
    if m is not None and key not in st.session_state:
        me = None if st.session_state.get(f"{key}_restored") else voter()
        mine = store().answers_of(m.code, me, [q.qid]) if me else None
        if isinstance(mine, dict):
            st.session_state[f"{key}_restored"] = True
            if q.qid in mine:
                st.session_state[key], st.session_state[f"{key}_sent"] = mine[q.qid], Outcome.OK
    picked = st.radio(
        "Your answer",
        range(len(choices)),
        format_func=lambda i: md_escape(choices[i]),  # plain text (a lesson's typed choices too)
        index=None,
        key=key,
        on_change=_send_check if m is not None else None,
        args=(m.code, q, key) if m is not None else None,
    )
    if picked is None:
        return
    if m is not None:
        shown = store().revealed(m.code, [q.qid])
        if not isinstance(shown, Outcome) and q.qid not in shown:
            watch(q.qid)
            st.caption(sent_caption(choices[picked], st.session_state.get(f"{key}_sent")))
            reveal_slot(m.code, q.qid, lambda: check_verdict(picked, right, choices, answer))
            return
    check_verdict(picked, right, choices, answer)


def check_verdict(picked: int, right: int, choices: Sequence[str], answer: str) -> None:
    """A check question's answer, for the choice ``picked``."""
    if picked == right:
        st.success(f"Right: **{md_escape(choices[right])}**.")
    else:
        st.warning(f"Not quite: the answer is **{md_escape(choices[right])}**.")
    st.markdown(answer)


def _send_check(code: str, q: Question, key: str) -> None:
    picked = st.session_state.get(key)
    if picked is not None:
        st.session_state[f"{key}_sent"] = send(code, q, int(picked))
