"""The page skeleton: everything every page does the same way, so that a page file declares only its lesson.

A page reads top to bottom as its lesson::

    page = Page(__file__, intro="Two lines of prose.", formula=r"A = \\mathrm{softmax}(QK^\\top/\\sqrt{d_k})")

    def controls():                      # the full run: widgets, and the places the drawing fills
        cfg = page.whatif()              # the shared what-if controls in the sidebar
        head = page.control(HEAD)        # a page control: one declaration (ui/skeleton/page_params.PageParam)
        return (st.container(),)

    def draw(place) -> list[Question]:   # the drawing: one core call, charts, sentences from the numbers
        cfg = page.setting()
        ...
        return [Question("Which key ...?", f"... {fmt(w)}")]

    page.run(draw, controls, code=[the_core_function])

What comes with it, so that no page can forget it or do it another way:

- the server's fair share for every session (``ui.server.fairness.install``), the new_session message built once
  per configuration (``ui.server.session_msg.install``) and widgets that look their key up in session state
  (``ui.server.widget_lookup.install``), once per process, at the first page run;
- registration: the title, icon and place in the reading order come from ``ui/skeleton/registry.PAGES``;
- the top of the page: the page list, the title, the link's notices and preset banner, the projector view, the
  intro and the formula, and one place for every notice the page's controls give;
- partial reruns: with ``controls``, ``draw`` is a keyed fragment that a leaf control reruns alone
  (ui/session/partial.py); without, the whole page reruns at every change (pages whose controls sit among the drawing);
- the URL: the what-if sets and page controls drawn are written into the address bar, and the share box in
  the sidebar carries them;
- the ending: the check questions ``draw`` returns (answers on click), the next page in the reading order,
  "see also" links, "Show the code that ran" (``inspect.getsource`` of ``code``), and the garbage collection that
  replaces Streamlit's per-run one, also when a page returns early.
"""

from __future__ import annotations

import base64
import inspect
from pathlib import Path

import streamlit as st

from attention_core import WhatIf
from ui.classroom.lesson_box import lesson_box
from ui.classroom.lesson_panel import asked_question, lesson_bar, note_questions, write_lesson_link
from ui.classroom.mode import ASKED, asked_here, classroom_on, classroom_toggle
from ui.classroom.presets import find_preset
from ui.classroom.pulse_device import follow_join_link
from ui.classroom.pulse_panel import class_panel, watch_reveals
from ui.server.cache import cached
from ui.server.fairness import install as install_fairness
from ui.server.fairness import notice as pace_notice
from ui.server.runtime import collect_garbage, settle_imports
from ui.server.session_msg import install as install_session_msg
from ui.server.widget_lookup import install as install_widget_lookup
from ui.session.links import KEY as LINK_KEY
from ui.session.links import link_options, write_link_options
from ui.session.partial import body, page_started
from ui.session.state import CODE_OPEN, enter_page
from ui.session.url import URL_NAMES
from ui.skeleton import page_params
from ui.skeleton.controls import (
    ALL_CONTROLS,
    LEAF_CONTROLS,
    SHARED,
    ControlSet,
    current,
    share_frame,
    share_text,
    show_notices,
    sidebar_widgets,
    whatif_controls,
    write_url,
)
from ui.skeleton.lesson import Question, check_yourself, next_link, page_link_with_caption
from ui.skeleton.page_list import page_list, switch_if_chosen
from ui.skeleton.registry import HOME, ROOT, info, next_page, predicting
from ui.text import md_escape

# the browser tab's icon (a 4 x 4 attention map, every query on B3) as a data URL: a file would be a media file of
# the session, which a replica that takes the session over has not got; a Material icon is fetched from Google
FAVICON = "data:image/png;base64," + base64.b64encode((Path(__file__).parent / "favicon.png").read_bytes()).decode()

