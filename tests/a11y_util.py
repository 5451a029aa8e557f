"""axe-core in the browser tests: the WCAG 2.0 / 2.1 / 2.2 A and AA rules on an opened page, and what axe does not
check in our charts (Vega's SVG text contrast, a text alternative of each chart and image).

axe.min.js comes inside the PyPI package axe-playwright-python (pinned in requirements-dev.txt): nothing is
downloaded at test time. The page is grown to the height of its content first, as for a full screenshot: Streamlit
scrolls its main area, not the document, and axe cannot tell the contrast of text scrolled out of view (it files it
as "incomplete", which would hide the captions below the first screen).
"""

from __future__ import annotations

import numpy as np
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


# What axe does not check: the text Vega draws in SVG, and whether a chart's label says anything (Vega labels a
# chart without a description "Vega visualization", which passes axe and tells a screen reader nothing).
# Each visible text with its colour and what lies under it: the smallest opaque mark whose box holds the text's
# centre (a heatmap's cell with its number), else the chart's white.
SVG_TEXT = """() => { const out = [];
    document.querySelectorAll('[data-testid="stVegaLiteChart"] svg').forEach(svg => {
        const marks = [...svg.querySelectorAll('.role-mark path, .role-mark rect')].map(p => {
            const s = getComputedStyle(p);
            return [p.getBoundingClientRect(), s.fill, s.fill.startsWith('rgb(') && s.fillOpacity === '1' && s.opacity === '1'];
        }).filter(m => m[2]);
        svg.querySelectorAll('text').forEach(t => {
            const r = t.getBoundingClientRect();
            if (!t.textContent.trim() || r.width === 0) return;
            const cx = r.x + r.width / 2, cy = r.y + r.height / 2;
            const under = marks.filter(([b]) => b.left <= cx && cx <= b.right && b.top <= cy && cy <= b.bottom)
                .sort((a, b) => a[0].width * a[0].height - b[0].width * b[0].height)[0];
            out.push([getComputedStyle(t).fill, under ? under[1] : 'rgb(255, 255, 255)', t.textContent.slice(0, 30)]);
        });
    });
    return out; }"""
CHART_LABELS = """() => {
    const maps = [];  // the canvas heatmaps (ui/draw/heatmap.js), in their components' shadow roots
    const walk = (root) => root.querySelectorAll('*').forEach(e => {
        if (e.matches('canvas.ae-hm-cells')) maps.push(e);
        if (e.shadowRoot) walk(e.shadowRoot); });
    walk(document);
    return [...[...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(c => c.querySelector('svg, canvas')),
            ...maps]
        .filter(g => g && g.getBoundingClientRect().width > 0)
        .map(g => g.getAttribute('aria-label') || g.parentElement.getAttribute('aria-label')); }"""  # drawn ones
IMAGE_ALTS = """() => [...document.querySelectorAll('[data-testid="stImage"] img')].map(i => i.getAttribute('alt'))"""


def luminance(css_rgb: str) -> float:
    """WCAG relative luminance of a computed CSS colour ("rgb(r, g, b)")."""
    rgb = [float(x) for x in css_rgb[css_rgb.index("(") + 1 : css_rgb.index(")")].split(",")[:3]]
    c = np.asarray(rgb) / 255
    return float(np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4) @ [0.2126, 0.7152, 0.0722])


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def chart_problems(page) -> list[str]:
    """Chart text under 4.5:1 on what it is drawn on, charts whose label is Vega's default, images without alt
    text."""
    low = [f"{t!r}: {fill} on {under}, {contrast(fill, under):.2f}:1" for fill, under, t in page.evaluate(SVG_TEXT)
           if contrast(fill, under) < 4.5]  # fmt: skip
    unlabelled = [f"chart {k + 1} labelled {label!r}" for k, label in enumerate(page.evaluate(CHART_LABELS))
                  if not label or label == "Vega visualization"]  # fmt: skip
    no_alt = [f"image {k + 1} without alt text" for k, alt in enumerate(page.evaluate(IMAGE_ALTS)) if not alt]
    return low + unlabelled + no_alt


def assert_accessible(page, where: str = "") -> None:
    """Fail with every violation axe finds on ``page``, and with every :func:`chart_problems`."""
    found = axe_violations(page) + chart_problems(page)
    assert found == [], f"{where or page.url}: {len(found)} problems:\n" + "\n".join(found)
