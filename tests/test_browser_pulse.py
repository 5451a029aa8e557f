"""A lesson in Chromium: a teacher starts a class and shows the projector view; three students (one on a phone,
touch) answer; a reload and a second tab of one student add no answer and bring back "Sent"; the tally reads from
the back of the room; the reveal reaches every student's page, none reloaded; nothing shows the teacher's token.
"""

from __future__ import annotations

import contextlib
import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.server import wait_for_address, wait_for_app
from tests.a11y_util import assert_accessible
from tests.page_pool import load_app
from tests.test_browser import assert_no_errors, horizontal_overflow
from tests.test_pulse_live import wait_text as _wait_text

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SETTING = "seq_len=6&d_model=16&heads=2&seed=3"  # the Playground's question: unscaled, head 1 gets sharper
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


@contextlib.contextmanager
def browser_tab(browser, url: str, lands_on: str = "", pages: dict | None = None, name: str = "", **ctx_args):
    """A new browser (its own cookies) with one tab on ``url`` (which sends it on to a URL matching ``lands_on``),
    kept in ``pages`` under ``name`` for the screenshots; yields (context, page)."""
    ctx = browser.new_context(**({"viewport": {"width": 1280, "height": 720}} | ctx_args))
    ctx.add_init_script(COUNT_SENDS)
    page = ctx.new_page()
    if pages is not None:
        pages[name] = page

    def arrived(timeout_ms: int) -> None:
        if lands_on:
            wait_for_address(page, re.compile(lands_on), timeout=timeout_ms)
            page.wait_for_load_state("load")
            wait_text(page, "Predict first", timeout_ms)  # the page it was sent to has drawn its question
        wait_for_app(page, timeout_ms=timeout_ms)

    try:
        load_app(page, url, arrived)  # loaded once more if the machine's load kept it from drawing
        yield ctx, page
    finally:
        if pages is not None:  # what the screen showed at the end (pytest prints the folder with -rA): look at them
            for n, p in pages.items():
                if n != "_shots" and p.context is ctx:
                    with contextlib.suppress(Exception):
                        p.screenshot(path=str(pages["_shots"] / f"pulse-{n}.png"), full_page=n != "projector")
        ctx.close()


def wait_text(page, pattern: str, timeout_ms: int = 90000) -> None:
    """Wait for text matching ``pattern`` on the page (a shared CI machine can be slow: no timing is asserted)."""
    _wait_text(page, pattern, timeout_ms)


def main_text(page) -> str:
    return page.inner_text('[data-testid="stMain"]')


