"""The manual (docs/, mkdocs.yml), the front page (README.md) and CHANGELOG.md hold together:
the manual builds with no warning, no link points at a page or an anchor that is not there,
every section of the old long README has a home, and every environment variable is in the
configuration table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# The headings of the README before it became a front page (712 lines), and where each
# section lives now: (file, heading there). The README's bold sub-sections of "How the numbers
# are made" are listed too.
README_SECTIONS: dict[str, tuple[str, str]] = {
    "What is where": ("docs/index.md", "What is where"),
    "Data": ("docs/prices.md", "The catalog and price data"),
    "Commands": ("docs/commands.md", "Commands"),
    "Reports": ("docs/reports.md", "Formats"),
    "How the numbers are made": ("docs/simulator.md", "How the numbers are made"),
    "Simulator": ("docs/simulator.md", "Method"),
    "Simulator accuracy and bands": ("docs/simulator.md", "Accuracy"),
    "Simulator accuracy history": ("CHANGELOG.md", "Simulator accuracy"),
    "Two stack effects the runs record": ("docs/simulator.md",
                                          "Two stack effects the runs record"),
    "Planner": ("docs/planning.md", "How a plan is made"),
    "Energy and carbon": ("docs/reading-a-plan.md", "Energy and carbon"),
    "Purchase mix": ("docs/purchase-mix.md", "What to buy"),
    "Capacity with queues": ("docs/capacity.md", "How the replay works"),
    "Redis, PostgreSQL and the worker": ("docs/operations.md",
                                         "Redis, PostgreSQL and the worker"),
    "Deploying": ("docs/operations.md", "Deploying"),
    "Tests and benchmarks": ("docs/development.md", "Running the tests"),
    "Benchmarks": ("docs/development.md", "Benchmarks"),
    "API": ("docs/api.md", "Authenticating"),
    "Limits": ("docs/limits.md", "Uploads and storage"),
}

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _headings(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [match.group(2) for match in HEADING.finditer(text)]


def _anchors(path: Path) -> set[str]:
    return {slugify(heading, "-") for heading in _headings(path)}


def test_the_manual_builds_with_no_warning(tmp_path: Path) -> None:
    """`mkdocs build --strict` (what `make docs` runs) fails on a broken link, an anchor that no
    page defines, a page missing from the nav or a nav entry without its page."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "simulator.html").is_file()


@pytest.mark.parametrize("old_heading", sorted(README_SECTIONS))
def test_every_section_of_the_old_readme_has_a_home(old_heading: str) -> None:
    file, heading = README_SECTIONS[old_heading]
    assert heading in _headings(ROOT / file), f"{old_heading!r}: no heading {heading!r} in {file}"


@pytest.mark.parametrize("name", ["README.md", "CHANGELOG.md"])
def test_links_outside_the_manual_point_at_pages_and_anchors_that_exist(name: str) -> None:
    """README.md and CHANGELOG.md are not built by MkDocs: their links are checked here."""
    source = ROOT / name
    broken = []
    for target in LINK.findall(FENCE.sub("", source.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (source.parent / path).resolve() if path else source
        if not linked.exists():
            broken.append(f"{target}: no file {path}")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading with anchor #{anchor} in {path or name}")
    assert not broken, "\n".join(broken)


def test_the_front_page_is_short_and_points_to_the_manual() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 160
    assert "make run" in readme and "make test" in readme
    assert "docs/index.md" in readme
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme):
        assert (ROOT / image).is_file(), f"README shows {image}, which is not in the repository"


def _variables_read() -> set[str]:
    settings = (ROOT / "planner" / "settings.py").read_text(encoding="utf-8")
    names = set(re.findall(r"env_(?:str|int|bool|list|secret)\(\s*\"([A-Z0-9_]+)\"", settings))
    names |= {f"{name}_FILE" for name in
              re.findall(r"env_secret\(\s*\"([A-Z0-9_]+)\"", settings)}
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    names |= set(re.findall(r"^#\s*([A-Z][A-Z0-9_]+)=", example, re.MULTILINE))
    return names


def test_every_environment_variable_is_in_the_configuration_table() -> None:
    table = (DOCS / "configuration.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", table, re.MULTILINE))
    read = _variables_read()
    assert {"SECRET_KEY", "SECRET_KEY_FILE", "DATABASE_URL", "REDIS_URL"} <= read
    assert not read - documented, f"missing from docs/configuration.md: {sorted(read - documented)}"
