"""Browser pages kept open from one test to the next: a test borrows a page, and the next test of the same browser
and kind of device gets it back, cleaned, instead of a new context.

A new context costs Chromium a renderer process and a cold script cache: the default Playground took 4.2 s of the
machine's CPU in a new context and 1.6 s in a page that had drawn the app before (``benchmarks/browser_pages.py`` on
this project's 2-core machine), and the browser tests open hundreds of pages. What a test could leave behind is
taken back before the page is lent again:

- the listeners the test added (console, dialogs, requests, websockets), so the next test hears only its own;
- the app's storage of the page's origin (localStorage, sessionStorage: the class pulse's anonymous student id) and
  every cookie (nginx's sticky cookie);
- the document: the page goes to about:blank, which closes the Streamlit session and its websocket;
- the window size, set again to the kind's own on every loan.

A page whose test failed, that routes requests, or that the test closed is not kept: the next test gets a new
context. Tests that need more than one page of a browser (a teacher and students, a second tab) make their own
contexts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.server import wait_for_app

# (id of the browser, the context's options as a sorted tuple) -> (context, page, listeners Playwright itself keeps)
_kept: dict[tuple, tuple] = {}

CHUNK_FAILED = "Failed to fetch dynamically imported module"
CSS_FAILED = "Unable to preload CSS"  # the same failure for a chunk's stylesheet (a table's grid: DataFrame.css)
CLEAR_STORAGE = "() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }"


def _listeners(page) -> dict:
    emitter = page._impl_obj  # Playwright's event emitter: page.on() adds to it, and so does Playwright itself
    return {name: list(emitter.listeners(name)) for name in emitter.event_names()}


def _drop_added_listeners(page, before: dict) -> None:
    emitter = page._impl_obj
    for name in list(emitter.event_names()):
        for f in list(emitter.listeners(name)):
            if f not in before.get(name, ()):
                emitter.remove_listener(name, f)


def _reusable(ctx, page) -> bool:
    routed = bool(getattr(page._impl_obj, "_routes", None)) or bool(getattr(ctx._impl_obj, "_routes", None))
    return not page.is_closed() and not routed and ctx.pages == [page]


@contextlib.contextmanager
def borrowed_page(browser, **options):
    """A page of a context made with ``options`` (``viewport``, ``has_touch``...), blank or left blank by the last
    test that borrowed one like it; yields the page, and takes it back clean (or closes its context)."""
    key = (id(browser), tuple(sorted((k, repr(v)) for k, v in options.items())))
    kept = _kept.pop(key, None)
    if kept is not None and browser.is_connected() and not kept[1].is_closed():
        ctx, page, own = kept
        if "viewport" in options:
            page.set_viewport_size(options["viewport"])
    else:
        ctx = browser.new_context(**options)
        page = ctx.new_page()
        own = _listeners(page)
    passed = False
    try:
        yield page
        passed = True
    finally:
        if passed and _reusable(ctx, page) and _cleaned(ctx, page, own):
            old = _kept.pop(key, None)  # a test that borrowed two pages of one kind keeps the last one given back
            if old is not None:
                old[0].close()
            _kept[key] = (ctx, page, own)
        else:
            ctx.close()


def _cleaned(ctx, page, own: dict) -> bool:
    try:
        _drop_added_listeners(page, own)
        page.evaluate(CLEAR_STORAGE)
        ctx.clear_cookies()
        page.goto("about:blank")
        return True
    except Exception:  # a page that cannot be cleaned is not lent again
        return False


def release(browser) -> None:
    """Close the pages kept for ``browser`` (before it closes: its id may be another browser's later)."""
    for key in [k for k in _kept if k[0] == id(browser)]:
        _kept.pop(key)[0].close()


def load_app(page, url: str | None, ready: Callable[[int], None] | None = None) -> None:
    """Open ``url`` (None: the page is already on its way) and wait until the app has drawn it: ``ready(timeout_ms)``
    waits (default :func:`harness.server.wait_for_app`; a test that lands elsewhere first waits for that too).

    On a machine busy with other work (two test workers, a browser each), Chromium now and then failed to fetch one
    of Streamlit's script chunks (the page shows "Failed to fetch dynamically imported module") or drew nothing in
    45 s (a CI run: a new context's first page, 90 s without a title); that is the machine's load, not the page, so
    the page is loaded once more (a second failure fails the test)."""
    wait = ready or (lambda timeout_ms: wait_for_app(page, timeout_ms=timeout_ms))
    if url is not None:
        page.goto(url)
    try:
        wait(45000)
        failed = chunk_failed(page)
    except PlaywrightTimeout:
        failed = True
    if failed:
        page.reload()
        wait(90000)


def chunk_failed(page) -> bool:
    """Whether the page shows that Chromium failed to fetch one of Streamlit's chunks (its script or stylesheet)."""
    return any(page.get_by_text(text).count() > 0 for text in (CHUNK_FAILED, CSS_FAILED))
