"""Document URIs: the file a `file:` URI names, and the workspace folder that holds a document."""

from __future__ import annotations

from urllib.parse import unquote, urlparse


def uri_path(uri: str) -> str | None:
    """The file-system path of a file: URI (None for other schemes)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path)


def folder_of(folders: list[str], uri: str | None) -> str | None:
    """The innermost workspace folder (a URI) that holds uri."""
    if not uri:
        return None
    best: str | None = None
    for folder in folders:
        prefix = folder.rstrip("/") + "/"
        if (uri.startswith(prefix) or uri == folder) and (best is None or len(folder) > len(best)):
            best = folder
    return best
