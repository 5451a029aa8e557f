"""Phones and tablets in the browser tests: what a student on a small touch screen cannot see, measured in the page.

An element is *cut* when part of its content lies where the student cannot see it without knowing to swipe:

- it scrolls sideways (a formula, a data grid, a code block: its content is wider than its box and the box scrolls
  or clips it), or its text ends in an ellipsis (a label, a metric, a page link): ``scrollWidth > clientWidth``
  with an ``overflow-x`` other than ``visible``;
- or it reaches past the right edge of the screen (a chart or a table wider than the page; Streamlit's main area
  clips it).

Hidden-by-design boxes do not count: KaTeX's MathML copy (for screen readers), elements no wider than a pixel,
Streamlit's screen-reader-only text, the data grid's off-screen text layer and a widget's hidden native input.
"""

from __future__ import annotations

import contextlib

from playwright.sync_api import TimeoutError as PlaywrightTimeout

PHONE = (390, 844)
TABLET = (768, 1024)
TOUCH_SIZES = [PHONE, TABLET]

# every element of the main area whose content is cut (see the module's docstring), as
# "what it is (data-testid of the nearest Streamlit element) 'its text': content width > box width"
CUT = """() => {
    const out = [];
    const W = window.innerWidth;
    const cut = [];  // reported elements: what lies inside one is part of its report
    const gone = [];  // elements hidden by design
    const name = (e) => {
        const owner = e.closest('[data-testid]');
        const id = owner ? owner.getAttribute('data-testid') : e.tagName;
        const cls = typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : '';
        const text = Array.from((e.innerText || e.textContent || e.getAttribute('aria-label') || '')
            .replace(/\\s+/g, ' ').trim()).slice(0, 40).join('');
        return `${id} ${e.tagName.toLowerCase()}${cls} '${text}'`;
    };
    const hidden = (e) => {
        if (e.closest('.katex-mathml, [aria-hidden="true"] input, .stHidden, [data-testid="stTooltipContent"]'))
            return true;
        const s = getComputedStyle(e);
        if (s.visibility === 'hidden' || s.display === 'none' || s.clip !== 'auto' && s.position === 'absolute')
            return true;
        // Streamlit's and glide-data-grid's screen-reader text: clipped to a pixel or moved off screen
        const r = e.getBoundingClientRect();
        return r.width <= 1 || r.height <= 1 || r.right < 0;
    };
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    if (!main) return ['no main area'];
    for (const e of main.querySelectorAll('*')) {
        // a chart's or a formula's drawing is measured as a whole (its svg), not mark by mark
        if ((e.parentElement && e.parentElement.closest('svg')) || cut.some((c) => c.contains(e)) ||
            gone.some((c) => c.contains(e))) continue;
        if (hidden(e)) { gone.push(e); continue; }  // and what it holds (react-aria's hidden range inputs)
        const s = getComputedStyle(e);
        const r = e.getBoundingClientRect();
        let why = null;
        if (s.overflowX !== 'visible' && e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
            why = `content ${e.scrollWidth} px in a box of ${e.clientWidth} px`;
        else if (r.right > W + 1)
            why = `ends at ${Math.round(r.right)} px on a screen of ${W} px`;
        if (why) { cut.push(e); out.push(name(e) + ': ' + why); }
    }
    return out;
}"""


def cut_elements(page) -> list[str]:
    """Every element of ``page``'s main area whose content is cut or hidden sideways (an empty list is a pass)."""
    return page.evaluate(CUT)


def touch_options(size) -> dict:
    """A browser context's options as a phone or tablet: ``size`` (CSS px), touch events, a mobile viewport."""
    return {"viewport": {"width": size[0], "height": size[1]}, "has_touch": True, "is_mobile": True,
            "device_scale_factor": 2}  # fmt: skip


# chart text drawn smaller than MIN_CHART_PX (CSS px on the screen, after any scaling of the chart), as
# "text: size px"; Vega draws axis labels, titles, legends and text marks as SVG text, whose scale is the text's own
# screen transform, so a viewBox, a transform or a squeezed svg all count. A diagram drawn as an SVG image
# (ui/draw/diagrams.py; Transformer block's encoder diagram, scaled to its column as a Graphviz chart, once drew 12 pt
# labels at 4 px on a phone) is read from its data address: each text's font size (in the drawing's units) times the
# image's drawn width over its viewBox's; an SVG image not yet drawn, or without a viewBox, is reported too. A heatmap
# drawn on a canvas (ui/draw/heatmap.js) writes its labels, titles and legend as text in its component's shadow root:
# each element that holds text is measured by its computed font size.
MIN_CHART_PX = 11
SMALL_CHART_TEXT = r"""(least) => {
    const out = [];
    document.querySelectorAll('[data-testid="stMainBlockContainer"] [data-testid="stVegaLiteChart"] svg text')
        .forEach(t => {
        if (!t.textContent.trim() || t.getBoundingClientRect().width === 0) return;
        const m = t.getScreenCTM();
        const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
        if (px < least - 0.01) out.push(`${t.textContent.slice(0, 30)}: ${px.toFixed(1)} px`);
    });
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const walk = (root) => root.querySelectorAll('*').forEach(e => {  // canvas heatmaps' text, in shadow roots
        if (e.closest('.ae-hm') && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())
            && e.getBoundingClientRect().width > 0) {
            const px = parseFloat(getComputedStyle(e).fontSize);
            if (px < least - 0.01) out.push(`${e.textContent.slice(0, 30)}: ${px.toFixed(1)} px (a heatmap)`);
        }
        if (e.shadowRoot) walk(e.shadowRoot); });
    walk(main);
    const svgData = 'data:image/svg+xml;base64,';
    document.querySelectorAll('[data-testid="stMainBlockContainer"] img').forEach(img => {
        if (!img.src.startsWith(svgData)) return;
        if (!img.complete || !img.naturalWidth) { out.push('an SVG image not drawn yet'); return; }
        const doc = new DOMParser().parseFromString(
            new TextDecoder().decode(Uint8Array.from(atob(img.src.slice(svgData.length)), c => c.charCodeAt(0))),
            'image/svg+xml');
        const box = (doc.documentElement.getAttribute('viewBox') || '').split(/\s+/).map(Number);
        if (doc.querySelector('parsererror') || box.length !== 4 || !(box[2] > 0)) {
            out.push('an SVG image without a viewBox'); return; }
        const scale = img.getBoundingClientRect().width / box[2];  // CSS px a unit of the drawing
        doc.querySelectorAll('text').forEach(t => {
            const px = parseFloat(t.getAttribute('font-size')) * scale;
            if (!(px >= least - 0.01)) out.push(`${t.textContent.slice(0, 30)}: ${px.toFixed(1)} px (an SVG image)`);
        });
    });
    return out;
}"""


def small_chart_text(page) -> list[str]:
    """Every text of the main area's charts drawn under MIN_CHART_PX (an empty list is a pass), once the SVG images
    are drawn (an image still decoding is reported if it stays so for 10 s)."""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(SVG_IMAGES_DRAWN, timeout=10000, polling=100)
    return page.evaluate(SMALL_CHART_TEXT, MIN_CHART_PX)


SVG_IMAGES_DRAWN = """() => [...document.querySelectorAll('[data-testid="stMainBlockContainer"] img')]
    .filter(i => i.src.startsWith('data:image/svg+xml')).every(i => i.complete && i.naturalWidth > 0)"""
