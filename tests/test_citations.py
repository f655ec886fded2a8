"""Texts readers see cite public references (the MySQL and MariaDB manuals, the kernel's documentation,
man pages, published articles), never the project's private notes: no file of the product mentions a
"seed 0NN" case write-up or FINDINGS.md. Background a comment needs is in docs/background.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("analyzer", "parsers", "web", "templates", "static/js")
PRIVATE = re.compile(r"(?i:seeds? 0\d\d)|FINDINGS\.md")


def _product_files() -> list[Path]:
    return sorted(
        p
        for top in PRODUCT
        for p in (ROOT / top).rglob("*")
        if p.is_file()
        and p.suffix in {".py", ".html", ".js", ".txt", ".md", ".css"}
        and "vendor" not in p.parts
    )


def test_no_product_file_cites_a_private_note() -> None:
    files = _product_files()
    assert len(files) > 100
    cited = {
        f"{p.relative_to(ROOT)}:{n}"
        for p in files
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if PRIVATE.search(line)
    }
    assert not cited, sorted(cited)
