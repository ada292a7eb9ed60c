"""Reading knowledge documents from disk (Markdown, plain text, PDF): files,
titles and MANIFEST.json.

A folder may hold a ``MANIFEST.json``: a list of ``{"file": "boiler-guide.md",
"title": "...", "property_scope": "all" | "<property code>"}``. Files it lists
get that title and scope; other files get their first Markdown heading (or
their file name) as title and the scope given on the command line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from retrieval.pdf_text import PdfTextError, pdf_text

SUPPORTED_SUFFIXES = {".md", ".markdown", ".txt", ".pdf"}
MANIFEST_NAME = "MANIFEST.json"


@dataclass(frozen=True)
class SourceFile:
    path: Path
    title: str
    property_code: str | None  # None: organization-wide (unless the caller overrides it)
    listed: bool  # scope came from a manifest


class DocumentSourceError(ValueError):
    pass


def manifest_read(folder: Path) -> dict[str, dict]:
    path = folder / MANIFEST_NAME
    if not path.exists():
        return {}
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DocumentSourceError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(entries, list):
        raise DocumentSourceError(f"{path}: expected a list of {{file, title, property_scope}} objects")
    out: dict[str, dict] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise DocumentSourceError(f"{path}: every entry needs a 'file' string, got {entry!r}")
        scope = entry.get("property_scope", "all")
        if not isinstance(scope, str) or not scope:
            raise DocumentSourceError(f"{path}: {entry['file']}: property_scope must be 'all' or a property code")
        out[entry["file"]] = entry
    return out


def title_guess(path: Path, text: str) -> str:
    for line in text.splitlines():
        match = re.match(r"^#\s+(.+?)\s*#*\s*$", line)
        if match:
            return match.group(1).strip()
        if line.strip():
            break
    return path.stem.replace("-", " ").replace("_", " ").strip().capitalize()


def source_files(paths: list[Path]) -> list[SourceFile]:
    """The documents named by ``paths`` (files, or folders read one level deep), in a stable order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES))
        elif path.is_file():
            if path.name == MANIFEST_NAME:
                continue
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise DocumentSourceError(
                    f"{path}: unsupported file type (use {', '.join(sorted(SUPPORTED_SUFFIXES))})"
                )
            files.append(path)
        else:
            raise DocumentSourceError(f"{path}: no such file or folder")
    manifests: dict[Path, dict[str, dict]] = {}
    out: list[SourceFile] = []
    seen: set[Path] = set()
    for path in files:
        resolved = path.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        folder = resolved.parent
        if folder not in manifests:
            manifests[folder] = manifest_read(folder)
        entry = manifests[folder].get(path.name)
        text = file_text(path)
        if entry:
            scope = entry.get("property_scope", "all")
            out.append(
                SourceFile(path, entry.get("title") or title_guess(path, text), None if scope == "all" else scope, True)
            )
        else:
            out.append(SourceFile(path, title_guess(path, text), None, False))
    return out


def file_text(path: Path) -> str:
    if path.suffix.lower() == ".pdf":
        try:
            return pdf_text(path.read_bytes())
        except PdfTextError as exc:
            raise DocumentSourceError(f"{path}: {exc}") from exc
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentSourceError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
