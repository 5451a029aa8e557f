"""The class follows the teacher: when the teacher's page changes page or setting, every student's page goes there.

The teacher's page already tells the class store where it is after every full run: the students' link of the
page on screen (``ui.classroom.pulse._keep_join_link``, a page name and its query: ``Playground?seq_len=6&...``),
which is also where the short address takes a student. That link leads the class. When the teacher lets the
students explore freely (:func:`teacher_switch`), the stored link carries the mark ``lead=free``
(``classpulse.model.lead_link``) and no page is moved.

A student's page holds a small fragment under its title (:func:`follow_slot`), drawn in every full run. It asks
the store for the class's link and remembers the last one it acted on. A session's first look only remembers it: a
tab that reloads or reconnects (its replica restarted) keeps the setting its address carries, and a student who
joins late by the short address lands on the teacher's page already. After that, a link it has not seen, that is
not marked free, and that is not where the page already is, is *adopted*: the session's settings are dropped (the what-if, the
Compare sides, Step by step's matrices, every kept page control, the link's lesson options) and the page switches
to the teacher's page with the teacher's query, so the page's first run reads its setting from the link as a new
session would, with what the teacher hides or locks. What stays: the student's id in the class, and so every
answer they sent (the store keeps them; a page restores them), their display choices (colour stretch, live maps).

Between full runs the slot is registered with ui/classroom/pulse_push.py, whose listener asks the store for the
link of every class with followers every ``POLL`` seconds and reruns the slot of every follower whose remembered
link differs (a replica behind nginx sees a teacher on the other replica through Redis). A student may choose to
explore alone: the slot is not drawn and nothing moves their page, until they tap "Follow my teacher", which
adopts the teacher's page at once. Only the teacher's token sets the link (``PulseStore.set_link``): a student
cannot move the class. The teacher's projector view (``view=projector``) neither leads nor follows.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from classpulse import Outcome
from classpulse.model import split_lead
from ui.classroom import pulse_push
from ui.classroom.pulse import FREE_KEY, store
from ui.session.links import KEY as LINK_KEY
from ui.session.links import LinkOptions
from ui.session.state import CLASSROOM_KEY, LIVE_KEY, STRETCH_KEY

SEEN = "follow_seen"  # the class's link this session last acted on
ALONE = "follow_alone"  # the student chose to explore alone
MOVED = "follow_moved"  # the page this session was moved to by the teacher (for the line under the title)
NOT_A_PLACE = frozenset({"teacher", "view", "join"})  # parameters that say nothing about what is on screen
KEPT_THROUGH = frozenset({f"{STRETCH_KEY}_kept", f"{LIVE_KEY}_kept", f"{CLASSROOM_KEY}_kept"})  # the student's own
SETTING_STATE = ("whatif", "sbs_", "_state_page", LINK_KEY)  # prefixes of the session's setting (dropped to adopt)


def place(page: str, params: dict[str, str]) -> tuple[str, frozenset]:
    """What a page shows, as comparable: its name and its query without the parameters that change nothing."""
    return page.strip("/"), frozenset((k, v) for k, v in params.items() if k not in NOT_A_PLACE)


def parse_link(link: str) -> tuple[str, dict[str, str], bool]:
    """A stored link's page name, query parameters (without the free mark) and whether the teacher left the class
    free to explore."""
    bare, free = split_lead(link)
    page, _, query = bare.partition("?")
    return page, dict(parse_qsl(query, keep_blank_values=True)), free


def here() -> tuple[str, frozenset]:
    """Where this session's page is: its URL name and the query of this run."""
    ctx = get_script_run_ctx()
    info = ctx.pages_manager.get_pages().get(ctx.page_script_hash) if ctx is not None else None
    return place((info or {}).get("url_pathname", ""), st.query_params.to_dict())