def start_class(page) -> tuple[str, str]:
    """Press Start a class in the share box; return (students' link, teacher's link) as the box shows them."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Share this experiment").click()
    start = sidebar.get_by_role("button", name="Start a class")
    for attempt in range(3):  # a click that lands while the page is still drawing (a busy machine) can be lost
        if start.count():
            start.click()
        try:
            _wait_text(page, r"Class \w{5} · 0 answers", 30000)
            break
        except PlaywrightTimeout:
            assert attempt < 2, "three presses of Start a class started no class"
    switch = sidebar.locator("label").filter(has_text="Show my teacher link")
    for attempt in range(3):  # the same on a busy machine: a click while the box redraws can be lost
        if not switch.locator("input").is_checked():
            switch.click()
        try:
            sidebar.locator('[data-testid="stCode"]').nth(1).wait_for(timeout=20000)
            break
        except PlaywrightTimeout:
            assert attempt < 2, "three presses of Show my teacher link showed no teacher link"
    links = [c.inner_text().strip() for c in sidebar.locator('[data-testid="stCode"]').all()]
    assert len(links) == 2, links  # the students' link and the teacher's: no unlocked link with the class in it
    students, teacher = links
    assert "classroom=lock" in students and "teacher=" not in students and "teacher=" in teacher
    assert "teacher=" not in page.url, "the token left the teacher's own address bar"
    return students, teacher


# Every page counts the messages it sends the server (a request to run the page or a fragment is one).
COUNT_SENDS = """(() => {
    // The script runs a page asks for (a BackMsg's rerun_script, field 11), split by its ClientState's is_auto_rerun
    // (field 6): a fragment's timed tick (the class watcher's safety net) or a run the page asked for itself.
    window.__wsRuns = { asked: 0, ticks: 0 };
    const varint = (b, i) => {
        let v = 0, m = 1;
        while (b[i] & 0x80) { v += (b[i++] & 0x7f) * m; m *= 128; }
        return [v + b[i] * m, i + 1];
    };
    const fields = (b, i, end, seen) => {  // seen(field, wire type, value or [start, end])
        while (i < end) {
            let tag, v;
            [tag, i] = varint(b, i);
            const wire = tag & 7, field = tag >>> 3;
            if (wire === 0) { [v, i] = varint(b, i); seen(field, wire, v); }
            else if (wire === 2) { [v, i] = varint(b, i); seen(field, wire, [i, i + v]); i += v; }
            else if (wire === 1) i += 8;
            else if (wire === 5) i += 4;
            else return;
        }
    };
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
        try {
            const b = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
            fields(b, 0, b.length, (field, wire, v) => {
                if (field !== 11 || wire !== 2) return;
                let auto = false;
                fields(b, v[0], v[1], (f, w, x) => { if (f === 6 && w === 0 && x) auto = true; });
                window.__wsRuns[auto ? "ticks" : "asked"] += 1;
            });
        } catch (e) { window.__wsRuns.asked += 1; }  // a message it cannot read counts as asked
        return send.call(this, data);
    };
})();"""

# Installed in a student's page before the reveal: the order in which its main area comes to show the verdict and
# the weights' heading, and how many script runs the page had asked for by the verdict, and how many safety-net
# ticks it had sent (a reload would drop window.__revealOrder, so its presence says the page was not reloaded).
ORDER_WATCH = """() => {
    window.__revealOrder = [];
    window.__runsAtVerdict = null;
    const before = { ...window.__wsRuns };
    const main = document.querySelector('[data-testid="stMain"]');
    const look = () => {
        const text = main.innerText, seen = window.__revealOrder;
        if (!seen.includes('verdict') && /Right: you predicted|Not this time/.test(text)) {
            seen.push('verdict');
            const now = window.__wsRuns;
            window.__runsAtVerdict = { asked: now.asked - before.asked, ticks: now.ticks - before.ticks };
        }
        if (!seen.includes('weights') && text.includes('Attention weights, one map per head')) seen.push('weights');
        if (seen.length === 2) observer.disconnect();
    };
    const observer = new MutationObserver(look);
    observer.observe(main, {subtree: true, childList: true, characterData: true});
}"""


def prediction(page):
    """The prediction's radio group."""
    return page.locator('[data-testid="stMain"] [data-testid="stRadio"]').filter(has_text="Your prediction")


def send(page, choice: str) -> None:
    prediction(page).get_by_text(choice, exact=True).click()
    page.get_by_role("button", name="Send my prediction").or_(
        page.get_by_role("button", name="Change my prediction")
    ).click()
    wait_text(page, f"Sent: you chose {choice}")
    wait_for_app(page)


def tally_lines(projector) -> list[dict]:
    """The projector's tally: each line's text, font size and box."""
    return projector.evaluate(
        """() => [...document.querySelectorAll('.st-key-pulse_tally [data-testid="stMarkdownContainer"] p')].map(p => {
            const r = p.getBoundingClientRect();
            return {text: p.innerText, size: parseFloat(getComputedStyle(p).fontSize), top: r.top, bottom: r.bottom,
                    right: r.right, bar: p.closest('[data-testid="stVerticalBlock"]').querySelector(
                        '[data-testid="stProgressBarTrack"]').getBoundingClientRect().height};
        })"""
    )


def test_a_lesson_with_a_projector_and_three_students(browser_and_base, tmp_path):
    browser, base = browser_and_base
    pages = {"_shots": tmp_path / "screenshots"}
    pages["_shots"].mkdir(exist_ok=True)
    _lesson(browser, base, pages)