PROJECTOR_CSS = """<style>
[data-testid="stMainBlockContainer"] { font-size: 1.2rem; max-width: 100%; padding-left: 2rem; padding-right: 2rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2.4rem; }
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] li { font-size: 1.2rem; }
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] { font-size: 1.05rem; }
[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"],
[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p { font-size: 3rem; }
[data-testid="stMainBlockContainer"] [data-testid="stTable"] :is(th, td),
[data-testid="stMainBlockContainer"] [data-testid="stTable"] :is(th, td) p,
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] table :is(th, td) { font-size: 1.3rem; }
[data-testid="stMainBlockContainer"] [data-testid="stTable"] :is(th, td) * { overflow-wrap: anywhere; }  /* a long name wraps, not cut */
[data-testid="stMainBlockContainer"] .st-key-pulse_tally [data-testid="stMarkdownContainer"] p { font-size: 1.6rem; }
[data-testid="stMainBlockContainer"] .st-key-pulse_tally [data-testid="stProgressBarTrack"] { height: 1.5rem; }
</style>"""  # static text, never anything a user typed
# what the theme cannot set for WCAG AA (code colours, KaTeX's strut): a style-only st.html takes no space
A11Y_CSS = "<style>" + (Path(__file__).parent / "a11y.css").read_text(encoding="utf-8") + "</style>"


def _path_of(file: str) -> str:
    """A page file's path relative to the repository ("pages/Playground.py"), as ui/skeleton/registry names it."""
    here = Path(file).resolve()
    return here.relative_to(ROOT).as_posix() if here.is_relative_to(ROOT) else here.name


