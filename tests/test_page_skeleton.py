"""The page skeleton (ui/skeleton/page.py) and the registry (ui/skeleton/registry.py): every page is listed, in reading order, and
ends the same way: check questions computed for the setting, the next page, "see also" links, the code that ran,
and a share box that carries the page's settings."""

from pathlib import Path

import pytest

from tests.apptest_util import PAGES, ROOT, app, run_ok
from ui.skeleton import registry


def test_the_pages_on_disk_are_the_pages_in_the_registry(tmp_path):
    assert registry.disagreements() == []
    (tmp_path / "pages").mkdir()
    for p in registry.PAGES[1:]:
        (tmp_path / p.path).write_text("")
    (tmp_path / "pages" / "Lookup.py").write_text("")
    problems = registry.disagreements(tmp_path)
    assert problems == [
        "pages/Lookup.py has no line in ui/skeleton/registry.PAGES: add PageInfo('pages/Lookup.py', label, icon, teaches)",
        f"ui/skeleton/registry.PAGES lists {registry.PAGES[0].path}, which is not a file in pages/",
    ]
    twice = (*registry.PAGES, registry.PAGES[0])
    assert f"ui/skeleton/registry.PAGES lists {registry.PAGES[0].path} twice" in registry.disagreements(ROOT, twice)


def test_reading_order_starts_from_zero_and_every_page_has_a_next_but_the_last():
    assert registry.PAGES[0].path == "pages/Step_by_step.py"  # the page that teaches from zero comes first
    assert registry.next_page(registry.HOME) == registry.PAGES[0]
    for a, b in zip(registry.PAGES, registry.PAGES[1:]):
        assert registry.next_page(a.path) == b
    assert registry.next_page(registry.PAGES[-1].path) is None
    assert all(p.icon.startswith(":material/") for p in (registry.HOME_INFO, *registry.PAGES))  # no emoji boxes


def test_the_readme_page_list_is_the_registry():
    """The README's page list is written from ui/skeleton/registry.PAGES (python -m ui.skeleton.registry): every page in reading
    order with what it teaches, the pages that ask a question to predict marked, and nothing else."""
    readme = (ROOT / "README.md").read_text()
    assert registry.with_readme_pages(readme) == readme, (
        "README.md's page list differs from ui/skeleton/registry.PAGES: run `python -m ui.skeleton.registry` to write it"
    )
    listed = readme.split(registry.README_START)[1].split(registry.README_END)[0]
    assert [p.label for p in registry.PAGES if f"**{p.label}** {registry.PREDICTS_MARK}" in listed] == [
        p.label for p in registry.predicting()
    ]
    assert registry.PREDICTS_MARK.replace(" ", "") in readme.replace("\n  ", " ").replace(" ", "")  # the bullet


def test_a_readme_without_the_markers_says_which_it_lacks():
    with pytest.raises(ValueError, match="markers"):
        registry.with_readme_pages("# no page list here")


@pytest.mark.parametrize("path", ["streamlit_app.py", *PAGES])
def test_every_page_ends_the_same_way(path):
    at = run_ok(app(path, timeout=120))
    main_links = [(el.proto.page_script_hash, el.proto.label) for el in at.main.get("page_link")]
    nxt = registry.next_page(path)
    labels = [label for _, label in main_links]
    if nxt is not None:
        assert nxt.label in labels, f"{path}: no link to the next page {nxt.label}"
        assert nxt.teaches in [c.value for c in at.main.caption], (
            f"{path}: the next page's link does not say what it teaches"
        )
    also = [label for _, label in main_links if labels.count(label) > 1]
    assert not also, f"{path}: links to the same page twice: {also}"
    checks = [e for e in at.subheader if e.value == "Check yourself"]
    assert len(checks) == 1, f"{path}: {len(checks)} 'Check yourself' headings"
    questions = [e for e in at.expander if e.label[:1].isdigit()]
    answered = [e for e in questions if (e.markdown and e.markdown[0].value.strip()) or e.radio]  # or a choice to pick
    assert questions and answered == questions, path
    if path != "streamlit_app.py":
        assert any(e.label == "Show the code that ran" for e in at.expander), path
    assert any("Share this experiment" in e.label for e in at.sidebar.expander), f"{path}: no share box"


