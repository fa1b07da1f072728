"""Where knowledge-base documents come from: files, directories and the shipped corpus.

Contract: a document is named by its file's base name (``docs/vpn.md`` -> ``vpn.md``), which
becomes part of its chunks' source ids, so a name may not contain ``#`` or path separators.
Files are read as UTF-8; directories are walked recursively for ``.md``, ``.markdown`` and
``.txt`` files, in sorted order. Reading is the only I/O here.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from smartctx.core.errors import InvalidInput, NotFound

TEXT_SUFFIXES = (".md", ".markdown", ".txt")


def check_name(name: str) -> str:
    """``name`` stripped, or ``InvalidInput`` if it cannot name a document."""
    clean = name.strip()
    if not clean or "#" in clean or len(clean) > 255 or any(c in clean for c in "\r\n/\\"):
        raise InvalidInput(
            f"invalid document name {name!r}: use a file name of at most 255 characters, "
            "without '#' or path separators"
        )
    return clean


def read_document(path: str | Path) -> tuple[str, str]:
    """``(name, text)`` of a UTF-8 file. ``NotFound`` if missing, ``InvalidInput`` if not text."""
    file = Path(path)
    if not file.is_file():
        raise NotFound(f"no such file: {file}")
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{file} is not UTF-8 text: {exc.reason}") from exc
    return check_name(file.name), text


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """The files named by ``paths``: files as given, directories expanded (sorted, recursive)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES)
            )
        else:
            found.append(path)
    return found


def builtin_corpus() -> dict[str, str]:
    """The shipped IT-helpdesk corpus (``smartctx/data/kb``): file name -> Markdown, by name."""
    folder = resources.files("smartctx").joinpath("data/kb")
    return {
        entry.name: entry.read_text(encoding="utf-8")
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(TEXT_SUFFIXES)
    }