class Page:
    """One page of the app: its top (drawn when the Page is made), its controls, and :meth:`run`."""

    def __init__(
        self,
        file: str,
        intro: str = "",
        *,
        title: str | None = None,
        formula: str | None = None,
        see_also: tuple[str, ...] = (),
    ) -> None:
        self.info = info(_path_of(file))
        self.path = self.info.path
        self.see_also = tuple(info(p) for p in see_also)  # checked now: a wrong path fails at once
        self._sets: list[ControlSet] = []
        self._hid: set[str] = set()  # the link's hidden controls this page would have drawn
        self._params: list[page_params.PageParam] = []
        self._share = None  # the sidebar's place of the share box and the lesson box
        self._share_box = None  # the share box's places (ui.skeleton.controls.share_frame)
        self._drawing: dict | None = None  # while the page's drawing runs: the sets' settings it has read
        self._split = False  # the page runs its drawing as a body of its own (Page.run with controls)
        _top(self.info.path, title or self.info.label, self.info.icon)
        st.session_state[ASKED] = None  # ui.classroom.mode.predict marks the run that asks a question
        classroom_toggle()
        if intro:
            st.markdown(intro)
        if formula:
            st.latex(formula)
        self.notes = st.container()  # every notice of the page's controls goes here, under the intro
        page_params.start_visit()

    # ---- controls

    def whatif(
        self,
        show: tuple[str, ...] = ALL_CONTROLS,
        *,
        heading: str = "What-if controls",
        leaf: frozenset[str] | set[str] = LEAF_CONTROLS,
        later: tuple[str, ...] = (),
    ) -> WhatIf:
        """The shared what-if controls in the sidebar (those in ``show``, less those the link hides); returns the
        setting. The share box goes under them. ``later``: controls whose word a later page teaches, drawn in a
        closed expander that explains them in passing (ui.skeleton.controls.LATER)."""
        cfg = sidebar_widgets(show, heading, leaf, later)
        self._sets.append(SHARED)
        self._hid |= set(link_options().hide) & set(show)
        self._share = st.sidebar.container()
        return cfg

    def whatif_set(self, cs: ControlSet, box, show: tuple[str, ...], **kw) -> WhatIf:
        """Another set of what-if controls (Compare's A and B) drawn into ``box``, less those the link hides; other
        keyword arguments go to ui.skeleton.controls.whatif_controls (default, label_suffix, leaf)."""
        hidden = [n for n in link_options().hide if n in show]
        cfg = whatif_controls(box, cs, tuple(n for n in show if n not in hidden), **kw)
        if hidden:
            box.caption(
                "This lesson's link fixes "
                + ", ".join(f"{URL_NAMES[n]} = {getattr(cfg, n)}" for n in hidden)
                + "; those controls are hidden."
            )
        self._sets.append(cs)
        self._hid |= set(hidden)
        return cfg

    def hides(self, names) -> set[str]:
        """Which of the settings ``names``, drawn by the page itself, the link hides (noted: the page honours it)."""
        hidden = set(link_options().hide) & set(names)
        self._hid |= hidden
        return hidden

    def keep_in_url(self, cs: ControlSet = SHARED) -> None:
        """Write a set this page does not draw into the URL too (Compare keeps the shared setting in its link)."""
        self._sets.insert(0, cs)

    def control(self, p: page_params.PageParam, box=None, **kw):
        """Draw the page control ``p`` into ``box`` (default: the main area) and return its value: seeded from the
        URL on the session's first run, kept across page switches, fitted to the setting, written back into the
        URL, with a notice when a value had to change (see ui/skeleton/page_params.py)."""
        self._params.append(p)
        return page_params.draw(p, box or st, **kw)

    def link(self, p: page_params.PageParam):
        """The value of ``p``, a control whose widget the page draws itself (a matrix in a data editor), as
        :meth:`control` keeps it: seeded from the URL on the session's first run (a notice when the link's value is
        refused), kept across page switches, written back into the URL. The page sets a new value with
        ``page_params.set_value`` before the run ends."""
        self._params.append(p)
        return page_params.restore([p])[p.url]

    def setting(self, cs: ControlSet = SHARED) -> WhatIf:
        """The setting of a what-if set for this run (the drawing asks for it). Read once per set in the drawing:
        every widget is drawn before it, so nothing changes the setting until the run ends (a read is 15 session
        state lookups, 0.17 ms here, and a body rerun asked for each set three times)."""
        if self._drawing is None:
            return current(cs)
        if cs not in self._drawing:
            self._drawing[cs] = current(cs)
        return self._drawing[cs]

    # ---- the run

    def run(self, draw, controls=None, code=()) -> None:
        """Draw the page: ``controls()`` (full run; returns a tuple of places), then ``draw(*places)`` (a fragment
        that leaf controls rerun alone; without ``controls``, ``draw()`` runs with the page and may draw widgets),
        then the ending. ``draw`` returns the check questions (``Question`` or (question, answer) pairs)."""
        self._split = controls is not None
        try:
            if controls is None:
                self._draw(draw, ())
            else:
                places = controls()
                if self._share is None:  # the body must not create a block outside itself (a fragment rerun
                    self._share = st.sidebar.container()  # would send it to a path the page does not have)
                self._share_box = share_frame(self._share)  # its widgets in the full run, its link in the body
                body(self._draw)(draw, tuple(places or ()))
            self._ending(code)
        finally:
            settle_imports()
            collect_garbage()  # in place of Streamlit's per-run collection (ui/server/runtime.py)

    def _draw(self, draw, places: tuple) -> None:
        # the sets' settings as the drawing reads them (Page.setting), where every widget was drawn before it (a
        # page drawn whole in one run may draw widgets in its drawing: it reads them afresh each time)
        self._drawing = {} if self._split else None
        try:
            questions = draw(*places)
            self._outputs()
        finally:
            self._drawing = None
        check_yourself([Question(*q) for q in questions or ()])

    def _lesson_notes(self) -> None:
        """Say plainly which of the link's lesson options this page cannot honour."""
        options = link_options()
        if classroom_on() and not asked_here() and not self.info.predicts:
            pages = ", ".join(p.label for p in predicting())
            self.notes.info(
                f"Classroom mode is on, but this page asks no question to predict, so everything is shown. "
                f"The pages that ask one first: {pages}.",
                icon=":material/school:",
            )
        if options.hide and not self._hid:
            names = ", ".join(URL_NAMES[n] for n in options.hide)
            self.notes.info(
                f"This lesson's link hides {names}; this page draws none of them, so nothing is hidden here.",
                icon=":material/visibility_off:",
            )

    def _outputs(self) -> None:
        """Notices, the URL and the share box, for what this run drew."""
        # the whole URL in one message, every run: a run starts from the URL the browser sent with its request, which
        # can be older than the one the run before it has just written, so writing only what differs from it could
        # leave the browser on that earlier run's URL (tests/test_protocol.py); each change of st.query_params sends
        # a message of its own, so the sets and the page's own controls are written into a dict first
        qp = st.query_params.to_dict()  # the app writes one value a parameter (a repeated one: its last, as [] reads)
        for cs in self._sets:
            show_notices(cs, self.notes)
            write_url(self.setting(cs), cs, qp)
        page_params.write_params(self._params, qp)
        st.query_params.from_dict(qp)
        page_params.show_notes(self.notes)
        if self._share is None:
            self._share = st.sidebar.container()
        if self._share_box is None:  # a page drawn whole in one run
            self._share_box = share_frame(self._share)
        share_text(self._share_box, qp)
        note_questions()  # a teacher at a lesson's step: this page's questions belong to it
        write_lesson_link()

    def _ending(self, code) -> None:
        # the sidebar's Lesson box (ui/classroom/lesson_box.py), from the full run: a body-only rerun keeps it
        lesson_box(self._share if self._share is not None else st.sidebar.container())
        watch_reveals()  # a student in a class: the reveal's watcher (ui/classroom/pulse_panel.py; it draws nothing)
        self._lesson_notes()
        next_link(self.path)
        nxt = next_page(self.path)
        also = [p for p in self.see_also if nxt is None or p.path != nxt.path]  # the next page is linked above
        if also:
            st.markdown("**See also**")
            for p in also:
                page_link_with_caption(p)
        if code:
            show_code(*code)


