"""axe-core in the browser tests: the WCAG 2.0 / 2.1 / 2.2 A and AA rules on an opened page.

axe.min.js comes inside the PyPI package axe-playwright-python (pinned in requirements-dev.txt): nothing is
downloaded at test time. The page is grown to the height of its content first, as for a full screenshot: Streamlit
scrolls its main area, not the document, and axe cannot tell the contrast of text scrolled out of view (it files it
as "incomplete", which would hide the captions below the first screen).
"""

from __future__ import annotations

from axe_playwright_python.base import AXE_SCRIPT

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]  # axe's tags for WCAG 2.0, 2.1 and 2.2, A and AA
OPTIONS = {"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]}
CONTENT_HEIGHT = """() => { const m = document.querySelector('[data-testid="stMain"]');
    return m ? m.scrollHeight : document.body.scrollHeight; }"""


def axe_violations(page) -> list[str]:
    """Run axe on ``page`` (its whole content on screen) and return one line per violating element: rule, impact,
    what axe says and the element. An empty list is a pass."""
    size = page.viewport_size
    height = int(min(max(page.evaluate(CONTENT_HEIGHT), size["height"]), 12000))
    if height != size["height"]:
        page.set_viewport_size({"width": size["width"], "height": height})
        page.wait_for_timeout(400)  # charts sized to their container redraw
    try:
        if not page.evaluate("() => !!window.axe"):
            page.evaluate(AXE_SCRIPT)
        result = page.evaluate("options => axe.run(document, options)", OPTIONS)
    finally:
        if height != size["height"]:
            page.set_viewport_size(size)
    return [
        f"{v['id']} ({v['impact']}): {_message(node)} | {' '.join(map(str, node['target']))} | {node['html'][:160]}"
        for v in result["violations"]
        for node in v["nodes"]
    ]


def _message(node: dict) -> str:
    checks = node.get("any", []) + node.get("all", []) + node.get("none", [])
    return "; ".join(c.get("message", "") for c in checks)[:300]


def assert_accessible(page, where: str = "") -> None:
    """Fail with every violation axe finds on ``page``."""
    found = axe_violations(page)
    assert found == [], f"{where or page.url}: {len(found)} axe violations:\n" + "\n".join(found)
