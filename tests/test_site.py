"""The built documentation site works in a real browser.

Opens every page of ``docs/_build/html`` (built by ``bash .ci/docs``) in
headless Chromium through Selenium and Debian's ``chromium-driver`` (no
browser download), served over HTTP as a web host would, and fails on a
JavaScript error or a failed request logged by the browser, a broken internal
link (a missing page, or a ``#fragment`` the page does not have) or a broken
image; then checks that the site's search finds ``PCO64``. Skips, saying why,
when the site is not built or Chromium, its driver or Selenium is missing
(CI installs all three and builds the site first: ``.ci/run``).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

SITE = Path(__file__).resolve().parent.parent / "docs" / "_build" / "html"
CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None
)
DRIVER = shutil.which("chromedriver")
#: Seconds a page may take to load, and the search to answer.
TIMEOUT = 60

pytestmark = pytest.mark.slow


def _skip_reason() -> str | None:
    if not (SITE / "index.html").exists():
        return f"the site is not built ({SITE}): run `bash .ci/docs` first"
    if CHROMIUM is None or DRIVER is None:
        return (
            "Chromium or its driver is not installed: "
            "`apt-get install chromium chromium-driver`"
        )
    try:
        import selenium  # noqa: F401
    except ImportError:
        return 'Selenium is not installed: `pip install -e ".[docs]"`'
    return None


class _Anchors(HTMLParser):
    """The ``id`` and ``name`` attributes of one HTML file."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


@functools.cache
def _anchors(path: Path) -> frozenset[str]:
    parser = _Anchors()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return frozenset(parser.ids)


def _pages() -> list[Path]:
    return sorted(
        p for p in SITE.rglob("*.html") if p.relative_to(SITE).parts[0] != "_static"
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    reason = _skip_reason()
    if reason is not None:
        pytest.skip(reason)
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver's own path: Selenium then downloads nothing.
    driver = webdriver.Chrome(
        options=options, service=webdriver.ChromeService(executable_path=DRIVER)
    )
    driver.set_page_load_timeout(TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()


def _problems_on(driver: object, url: str) -> list[str]:
    """What is wrong on one loaded page."""
    problems = [
        f"browser log: {entry['message']}"
        for entry in driver.get_log("browser")
        if entry["level"] == "SEVERE" and "favicon.ico" not in entry["message"]
    ]
    links = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href]'), a => a.href)"
    )
    for link in links:
        problem = _broken_internal(link, url)
        if problem:
            problems.append(f"link {link}: {problem}")
    images = driver.execute_script(
        "return Array.from(document.images, i => "
        "[i.currentSrc || i.src, i.complete, i.naturalWidth])"
    )
    for src, complete, width in images:
        problem = _broken_internal(src, url)
        if problem:
            problems.append(f"image {src}: {problem}")
        elif complete and width == 0:
            problems.append(f"image {src}: does not decode")
    return problems


def _broken_internal(link: str, page_url: str) -> str | None:
    """Why a link of the site to itself is broken (``None``: fine, or external)."""
    target, fragment = urldefrag(link)
    parsed = urlparse(target)
    if (parsed.scheme, parsed.netloc) != tuple(urlparse(page_url)[:2]):
        return None  # another site, mailto:, data:, javascript:
    path = SITE / unquote(parsed.path).lstrip("/")
    if path.is_dir():
        path = path / "index.html"
    if not path.is_file():
        return f"no file {path.relative_to(SITE)}"
    if fragment and path.suffix == ".html" and unquote(fragment) not in _anchors(path):
        return f"no #{fragment} in {path.relative_to(SITE)}"
    return None


def test_every_page_loads_without_errors(browser: object, base_url: str) -> None:
    pages = _pages()
    assert len(pages) > 20, pages
    problems: dict[str, list[str]] = {}
    for page in pages:
        rel = page.relative_to(SITE).as_posix()
        browser.get(base_url + rel)
        found = _problems_on(browser, base_url + rel)
        if found:
            problems[rel] = found
    assert not problems, "\n".join(
        f"{page}:\n  " + "\n  ".join(found) for page, found in problems.items()
    )


def test_search_finds_pco64(browser: object, base_url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(base_url + "search.html?q=PCO64")
    results = WebDriverWait(browser, TIMEOUT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results ul.search li a")
    )
    hrefs = [a.get_attribute("href") for a in results]
    assert any("PCO64" in (href or "") for href in hrefs), hrefs
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not [e for e in severe if "favicon.ico" not in e["message"]], severe


def _built() -> None:
    if not (SITE / "index.html").exists():
        pytest.skip(f"the site is not built ({SITE}): run `bash .ci/docs` first")


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("bolt_pco64.problem", "PCO64"),
        ("bolt_pco64.problem", "PCOOutcomeConstraint"),
        ("bolt_pco64.tables.table", "load_table"),
        ("bolt_pco64.bench.comparison", "run_comparison"),
    ],
)
def test_the_api_reference_documents(module: str, name: str) -> None:
    _built()
    page = SITE / "generated" / f"{module}.html"
    assert page.exists(), page
    assert f"{module}.{name}" in _anchors(page)
    assert f"{module}.{name}" in (SITE / "api.html").read_text(encoding="utf-8")


def test_every_tutorial_ran_during_the_build() -> None:
    """Each example is a tutorial page with the output of its build-time run."""
    _built()
    examples = sorted((SITE.parent.parent.parent / "examples").glob("*.py"))
    assert examples
    for example in examples:
        page = SITE / "tutorials" / f"{example.stem}.html"
        assert page.exists(), page
        assert "sphx-glr-script-out" in page.read_text(encoding="utf-8"), page