def _top(path: str, title: str, icon: str) -> None:
    """set_page_config, the page list, the title, and what the link says about the lesson (the preset's question,
    the projector view, notices about link options that were ignored)."""
    # a fair share of the server for every session (ui/server/fairness.py): installed by the first run of whatever page a
    # visitor opens first (a page's link runs that page alone, not streamlit_app.py), before it draws; importing
    # ui installs nothing
    install_fairness()
    install_session_msg()  # the new_session message's config and theme built once per configuration
    install_widget_lookup()  # a widget drawn looks its key up in session state (ui/server/widget_lookup.py)
    switch_if_chosen()  # a page chosen in the page list: that page's run, before this one draws anything
    enter_page()
    page_started()  # no page body is current until this run draws it (ui/session/partial.py)
    first_run = LINK_KEY not in st.session_state  # the session's first run reads the link
    options = link_options()
    if first_run and options.preset:
        complete_bare_preset_link(options.preset, path)
    st.set_page_config(
        page_title=f"{title} · Attention Explorer",
        page_icon=FAVICON,
        layout="wide",
        initial_sidebar_state="collapsed" if options.projector else "auto",
    )
    settle_imports()  # after the page's imports: freeze their objects, cap the native thread pools
    st.html(A11Y_CSS)
    if options.projector:
        st.markdown(PROJECTOR_CSS, unsafe_allow_html=True)
    page_list(st.sidebar, path)  # one element (ui/skeleton/page_list.py); a click closes the sidebar on a phone
    st.sidebar.divider()
    st.title(f"{icon} {title}")
    pace_notice()  # a toast when this session sent changes faster than the server redraws (ui/server/fairness.py)
    for notice in st.session_state.pop(f"{LINK_KEY}_notices", None) or []:
        st.warning(f"Link: {notice}", icon=":material/warning:")
    preset = find_preset(options.preset) if options.preset else None
    if options.preset and preset is None:
        st.warning(
            f"Link: there is no preset called {options.preset!r}; the settings in the link still apply.",
            icon=":material/warning:",
        )
    elif preset is not None and preset.page == path:
        with st.container(border=True):
            st.markdown(f"**:material/science: {md_escape(preset.name)}** · {md_escape(preset.question)}")
            st.caption(f"What to look for: {preset.look_for}")
    follow_join_link()  # /?join=CODE: the short address of a class (ui/classroom/pulse_device.py)
    lesson_bar()  # a lesson's step bar (ui/classroom/lesson_panel.py): at the top, where the teacher's Next is
    class_panel()  # class pulse: the teacher's tally, or the student's line (ui/classroom/pulse_panel.py)
    asked_question()  # the lesson step's own question, for everyone on the page (ui/classroom/lesson_panel.py)
    write_link_options()


def complete_bare_preset_link(slug: str, path: str | None) -> None:
    """A link that names this page's preset but none of the preset's settings (``Compare?preset=2_why_scale``,
    shortened or typed by hand) opens the preset: its parameters go into the URL before the controls read it, so
    the banner's question is asked of the preset's settings, not of the defaults. A link that carries any of
    them is taken as it is (a teacher's variation of the preset)."""
    preset = find_preset(slug)
    if preset is None or preset.page != path:
        return
    wanted = preset.query_params()
    if set(st.query_params.keys()) & (set(wanted) - {"preset"}):
        return
    st.query_params.update({k: v for k, v in wanted.items() if k not in st.query_params})


@cached(max_mb=2)  # source files do not change while the server runs (no file watcher in class)
def _source(obj) -> str:
    return inspect.getsource(obj)


def show_code(*objects, label: str = "Show the code that ran") -> None:
    """An expander with the real source of the functions used (inspect.getsource, read once per function), drawn
    once it is opened (its state is kept: opening it reruns the page): closed, with the share box, a page opens
    without Streamlit's code highlighter."""
    box = st.expander(label, key=CODE_OPEN, on_change="rerun")
    if box.open:
        for obj in objects:
            box.code(_source(obj), language="python")


__all__ = ["HOME", "Page", "Question", "show_code"]
