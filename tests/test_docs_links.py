"""Every relative link in README.md and docs/ leads somewhere, and the README stays short.

The README holds what a user needs first and points into docs/ (the manual) for the rest; a
page that moves or a heading that is renamed must not leave a link to nothing behind, on
GitHub or in the mkdocs site.

What is checked
  * Links are inline links and images (``[text](target)``, ``![alt](target)``), reference
    definitions (``[name]: target``) and HTML ``href``/``src`` attributes, outside fenced code
    blocks and inline code spans.
  * A target with a scheme (``https:``, ``mailto:``) is not checked: nothing is fetched.
  * Any other target is a path relative to the file that holds the link (percent-escapes
    decoded): it must name a file or folder inside the repository.
  * A ``#anchor`` (alone: the same file; after a path: that file) on a Markdown file must be
    the anchor GitHub gives one of its headings: the heading's text without markup, lower
    case, every character that is not a letter, digit, ``_``, ``-`` or space removed, each
    space a ``-``; the second heading with the same anchor gets ``-1``, the third ``-2``.
    Headings are ATX headings (``## ...``) outside code blocks; the docs use no others.
  * README.md is under 250 lines.

A failure lists ``file:line: target: the problem`` for every link at once.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250

_FENCE = re.compile(r"^\s*(```+|~~~+)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^<>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
)
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(\S+)")
_HTML_ATTRIBUTE = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']*)["']""")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def doc_files(root: Path = ROOT) -> list[Path]:
    """The files whose links are checked: README.md and every Markdown page under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _prose_lines(text: str, *, blank_code: bool = True) -> Iterator[tuple[int, str]]:
    """(line number, line) of the lines outside fenced code blocks, inline code blanked out
    unless ``blank_code`` is false (a heading's anchor keeps the text of its code)."""
    fence = ""
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
            continue
        if match:
            fence = match.group(1)
            continue
        yield (
            number,
            _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line) if blank_code else line,
        )


def links(text: str) -> Iterator[tuple[int, str]]:
    """(line number, target) of every link in a Markdown text."""
    for number, line in _prose_lines(text):
        for match in _INLINE_LINK.finditer(line):
            yield number, match.group(1).strip("<>")
        reference = _REFERENCE.match(line)
        if reference:
            yield number, reference.group(1).strip("<>")
        for match in _HTML_ATTRIBUTE.finditer(line):
            yield number, match.group(1)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading of this text (before making duplicates unique)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)  # _emphasis_, not snake_case
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a Markdown text, duplicates numbered as GitHub numbers them."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _prose_lines(text, blank_code=False):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def problems(files: list[Path], root: Path = ROOT) -> list[str]:
    """``file:line: target: problem`` for every link of ``files`` that leads nowhere."""
    cache: dict[Path, set[str]] = {}

    def anchors_of(path: Path) -> set[str]:
        if path not in cache:
            cache[path] = anchors(path.read_text(encoding="utf-8"))
        return cache[path]

    found = []
    for file in files:
        where = file.relative_to(root).as_posix()
        for number, target in links(file.read_text(encoding="utf-8")):
            if not target or _SCHEME.match(target):
                continue
            path_part, _, anchor = target.partition("#")
            path = (file.parent / unquote(path_part)).resolve() if path_part else file
            if not path.is_relative_to(root.resolve()):
                found.append(f"{where}:{number}: {target}: outside the repository")
            elif not path.exists():
                found.append(f"{where}:{number}: {target}: no such file")
            elif anchor and path.suffix == ".md" and unquote(anchor) not in anchors_of(path):
                found.append(f"{where}:{number}: {target}: {path.name} has no heading #{anchor}")
    return found


def test_every_relative_link_leads_to_a_file_and_heading() -> None:
    files = doc_files()
    assert len(files) > 10 and sum(1 for f in files for _ in links(f.read_text())) > 50
    found = problems(files)
    assert not found, "\n".join(found)


def test_the_readme_is_short() -> None:
    lines = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines < README_MAX_LINES, (
        f"README.md has {lines} lines (under {README_MAX_LINES}): move the details to docs/"
    )


def test_docs_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    listed = {(ROOT / "docs" / target).resolve() for _, target in links(index)}
    pages = {page.resolve() for page in (ROOT / "docs").rglob("*.md")} - {
        (ROOT / "docs" / "index.md").resolve()
    }
    missing = sorted(page.name for page in pages - listed)
    assert not missing, f"docs/index.md does not list {missing}"


def test_the_checker_finds_broken_links(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "pic.png").write_bytes(b"")
    (tmp_path / "docs" / "a.md").write_text(
        "# A page\n\n## Run `toolbench run` --here: what's new?\n\n## Same\n\n## Same\n\n"
        "```bash\n# Not a heading\n[x](missing-in-code.md)\n```\n",
        encoding="utf-8",
    )
    (tmp_path / "README.md").write_text(
        "# Title\n\n"
        "[ok](docs/a.md) [ok](docs/a.md#run-toolbench-run---here-whats-new) ![ok](docs/pic.png)\n"
        "[ok](docs/a.md#same-1) [ok](#title) [web](https://example.com/x.md#nope)\n"
        "`[in code](nowhere.md)` [dir](docs/)\n"
        "[gone](docs/b.md) [bad](docs/a.md#not-a-heading) [self](#nope)\n"
        '[twice](docs/a.md#same-2) <img src="docs/none.png"> [up](../outside.md)\n'
        "[ref]: docs/missing.md\n",
        encoding="utf-8",
    )
    found = problems(doc_files(tmp_path), root=tmp_path)
    assert found == [
        "README.md:6: docs/b.md: no such file",
        "README.md:6: docs/a.md#not-a-heading: a.md has no heading #not-a-heading",
        "README.md:6: #nope: README.md has no heading #nope",
        "README.md:7: docs/a.md#same-2: a.md has no heading #same-2",
        "README.md:7: ../outside.md: outside the repository",
        "README.md:7: docs/none.png: no such file",
        "README.md:8: docs/missing.md: no such file",
    ]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Quickstart", "quickstart"),
        (
            "Serving one sample's world: `toolbench serve TASK --mcp`",
            "serving-one-samples-world-toolbench-serve-task---mcp",
        ),
        ("Where a google_sheets program's time goes", "where-a-google_sheets-programs-time-goes"),
        ("Everything, with torch's CPU build", "everything-with-torchs-cpu-build"),
        ("The test suite: `scripts/test`", "the-test-suite-scriptstest"),
        ("A [linked](x.md) **bold** _word_", "a-linked-bold-word"),
    ],
)
def test_github_anchors(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_mkdocs_builds_strict(tmp_path: Path) -> None:
    """The manual also builds as a site (mkdocs.yml, nav over docs/) without a warning."""
    pytest.importorskip("mkdocs")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "index.html").is_file() and (site / "tasks" / "index.html").is_file()
    shutil.rmtree(site)
