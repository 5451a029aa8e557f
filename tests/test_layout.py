"""The tree's layers import one way: the app imports no tool, harness/ (what tests and tools share) imports no
test or benchmark, benchmarks/ import no test, and deploy/ holds only the shipped files."""

from __future__ import annotations

import ast
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
