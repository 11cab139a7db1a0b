"""Drive the real headless Chromium (Debian's `chromium`) on a local file: DOM after scripts ran,
console messages, screenshots. Nothing here talks to the network; the page is a file:// URL."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
]


def find_chromium() -> str | None:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass
class PageRun:
    dom: str
    console: list[str]  # every console message of the page (our page logs none when all is well)


def run(url: str, *extra: str, budget_ms: int = 5000, timeout: float = 120.0) -> PageRun:
    binary = find_chromium()
    assert binary, "chromium is not installed"
    with tempfile.TemporaryDirectory(prefix="planlineage-chromium-") as profile:
        proc = subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}", *extra, url],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return PageRun(proc.stdout, console)


def dump_dom(path: Path, fragment: str = "") -> PageRun:
    return run(path.resolve().as_uri() + fragment, "--dump-dom")


def screenshot(path: Path, out: Path, size: str = "1600,1000") -> PageRun:
    result = run(path.resolve().as_uri(), f"--screenshot={out}", f"--window-size={size}", "--hide-scrollbars")
    assert out.is_file() and out.stat().st_size > 1000, f"no screenshot written to {out}"
    return result


class _Texts(HTMLParser):
    """Text content per element: tag, attributes and the text directly inside."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict]] = []
        self.texts: list[tuple[str, dict, str]] = []

    def handle_starttag(self, tag, attrs):
        self.stack.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self.stack and data.strip():
            tag, attrs = self.stack[-1]
            self.texts.append((tag, attrs, data))


def element_texts(dom: str) -> list[tuple[str, dict, str]]:
    parser = _Texts()
    parser.feed(dom)
    return parser.texts


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, dict] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.attrs[attrs["id"]] = attrs


def elements_by_id(dom: str) -> dict[str, dict]:
    """id -> attributes of every element with an id."""
    parser = _Elements()
    parser.feed(dom)
    return parser.attrs


def classes_of(dom: str, element_id: str) -> set[str]:
    return set((elements_by_id(dom).get(element_id, {}).get("class") or "").split())