def _lesson(browser, base: str, pages: dict) -> None:
    with browser_tab(browser, f"{base}/Playground?{SETTING}", pages=pages, name="teacher") as (teacher_ctx, teacher):
        students_link, teacher_link = start_class(teacher)
        projector = teacher_ctx.new_page()
        projector.set_viewport_size({"width": 1280, "height": 720})
        pages["projector"] = projector
        load_app(projector, teacher_link + "&view=projector")
        wait_text(projector, r"Class \w{5} · 0 answers")
        token = dict(parse_qsl(urlsplit(teacher_link).query))["teacher"]
        assert "teacher=" not in projector.url and token not in projector.content(), "the room never sees the token"
        code = dict(parse_qsl(urlsplit(students_link).query))["class"]
        assert code in main_text(projector) and f"/?join={code}" in main_text(projector)
        assert projector.get_by_role("img", name=f"QR code that opens {base}/?join={code}").count() == 1
        assert_accessible(projector, "the projector view with a class")

        with (
            browser_tab(browser, students_link, pages=pages, name="ana") as (ana_ctx, ana),
            browser_tab(
                browser, f"{base}/?join={code.lower()}", lands_on=r"/Playground\?", pages=pages, name="ben"
            ) as (_, ben),  # lower case
            browser_tab(browser, students_link, pages=pages, name="cleo", **PHONE) as (_, cleo),
        ):
            wait_text(ben, "You are in class")
            assert dict(parse_qsl(urlsplit(ben.url).query))["class"] == code, "the short address opened the class"
            for page in (ana, ben, cleo):
                radio = prediction(page).locator("input")
                assert radio.count() == 3 and not any(r.is_checked() for r in radio.all()), "nothing chosen for them"
            send(ana, "softer")
            send(ben, "sharper")
            send(cleo, "sharper")  # a tap on a phone
            assert not horizontal_overflow(cleo), horizontal_overflow(cleo)
            wait_text(projector, r"Class \w{5} · 3 answers")

            ana.reload()  # a reload (a phone does this when its student comes back to the tab)
            load_app(ana, None)
            assert "Sent: you chose softer" in main_text(ana), "the reload brings back what was sent"
            second = ana_ctx.new_page()  # a second tab of the same browser
            pages["second"] = second
            load_app(second, students_link)
            assert "Sent: you chose softer" in main_text(second)
            send(second, "sharper")  # a change of mind in the second tab replaces the answer
            wait_text(projector, r"#1 sharper · 3 answers")
            assert "Class" in main_text(projector) and "· 3 answers to" in main_text(projector), (
                "one browser, one answer"
            )

            lines = tally_lines(projector)
            assert [ln["text"] for ln in lines] == [
                "#1 sharper · 3 answers",
                "#2 softer · 0 answers",
                "#3 the same · 0 answers",
            ]
            assert min(ln["size"] for ln in lines) >= 20, lines  # the back row reads 20 px and up
            assert min(ln["bar"] for ln in lines) >= 20, lines
            assert all(a["bottom"] <= b["top"] for a, b in zip(lines, lines[1:])), "no label overlaps the next"
            assert max(ln["right"] for ln in lines) <= 1280

            for page in (ana, second, ben, cleo):
                page.evaluate(ORDER_WATCH)
            projector.get_by_role("button", name="Reveal to the class").click()
            wait_text(projector, r"Revealed: 3 of 3 \(100%\)")
            unasked = 0  # pages that sent nothing at all before the verdict showed: only the push can have brought it
            for page in (ana, second, ben, cleo):  # none reloaded: the reveal was pushed to each page
                wait_text(page, "Right: you predicted sharper")
                wait_text(page, "Attention weights, one map per head")
                order = page.evaluate("() => window.__revealOrder")
                assert order == ["verdict", "weights"], f"{order}: the verdict shows in the box, then the maps"
                runs = page.evaluate("() => window.__runsAtVerdict")
                assert runs["asked"] == 0, f"the page asked for {runs['asked']} runs: the reveal should come pushed"
                unasked += runs["ticks"] == 0
            # the watcher's safety net ticks every few seconds on its own and may land while a loaded machine
            # delivers the push; one page reached by the push alone shows that the push reaches them
            assert unasked >= 1, "every page's safety net ticked before its verdict: was anything pushed?"
            # the count can tell the two apart: each page asked for runs (its answer), and the safety net ticks
            assert all(p.evaluate("() => window.__wsRuns.asked") >= 1 for p in (ana, second, ben, cleo))
            ben.wait_for_function("() => window.__wsRuns.ticks > 0", timeout=30000)
            lines = tally_lines(projector)
            assert lines[0]["text"] == "✓ #1 sharper · 3 answers · the right answer", "the right one in words"
            projector.wait_for_timeout(1000)  # the right answer's new bar fades in
            projector.locator(".st-key-pulse_tally").screenshot(path=str(pages["_shots"] / "pulse-tally.png"))
            colour = projector.evaluate(
                """() => getComputedStyle(document.querySelector('.st-key-pulse_bar_right [data-testid="stProgressBarTrack"] > div')).backgroundColor"""
            )
            assert colour == "rgb(30, 123, 69)", colour
            for page in (projector, ana, second, ben, cleo):
                assert_no_errors(page)
            assert_accessible(projector, "the projector view after the reveal")
