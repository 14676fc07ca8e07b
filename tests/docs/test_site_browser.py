"""The documentation site in a real headless browser (Chromium, ``--dump-dom``).

Every page of ``mkdocs.yml``'s nav is loaded from a local HTTP server and must render: its title, the
navigation with every page of the nav, the search box (and the search index it loads, listing every page),
no "404" page and no file the page asks for that the server does not have (a figure, a stylesheet, a
script); the API reference shows rendered docstrings. The site is the one ``make test`` builds
(``build/site``, ``mkdocs build --strict`` before pytest); when it is absent the test builds one into a
temporary folder. Skipped, saying why, only when no Chromium is installed (``make test`` installs Debian's
``chromium`` when it is missing and may).
"""

from __future__ import annotations

import functools
import html
import json
import re
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--virtual-time-budget=10000",  # let the page's scripts run (search worker, navigation) before the dump
)

# a busy machine makes a page slow, not wrong: the limits only end a browser that hangs
pytestmark = [pytest.mark.xdist_group("site_browser"), pytest.mark.timeout(1800)]


def _nav(items: list) -> list[tuple[str, str]]:
    """(title, source file) of every page of a mkdocs nav, in order."""
    pages = []
    for item in items:
        for title, value in item.items():
            pages.extend([(title, value)] if isinstance(value, str) else _nav(value))
    return pages


NAV = _nav(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])


def _url(source: str) -> str:
    return "/" if source == "index.md" else "/" + source.removesuffix(".md") + "/"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        pytest.skip(f"no Chromium found ({', '.join(BROWSERS)}); `make test` installs it (apt, as root)")
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    built = ROOT / "build" / "site"
    if (built / "index.html").is_file():
        return built
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


class _Handler(SimpleHTTPRequestHandler):
    """Serves the site and records every request's path and status."""

    served: list[tuple[str, int]]

    def log_request(self, code="-", size="-") -> None:
        self.served.append((self.path.split("?")[0], int(code)))

    def log_message(self, format, *args) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def server(site: Path):
    log: list[tuple[str, int]] = []
    handler = type("Handler", (_Handler,), {"served": log})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", log
    finally:
        httpd.shutdown()
        httpd.server_close()


def _dump_dom(chromium: str, url: str, profile: Path) -> str:
    proc = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0 and "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))).strip()


def _primary_nav(dom: str) -> list[str]:
    """The link texts of the site's primary navigation."""
    start = dom.index('class="md-nav md-nav--primary"')
    end = dom.index("md-sidebar--secondary", start)  # the page's table of contents follows
    return [_text(t) for t in re.findall(r'class="md-ellipsis">(.*?)</span>', dom[start:end], re.S)]


@pytest.mark.parametrize(("title", "source"), NAV, ids=[s for _, s in NAV])
def test_page_renders_with_title_navigation_and_search(chromium, server, tmp_path, title, source) -> None:
    base, served = server
    first = len(served)
    dom = _dump_dom(chromium, base + _url(source), tmp_path / "profile")
    requests = served[first:]

    page_title = _text(re.search(r"<title>(.*?)</title>", dom, re.S).group(1))
    assert page_title == ("mipkit" if source == "index.md" else f"{title} - mipkit")
    assert "404 - Not found" not in dom
    assert (_url(source), 200) in requests
    missing = sorted({path for path, status in requests if status >= 400})
    assert not missing, f"{source} asks for files the site does not have: {missing}"

    nav = _primary_nav(dom)
    assert all(t in nav for t, _ in NAV), f"navigation lacks {[t for t, _ in NAV if t not in nav]}"
    assert re.search(r'<input[^>]*class="md-search__input"', dom), "no search box"
    article = re.search(r'<article class="md-content__inner[^"]*">(.*?)</article>', dom, re.S)
    assert article and len(_text(article.group(1))) > 200, "the page has no content"


def test_search_index_lists_every_page(chromium, server, site, tmp_path) -> None:
    base, served = server
    first = len(served)
    _dump_dom(chromium, base + "/", tmp_path / "profile")
    assert ("/search/search_index.json", 200) in served[first:], "the page did not load the search index"
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    locations = {d["location"].split("#")[0] for d in docs}
    assert {_url(s).lstrip("/") for _, s in NAV} <= locations


def test_api_reference_shows_rendered_docstrings(chromium, server, tmp_path) -> None:
    base, _ = server
    dom = _dump_dom(chromium, base + "/api/", tmp_path / "profile")
    objects = re.findall(r'<div class="doc doc-object doc-(?:function|class)">', dom)
    assert len(objects) >= 20, f"only {len(objects)} documented objects"
    text = _text(dom)
    assert "Parameters:" in text and "Returns:" in text  # numpydoc sections rendered as tables
    assert "Bad input to a mipkit function" in text  # MipkitValueError's docstring
    assert not re.search(r":(?:func|class|meth|mod):\s", text), "Sphinx roles rendered as text"
