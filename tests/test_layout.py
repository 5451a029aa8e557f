"""The house's layout, checked so that it cannot drift: the tree's layers import one way (the app imports no tool,
harness/ (what tests and tools share) imports no test or benchmark, benchmarks/ import no test, deploy/ holds only
the shipped files), and docs/DESIGN.md's map of the folders names every file of the folders it describes and
nothing that is not there."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("tests", "benchmarks", "harness", "deploy", "scripts")
# each folder (or file) and the top-level packages it must not import
MUST_NOT_IMPORT = {
    "ui": TOOLS,
    "attention_core": TOOLS,
    "classpulse": TOOLS,
    "pages": TOOLS,
    "streamlit_app.py": TOOLS,
    "harness": ("tests", "benchmarks", "deploy", "scripts"),
    "benchmarks": ("tests", "deploy", "scripts"),
    "deploy": TOOLS,
}


def imported(path: Path) -> set[str]:
    """The top-level packages a Python file imports by absolute name (anywhere in it, also inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def python_files(name: str) -> list[Path]:
    where = ROOT / name
    return [where] if where.is_file() else sorted(where.rglob("*.py"))


@pytest.mark.parametrize("name", MUST_NOT_IMPORT)
def test_imports_go_one_way(name):
    wrong = {
        f"{p.relative_to(ROOT)} imports {bad}"
        for p in python_files(name)
        for bad in imported(p) & set(MUST_NOT_IMPORT[name])
    }
    assert not wrong, sorted(wrong)


def test_the_import_reader_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import os\n\ndef f():\n    from tests.x import y\n    import benchmarks.protocol\n")
    assert imported(f) == {"os", "tests", "benchmarks"}


def test_deploy_holds_no_python():
    """deploy/ is what a host runs (Dockerfile, compose, nginx, systemd, Kubernetes); harnesses live in harness/."""
    assert not list((ROOT / "deploy").rglob("*.py"))


# ---- docs/DESIGN.md's map of the folders

DESIGN = ROOT / "docs" / "DESIGN.md"
NOT_LISTED = ("__init__.py", "__pycache__", "*.pyc")  # files a map need not name (and hidden ones, and git's ignored)


def design_map(text: str) -> dict[Path, set[str]]:
    """The folders the map describes (the code block under "## The layers"), each with the names listed in it: a
    line's names are what comes before its first run of two spaces, separated by commas; a line indented two
    spaces more than a folder's line lists what is in that folder; a line indented deeper only goes on
    describing. Names may be globs (``*_text.py``)."""
    block = text.split("## The layers", 1)[1].split("```", 2)[1]
    listed: dict[Path, set[str]] = {ROOT: set()}
    open_folders: list[tuple[int, Path]] = []  # (indent of its line, folder)
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while open_folders and open_folders[-1][0] >= indent:
            open_folders.pop()
        if indent != (open_folders[-1][0] + 2 if open_folders else 0):
            continue  # a description that goes on from the line above
        base = open_folders[-1][1] if open_folders else ROOT
        names = [n.strip() for n in re.split(r"\s{2,}", line.strip(), maxsplit=1)[0].split(",") if n.strip()]
        listed.setdefault(base, set()).update(names)
        if names and names[-1].endswith("/"):
            open_folders.append((indent, base / names[-1].rstrip("/")))
    return listed


def ignored() -> list[str]:
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return [ln.strip().strip("/") for ln in lines if ln.strip() and not ln.startswith("#")]


def files_of(folder: Path) -> set[str]:
    """What a map of ``folder`` must name: its files and folders (folders as ``name/``), hidden and ignored aside."""
    skip = (*NOT_LISTED, *ignored())
    return {
        p.name + ("/" if p.is_dir() else "")
        for p in folder.iterdir()
        if not p.name.startswith(".") and not any(fnmatch.fnmatch(p.name, s) for s in skip)
    }


def map_problems(listed: dict[Path, set[str]]) -> list[str]:
    problems = []
    for folder, names in listed.items():
        where = folder.relative_to(ROOT).as_posix() + "/" if folder != ROOT else "the top level"
        for name in sorted(names):
            if not list(folder.glob(name.rstrip("/"))):
                problems.append(f"{where}: the map names {name}, which is not there")
        for name in sorted(files_of(folder)):
            if not any(fnmatch.fnmatch(name, n) or fnmatch.fnmatch(name.rstrip("/"), n.rstrip("/")) for n in names):
                problems.append(f"{where}: {name} is missing from the map")
    return problems


def test_the_design_map_names_every_file_of_the_folders_it_describes():
    listed = design_map(DESIGN.read_text(encoding="utf-8"))
    assert ROOT / "ui" in listed, "the map no longer describes ui/"
    assert map_problems(listed) == []


def test_the_map_reader_finds_what_is_missing_and_what_is_not_there():
    text = (
        "## The layers\n\n```\nui/   plumbing:\n  text.py, nothing.py  the formatter\n           more words\n"
        "  skeleton/   the skeleton\n    page.py   the page\n```\n"
    )
    listed = design_map(text)
    assert listed[ROOT] == {"ui/"} and listed[ROOT / "ui"] == {"text.py", "nothing.py", "skeleton/"}
    assert listed[ROOT / "ui" / "skeleton"] == {"page.py"}
    problems = map_problems({ROOT / "ui": listed[ROOT / "ui"], ROOT / "ui" / "skeleton": {"page.py"}})
    assert "ui/: the map names nothing.py, which is not there" in problems
    assert (
        "ui/: compute.py is missing from the map" in problems and "ui/: text.py is missing from the map" not in problems
    )
    assert "ui/skeleton/: registry.py is missing from the map" in problems
    assert not any(p.startswith("ui/skeleton/: page.py") for p in problems)


# ---- ui/ in rooms


def test_a_lesson_folder_is_named_as_its_page():
    """ui/lessons/<page>/ holds what serves one page: the folder is the page's file name in lower case (home: the
    home page), so a newcomer finds a page's own modules in one guess."""
    pages = {p.stem.lower().replace("-", "_") for p in (ROOT / "pages").glob("*.py")} | {"home"}
    folders = {p.name for p in (ROOT / "ui" / "lessons").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= pages, sorted(folders - pages)


def test_every_room_says_in_one_line_what_lives_there():
    """Every package under ui/ has an __init__.py with a docstring; a room that is only a folder (its __init__
    holds nothing else) says what lives there in one line."""
    rooms = [p for p in (ROOT / "ui").rglob("*") if p.is_dir() and p.name != "__pycache__"]
    assert rooms
    for room in rooms:
        init = room / "__init__.py"
        assert init.is_file(), f"{room.relative_to(ROOT)} has no __init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree)
        assert doc, f"{init.relative_to(ROOT)} has no docstring"
        assert len(tree.body) > 1 or "\n" not in doc.strip(), f"{init.relative_to(ROOT)}: a one-line docstring"