def _script(page: str) -> str | None:
    """The script of the page whose URL name is ``page`` ("" is Home), or None when the app has no such page."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    pages = ctx.pages_manager.get_pages().values()
    found = [p for p in pages if p.get("url_pathname", "") == page]
    if not found and page == "":
        found = [p for p in pages if Path(p["script_path"]).name == Path(ctx.main_script_path).name]
    return found[0]["script_path"] if found else None


def drop_setting() -> None:
    """Forget the session's setting (the what-if, the Compare sides, Step by step's matrices, every kept page
    control, the link's lesson options), so that the next page run reads it from its link as a new session would;
    the student's id in a class, their answers and their display choices stay."""
    for key in list(st.session_state.to_dict()):  # one walk of the session state (keys() makes two)
        if key.startswith(SETTING_STATE) or (key.endswith("_kept") and key not in KEPT_THROUGH):
            del st.session_state[key]
            if key.endswith("_kept"):
                st.session_state.pop(key[: -len("_kept")], None)  # the widget, seeded again from the link


def open_place(page: str, params: dict[str, str], options: LinkOptions | None = None) -> bool:
    """Open ``page`` (a URL name, "" is Home) with the link ``params`` as a new session would, keeping the student
    (:func:`drop_setting`); stops this run. ``options``: the lesson options to keep instead of reading the link's
    (a teacher's, whose token the link never carries). False when the app has no such page (nothing changes)."""
    script = _script(page)
    if script is None:  # a page this app does not have (a link from another version): stay
        return False
    drop_setting()
    if options is not None:
        st.session_state[LINK_KEY], st.session_state[f"{LINK_KEY}_notices"] = options, []
    st.switch_page(script, query_params=params)
    return True  # not reached: switch_page stops the run


def adopt(page: str, params: dict[str, str]) -> None:
    """Go where the teacher is, as a new session opening the students' link would, keeping the student."""
    if _script(page) is not None:
        st.session_state[MOVED] = page or "Home"
        open_place(page, params)


def follow_slot(code: str) -> None:
    """A student's page, under its title: follow the teacher's page, or say that the student explores alone."""
    if st.session_state.get(ALONE):
        st.caption(":material/explore: You explore alone: your teacher's changes do not move your page.")
        st.button("Follow my teacher", key="follow_rejoin", icon=":material/group:", on_click=_rejoin)
        return
    st.fragment(_follow)(code)
    st.button(
        "Explore alone",
        key="follow_leave",
        icon=":material/explore:",
        on_click=_leave,
        help="Your teacher's changes stop moving your page; tap Follow my teacher to come back to their page.",
    )


def _follow(code: str) -> None:
    lead = store().link(code)
    seen = st.session_state.get(SEEN)  # None: this session's first look (a new tab, a reload, a reconnect)
    if isinstance(lead, str) and lead and lead != seen:
        st.session_state[SEEN] = lead
        page, params, free = parse_link(lead)
        if seen is not None and not free and place(page, params) != here():
            adopt(page, params)  # stops this run: the page switches
    if isinstance(lead, Outcome) or not lead:
        lead = st.session_state.get(SEEN, "")
    free = bool(lead) and parse_link(lead)[2]
    if free:
        st.caption(":material/explore: Your teacher lets the class explore freely.")
    elif lead:
        moved = st.session_state.pop(MOVED, None)
        st.caption(
            f":material/group: Your page follows your teacher's{f' (now {moved})' if moved else ''}: "
            "a change on their screen shows on yours."
        )
    pulse_push.follow(code, lead)


def _leave() -> None:
    st.session_state[ALONE] = True


def _rejoin() -> None:
    st.session_state[ALONE] = False
    st.session_state[SEEN] = ""  # acted on nothing yet: the next run adopts the teacher's page at once


def teacher_free(code: str) -> bool:
    """Whether the teacher lets the class explore freely (the session's switch; after a reload, the store's link)."""
    if FREE_KEY not in st.session_state:
        lead = store().link(code)
        st.session_state[FREE_KEY] = isinstance(lead, str) and bool(lead) and parse_link(lead)[2]
    return bool(st.session_state[FREE_KEY])


def teacher_switch(code: str) -> None:
    """The teacher's switch: students' pages follow this page, or explore freely."""
    teacher_free(code)
    st.toggle(
        "Students explore freely",
        key=FREE_KEY,
        help="Off: when you change page or setting, every student's page follows yours within a second or two "
        "(a student may choose to explore alone). On: nobody's page is moved.",
    )