@pytest.mark.parametrize(
    "path", ["streamlit_app.py", "pages/Playground.py", "pages/Compare.py", "pages/Real_model.py", "pages/Train.py"]
)
def test_closed_the_share_box_and_the_code_draw_nothing_and_opened_they_draw_the_link_and_the_source(path):
    """The share box and "Show the code that ran" keep their state and draw their st.code only while open: closed
    (as a page opens), a page loads no code highlighter and a body rerun sends no link. Opened, the box shows the
    page's link with every setting in the URL, and the expander the source of each function that ran."""
    from urllib.parse import parse_qsl

    at = run_ok(app(path, timeout=120, opened=False))
    (share,) = [e for e in at.sidebar.expander if e.label == "Share this experiment"]
    if path != "streamlit_app.py":
        (code,) = [e for e in at.expander if e.label == "Show the code that ran"]
        assert not code.code, f"{path}: closed, yet the source is drawn"
    assert not share.code and not share.caption, f"{path}: closed, yet its link is drawn"
    assert [b.label for b in share.button] == ["Start a class"], "the box's widget is drawn by the full run"
    at.session_state["share_open"] = at.session_state["code_open"] = True
    run_ok(at)
    (share,) = [e for e in at.sidebar.expander if e.label == "Share this experiment"]
    (link,) = [c.value for c in share.code]
    assert dict(parse_qsl(link.split("?", 1)[1])) == dict(at.query_params)
    assert f"({len(link)} characters)" in share.caption[0].value
    if path != "streamlit_app.py":
        (code,) = [e for e in at.expander if e.label == "Show the code that ran"]
        assert code.code and all("def " in c.value for c in code.code), path


def test_a_see_also_link_must_name_a_registered_page():
    """Page(see_also=...) looks each path up when the page starts: a wrong one fails at once, naming the pages."""
    with pytest.raises(LookupError, match="not in ui/skeleton/registry.PAGES"):
        registry.info("pages/Nowhere.py")


def test_a_page_file_uses_the_skeleton():
    """A page declares its lesson and hands the rest to ui.skeleton.page.Page: no page draws its own ending or URL, and its
    tables go through ui.draw.tables.show_table (text in the projector view)."""
    for path in PAGES:
        text = (ROOT / path).read_text()
        assert "page = Page(" in text and "page.run(" in text, f"{path} does not use the page skeleton"
        for banned in ("set_page_config", "collect_garbage", "st.page_link", "share_frame", "share_text", "write_url("):
            assert banned not in text, f"{path} calls {banned} itself; ui.skeleton.page.Page does it for every page"
        assert ".dataframe(" not in text, f"{path} draws a table with st.dataframe; use ui.draw.tables.show_table"
    assert Path(ROOT / "ui" / "skeleton" / "page.py").read_text().count("collect_garbage()") >= 1


# pages and lesson modules that still touch st.query_params themselves, and why (every other link value is a
# ui.skeleton.page_params.PageParam: read, refused with a notice, kept and written back in one place)
OWN_LINK_READS: dict[str, str] = {}  # page files that may read st.query_params themselves, and why: none


def test_pages_read_the_link_through_page_params_and_draw_vega_one_way():
    """A page's link values are PageParams (no page or lesson module reads st.query_params by hand, but those
    OWN_LINK_READS names), and every Vega-Lite chart is drawn by ui.draw.vega.draw (no st.altair_chart or
    st.vega_lite_chart of its own)."""
    files = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui" / "lessons").rglob("*.py")])
    reads = {f.relative_to(ROOT).as_posix() for f in files if "st.query_params" in f.read_text()}
    assert reads == set(OWN_LINK_READS), "read the link through a PageParam (ui/skeleton/page_params.py)"
    own_vega = ("altair_chart(", "vega_lite_chart(")
    drawn = [f.relative_to(ROOT).as_posix() for f in files if any(call in f.read_text() for call in own_vega)]
    assert drawn == [], f"{drawn} draw Vega-Lite themselves; use ui.draw.vega.draw"


PAGE_FUNCTION_LINES = 70  # a page's draw is an outline of named sections of at most about 60 lines (docs/NEW_PAGE.md)


def test_every_page_reads_as_an_outline():
    """No function of a page file is longer than PAGE_FUNCTION_LINES: a page's drawing is split into named sections
    (as pages/Efficient_attention.py and pages/Playground.py are), not one long function."""
    import ast

    from ui.skeleton.registry import PAGES as REGISTERED
    from ui.skeleton.registry import ROOT

    long = []
    for info in REGISTERED:
        tree = ast.parse((ROOT / info.path).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > PAGE_FUNCTION_LINES:
                    long.append(f"{info.path}: {node.name} has {lines} lines")
    assert long == [], long
