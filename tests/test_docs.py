"""What the README says about measurements is what docs/BENCHMARKS.md measured: the headline figures live in
docs/BENCHMARKS.md (the README's table is a copy `python -m benchmarks.headlines` writes) and are a summary of its
long tables, never the only copy, so a re-run updates one file and this test names every headline it left behind."""

import re

import pytest

from benchmarks.headlines import END, START, headline_table, with_headlines
from tests.apptest_util import ROOT

NUMBER = r"\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(rf"({NUMBER})(?:\s?[-–]\s?({NUMBER}))?")  # 0.18 or a range 0.18-0.62


def headline_rows(text: str) -> list[tuple[str, str]]:
    """(what, figure) of each row of the table of headline figures in ``text`` (docs/BENCHMARKS.md or the README)."""
    rows = []
    for line in headline_table(text).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and cells[0] != "what":
            rows.append((cells[0], cells[1]))
    return rows


def numbers_in(text: str) -> set[str]:
    return {n.rstrip(",") for n in re.findall(NUMBER, text)}


def unmeasured(benchmarks: str) -> list[str]:
    """The headline figures of ``benchmarks`` that its long tables (the text outside the headline table) do not
    state (a range: either end), each named with its row."""
    measured = numbers_in(benchmarks.replace(headline_table(benchmarks), ""))
    missing = []
    for what, figure in headline_rows(benchmarks):
        for m in FIGURE.finditer(figure):
            ends = [e.rstrip(",") for e in m.groups() if e]
            missing += [f"{what}: {e} (in {figure!r})" for e in ends if e not in measured]
    return missing


def test_every_headline_figure_is_measured_in_docs_benchmarks():
    benchmarks = (ROOT / "docs" / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert len(headline_rows(benchmarks)) >= 5, "docs/BENCHMARKS.md's table of headline figures was not found"
    missing = unmeasured(benchmarks)
    assert not missing, "headline figures that docs/BENCHMARKS.md's tables do not state:\n" + "\n".join(missing)


def test_the_readme_shows_the_headline_figures_of_docs_benchmarks():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    benchmarks = (ROOT / "docs" / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert headline_table(readme) == headline_table(benchmarks), (
        "README.md's headline figures differ from docs/BENCHMARKS.md's: run `python -m benchmarks.headlines`"
    )
    assert with_headlines(readme, benchmarks) == readme


def block(table: str, around: str = "") -> str:
    return f"# B\n\n{START}\n| what | figure | script |\n|---|---|---|\n{table}\n{END}\n\n{around}"


def test_a_headline_figure_that_was_not_measured_is_named():
    headline = "| a key -> maps drawn | 2-8 ms, 1,107 MB | x |\n| a drag | 26 ms | x |"
    assert unmeasured(block(headline, "took 2 to 8 ms, 26 ms, 1107 MB")) == [
        "a key -> maps drawn: 1,107 (in '2-8 ms, 1,107 MB')"
    ]
    assert unmeasured(block(headline, "| 8 | 2 | 1,107 | 26 |")) == []
    assert unmeasured(block(headline)) != [], "the headline table itself does not count as a measurement"


def test_copying_the_headlines_replaces_the_readme_table_only():
    readme = block("| old | 1 ms | x |", "## Memory\n")
    new = with_headlines(readme, block("| new | 2 ms | y |"))
    assert "| new | 2 ms | y |" in new and "old" not in new and new.endswith("## Memory\n")
    with pytest.raises(ValueError, match="markers"):
        with_headlines("# no markers\n", block("| new | 2 ms | y |"))


README_MAX_LINES = 300


def test_the_readme_stays_short():
    """The README is setup, what each page teaches, the classroom and where the rest lives; detail goes to docs/
    (DESIGN.md, BENCHMARKS.md) and deploy/README.md."""
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines, more than {README_MAX_LINES}: move detail to docs/"
