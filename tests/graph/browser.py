"""Playwright (from PyPI) driving Debian's Chromium (/usr/bin/chromium): no browser is downloaded.

A missing Chromium or Playwright fails the browser tests with one line saying what to install;
they never skip (CI installs both: .ci/run installs chromium, the `test` extra playwright)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

CHROMIUM = os.environ.get("PLANLINEAGE_TEST_CHROMIUM", "/usr/bin/chromium")


def launch(playwright):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package (.ci/run does)", pytrace=False)
    return playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])


@contextmanager
def browser_page(width: int = 1400, height: int = 900) -> Iterator:
    """A fresh page; every console error or page exception fails the test."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "playwright is not installed: pip install 'planlineage[test]' (or pip install playwright)", pytrace=False
        )
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.problems = problems  # type: ignore[attr-defined]
            yield page
            assert not problems, problems
        finally:
            browser.close()


def ready(page) -> None:
    page.wait_for_selector("html[data-ready=true]", timeout=30000)


def box(page, selector: str) -> dict:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not drawn"
    return found


def inside(inner: dict, outer: dict, slack: float = 0.5) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack
    )


def overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@contextmanager
def served(argv: list[str], env: dict[str, str] | None = None) -> Iterator[str]:
    """`planlineage ui --events ARGV --port 0` in a thread of this process; yields its base URL."""
    from planlineage.graph import page_data
    from planlineage.graph.server import LiveGraph, UiServer

    live = LiveGraph(files=argv, page=lambda graph, around: page_data(graph, around))
    live.refresh()
    server = UiServer(("127.0.0.1", 0), live, (env or {}).get("token"))
    stop = threading.Event()
    watcher = threading.Thread(target=live.watch, args=(stop, lambda s: None), daemon=True)
    watcher.start()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
