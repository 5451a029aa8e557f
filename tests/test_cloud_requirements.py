"""requirements.txt as Streamlit Community Cloud reads it: a fork deploys a CPU-only torch with no edits.

Community Cloud installs requirements.txt with uv (pip if uv fails) on Linux x86_64, at the Python version chosen
under Advanced settings. The torch lines must give exactly one torch for every environment: PyTorch's CPU wheel of the
pinned version, for that Python, where the README tells a teacher to deploy (3.12, 3.13), and the index's torch of the
same version everywhere else (this project's machines, Python 3.11, take the CPU wheel on disk). No option line may
send pip or uv to another index for every package.
"""

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import parse_wheel_filename

from tests.apptest_util import ROOT

LINES = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
REQS = [Requirement(line) for line in LINES if line and not line.startswith(("#", "-"))]
TORCH = [r for r in REQS if r.name == "torch"]


def _env(system: str, machine: str, python: str) -> dict:
    return default_environment() | {"sys_platform": system, "platform_machine": machine, "python_version": python}


@pytest.mark.parametrize(
    "system, machine, python, wheel",
    [
        ("linux", "x86_64", "3.12", "cp312"),  # Community Cloud, as the README says to deploy
        ("linux", "x86_64", "3.13", "cp313"),
        ("linux", "x86_64", "3.11", None),  # this project's machines: the index (the CPU wheel on disk)
        ("linux", "aarch64", "3.12", None),
        ("darwin", "arm64", "3.12", None),
        ("win32", "AMD64", "3.13", None),
    ],
)
def test_exactly_one_torch_for_every_environment_and_the_cpu_wheel_on_community_cloud(system, machine, python, wheel):
    chosen = [r for r in TORCH if r.marker is None or r.marker.evaluate(_env(system, machine, python))]
    assert len(chosen) == 1, chosen
    (req,) = chosen
    plain = next(r for r in TORCH if r.url is None)
    if wheel is None:
        assert req is plain and str(req.specifier) == "==2.13.0"
        return
    assert req.url.startswith("https://download.pytorch.org/whl/cpu/")
    name, version, _, tags = parse_wheel_filename(req.url.rsplit("/", 1)[1].replace("%2B", "+"))
    assert name == "torch" and str(version) == f"{plain.specifier}".lstrip("=") + "+cpu"
    assert {t.interpreter for t in tags} == {wheel} and {t.platform for t in tags} == {"manylinux_2_28_x86_64"}


def test_no_option_line_sends_every_package_to_another_index():
    options = [line for line in LINES if line.startswith("-")]
    assert not [o for o in options if o.startswith(("--extra-index-url", "--index-url", "-i", "--find-links", "-f"))]
