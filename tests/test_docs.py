"""What the README says about measurements is what docs/BENCHMARKS.md measured: the headline figures are a summary,
never the only copy, so a re-run updates one file and this test names every headline the re-run left behind."""

import re

from tests.apptest_util import ROOT

NUMBER = r"\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(rf"({NUMBER})(?:\s?[-–]\s?({NUMBER}))?")  # 0.18 or a range 0.18-0.62


def headline_rows(readme: str) -> list[tuple[str, str]]:
    """(what, figure) of each row of the README's table of headline figures."""
    start = readme.index("## Speed and capacity: the headline figures")
    section = readme[start : readme.index("\n## ", start + 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and cells[0] != "what":
            rows.append((cells[0], cells[1]))
    return rows


def numbers_in(text: str) -> set[str]:
    return {n.rstrip(",") for n in re.findall(NUMBER, text)}


def unmeasured(readme: str, benchmarks: str) -> list[str]:
    """The README's headline figures that ``benchmarks`` does not state (a range: either end), each named with its
    row."""
    measured = numbers_in(benchmarks)
    missing = []
    for what, figure in headline_rows(readme):
        for m in FIGURE.finditer(figure):
            ends = [e.rstrip(",") for e in m.groups() if e]
            missing += [f"{what}: {e} (in {figure!r})" for e in ends if e not in measured]
    return missing


def test_every_headline_figure_is_measured_in_docs_benchmarks():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(headline_rows(readme)) >= 5, "README.md's table of headline figures was not found"
    missing = unmeasured(readme, (ROOT / "docs" / "BENCHMARKS.md").read_text(encoding="utf-8"))
    assert not missing, "README.md's headline figures that docs/BENCHMARKS.md does not state:\n" + "\n".join(missing)


def test_a_headline_figure_that_was_not_measured_is_named():
    readme = (
        "## Speed and capacity: the headline figures\n\n| what | figure | script |\n|---|---|---|\n"
        "| a key -> maps drawn | 2-8 ms, 1,107 MB | x |\n| a drag | 26 ms | x |\n\n## Next\n"
    )
    assert unmeasured(readme, "took 2 to 8 ms, 26 ms, 1107 MB") == [
        "a key -> maps drawn: 1,107 (in '2-8 ms, 1,107 MB')"
    ]
    assert unmeasured(readme, "| 8 | 2 | 1,107 | 26 |") == []
