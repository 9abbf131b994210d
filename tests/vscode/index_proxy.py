"""An HTTP proxy on 127.0.0.1 that serves a package index for a host name nothing resolves.

The universal .vsix installs its dependencies from the package index, through VS Code's
`http.proxy`. The tests point pip at http://tokenline-index.test/simple (PIP_INDEX_URL), a name
no resolver knows, and set `http.proxy` to this proxy: pip reaches that index only if the
extension passes the proxy on. The proxy answers plain-HTTP requests in absolute form
(`GET http://tokenline-index.test/simple/regex/`) from a folder of wheels (the linux-x64 .vsix's
bundled/deps), as a PEP 503 simple index, and records each request.
"""

from __future__ import annotations

import html
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "tokenline-index.test"
INDEX_URL = f"http://{HOST}/simple"


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class IndexProxy:
    """`with IndexProxy(folder) as proxy:` serves on proxy.url; proxy.requests lists the paths."""

    def __init__(self, wheels: Path) -> None:
        self.wheels = wheels
        self.requests: list[str] = []
        by_project: dict[str, list[Path]] = {}
        for f in sorted(wheels.glob("*.whl")):
            by_project.setdefault(normalize(f.name.split("-", 1)[0]), []).append(f)
        self.projects = by_project
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                proxy.requests.append(self.path)
                if url.hostname != HOST:
                    self.send_error(502, f"this proxy serves only {HOST}")
                    return
                parts = [p for p in url.path.split("/") if p]
                if len(parts) == 2 and parts[0] == "simple":
                    self._page(proxy.projects.get(normalize(parts[1])))
                elif len(parts) == 2 and parts[0] == "files":
                    self._file(proxy.wheels / parts[1])
                else:
                    self.send_error(404)

            def _page(self, files: list[Path] | None) -> None:
                if not files:
                    self.send_error(404)
                    return
                links = "".join(
                    f'<a href="http://{HOST}/files/{html.escape(f.name)}">{html.escape(f.name)}</a>'
                    for f in files
                )
                page = f"<!DOCTYPE html><html><body>{links}</body></html>"
                self._send(page.encode(), "text/html")

            def _file(self, path: Path) -> None:
                if path.parent != proxy.wheels or not path.is_file():
                    self.send_error(404)
                    return
                self._send(path.read_bytes(), "application/octet-stream")

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler

    def __enter__(self) -> IndexProxy:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
