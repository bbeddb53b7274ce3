"""The user guide's index: docs/README.md links every page of docs/, and the project's README names each one, so no
page is found only by listing the folder (issue 47: cpu_target.md and kernel_functions.md were missing)."""

import re

import doc_blocks

PAGES = sorted(p.name for p in (doc_blocks.ROOT / "docs").glob("*.md") if p.name != "README.md")


def test_docs_readme_lists_every_page():
    index = (doc_blocks.ROOT / "docs" / "README.md").read_text()
    linked = re.findall(r"^- \[([\w.-]+\.md)\]\(\1\) — \S", index, re.MULTILINE)
    missing = [p for p in PAGES if p not in linked]
    assert not missing, f"docs/README.md does not list {missing}: add '- [page.md](page.md) — what it covers'"
    unknown = [p for p in linked if p not in PAGES]
    assert not unknown, f"docs/README.md lists pages that do not exist: {unknown}"


def test_readme_names_every_page():
    readme = (doc_blocks.ROOT / "README.md").read_text()
    missing = [p for p in PAGES if f"docs/{p}" not in readme]
    assert not missing, f"README.md names no docs/{missing}"


def test_pages_are_found():
    assert {"cpu_target.md", "kernel_functions.md", "runtime.md"} <= set(PAGES)
