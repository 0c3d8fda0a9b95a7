"""The headless-Chromium driver the report's tests use (tests/support/browser.py), on tiny pages written
to tmp_path: values, console errors, hash routing, screenshots, paint timing, timeouts and cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.browser import Browser, BrowserError, BrowserTimeout, BrowserUnavailable, PageError, find_chromium

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def show(browser, tmp_path):
    """show(html, width=..., height=...): write the page to tmp_path and open it; its tabs close after the test."""
    pages = []

    def show(html: str, **viewport):
        path = tmp_path / f"page{len(pages)}.html"
        path.write_text(html, encoding="utf-8")
        pages.append(browser.open(path, **viewport))
        return pages[-1]

    yield show
    for page in pages:
        page.close()


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", png[:16]
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def gone(pid: int) -> bool:
    """Whether neither the process nor anything of its process group (its renderers) is left running:
    zombies, dead but waiting for init to reap them, do not count."""
    try:
        os.kill(pid, 0)
        return False
    except ProcessLookupError:
        pass
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[2] == str(pid) and fields[0] != "Z":
            return False
    return True


def test_evaluate_returns_json_values_and_awaits_promises(show):
    page = show("<title>seam</title><p id=p data-n=3>hello</p>")
    assert page.evaluate("document.title") == "seam"
    assert page.evaluate("({n: +p.dataset.n, list: [1, 'two', null], text: p.textContent})") == {
        "n": 3, "list": [1, "two", None], "text": "hello"}
    assert page.evaluate("undefined") is None
    assert page.evaluate("new Promise(done => setTimeout(() => done(42), 20))") == 42


def test_a_javascript_exception_raises_page_error_with_its_message(show):
    page = show("<p>hello</p>")
    with pytest.raises(PageError, match=r"TypeError: Cannot read properties of undefined \(reading 'length'\)"):
        page.evaluate("document.no_such_thing.length")
    with pytest.raises(PageError, match="Error: refused"):
        page.evaluate("Promise.reject(new Error('refused'))")
    assert page.console_errors == []  # what evaluate raises is not the page's own error


def test_console_error_is_reported(show):
    page = show("<p>hi</p><script>console.error('x', 7)</script>")
    assert page.console_errors == ["console.error: x 7"]


def test_uncaught_exceptions_and_failed_loads_are_reported(show):
    page = show("<p>hi</p><img src=missing.png><script>throw new Error('boom')</script>")
    page.wait_for("document.images[0].complete")
    assert any(e.startswith("Uncaught Error: boom") for e in page.console_errors), page.console_errors
    assert any("ERR_FILE_NOT_FOUND" in e and "missing.png" in e for e in page.console_errors), page.console_errors


def test_a_clean_page_reports_no_errors(show):
    page = show("<p>hi</p><script>console.log('fine'); console.warn('careful'); console.info('note')</script>")
    assert page.console_errors == []


def test_set_hash_fires_hashchange_and_the_page_sees_it(show):
    page = show("""<p>routes</p><script>
        window.seen = [];
        addEventListener('hashchange', () => seen.push(location.hash));
    </script>""")
    page.set_hash("x/y")
    assert page.evaluate("seen") == ["#x/y"]  # no waiting: set_hash returns after the handler ran
    page.set_hash("#x/y")  # unchanged: no event, and no hang waiting for one
    page.set_hash("z")
    assert page.evaluate("seen") == ["#x/y", "#z"]


def test_click_dispatches_a_real_click_and_refuses_what_a_person_could_not_click(show):
    page = show("""<button id=b onclick="this.dataset.clicks = +(this.dataset.clicks || 0) + 1">go</button>
        <div style="height:2000px"></div><button id=low onclick="this.textContent = 'done'">low</button>
        <button id=hidden style="display:none">hidden</button>
        <div style="position:relative"><button id=under>under</button><div style="position:absolute;inset:0"></div>
        </div>""")
    page.click("#b")
    page.click("#b")
    assert page.evaluate("b.dataset.clicks") == "2"
    page.click("#low")  # below the fold: scrolled into view first
    assert page.evaluate("low.textContent") == "done"
    with pytest.raises(PageError, match="no element matches"):
        page.click("#absent")
    with pytest.raises(PageError, match="not visible"):
        page.click("#hidden")
    with pytest.raises(PageError, match="covered by <div"):
        page.click("#under")


def test_the_screenshot_is_a_png_of_the_viewport_width_and_the_whole_page(show, artifacts):
    page = show("<body style='margin:0;background:#3a6'><p>short</p></body>", width=1000, height=700)
    assert page.evaluate("[innerWidth, innerHeight]") == [1000, 700]
    assert png_size(page.screenshot(artifacts / "browser-driver-short.png")) == (1000, 700)
    assert png_size((artifacts / "browser-driver-short.png").read_bytes()) == (1000, 700)
    tall = show("<body style='margin:0'><div style='height:2500px;background:#36a'></div></body>", width=1000,
                height=700)
    assert png_size(tall.screenshot()) == (1000, 2500)


def test_first_contentful_paint_is_a_positive_number_of_milliseconds(show):
    page = show("<h1>painted</h1>")
    fcp = page.first_contentful_paint_ms()
    assert isinstance(fcp, float) and 0 < fcp < 10_000


def test_a_wait_that_never_comes_true_fails_within_its_timeout(show):
    page = show("<p>waiting</p><script>setTimeout(() => document.body.dataset.ready = 'yes', 100)</script>")
    assert page.wait_for("document.body.dataset.ready", timeout=5) == "yes"
    start = time.monotonic()
    with pytest.raises(BrowserTimeout, match=r"timed out after 0.5 s waiting for 'window.never' \(last value None\)"):
        page.wait_for("window.never", timeout=0.5)
    assert 0.5 <= time.monotonic() - start < 1.5
    with pytest.raises(BrowserTimeout, match="first-contentful-paint"):  # nothing contentful is ever painted
        show("<body></body>").first_contentful_paint_ms(timeout=0.5)


def test_a_missing_file_fails_to_open_with_the_reason(browser, tmp_path):
    with pytest.raises(PageError, match="nothing.html: net::ERR_FILE_NOT_FOUND"):
        browser.open(tmp_path / "nothing.html")


def test_a_hung_browser_fails_with_a_timeout_not_a_hang(tmp_path, browser):
    (tmp_path / "page.html").write_text("<p>hi</p>", encoding="utf-8")
    with Browser.launch() as hung:
        page = hung.open(tmp_path / "page.html")
        os.kill(hung.pid, signal.SIGSTOP)  # the browser process relays every command: now nothing answers
        start = time.monotonic()
        with pytest.raises(BrowserTimeout, match="timed out after 1 s waiting for a reply to Runtime.evaluate"):
            page.evaluate("1 + 1", timeout=1)
        assert time.monotonic() - start < 2


def test_the_browser_and_its_profile_are_gone_after_the_context_exits(browser):
    with Browser.launch() as chromium:
        pid, profile = chromium.pid, Path(chromium.profile)
        assert not gone(pid) and profile.is_dir()
    assert gone(pid) and not profile.exists()
    with pytest.raises(RuntimeError), Browser.launch() as chromium:  # also when the test fails inside
        pid, profile = chromium.pid, Path(chromium.profile)
        raise RuntimeError("a failing test")
    assert gone(pid) and not profile.exists()
    with pytest.raises(BrowserError, match="Chromium has exited"):
        chromium.send("Browser.getVersion")


def test_a_browser_that_dies_is_reported_with_its_output(browser):
    with Browser.launch() as chromium:
        os.killpg(chromium.pid, signal.SIGKILL)
        with pytest.raises(BrowserError, match="Chromium (exited while waiting for a reply|has exited)"):
            chromium.send("Browser.getVersion", timeout=5)


def test_no_chromium_is_browser_unavailable_saying_how_to_get_one(monkeypatch, tmp_path):
    monkeypatch.delenv("SEAM_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BrowserUnavailable, match=r"set SEAM_CHROMIUM or install Debian's chromium: apt-get install"):
        find_chromium()
    monkeypatch.setenv("SEAM_CHROMIUM", str(tmp_path / "no-such-chromium"))
    with pytest.raises(BrowserUnavailable, match="SEAM_CHROMIUM=.*no-such-chromium is not an executable"):
        Browser.launch()


def run_without_chromium(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    """One browser test in a pytest of its own, with no Chromium on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "SEAM_CHROMIUM", "PYTEST_ADDOPTS")}
    env["PATH"] = str(tmp_path)
    if ci is not None:
        env["CI"] = ci
    command = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
               "tests/test_browser_driver.py", "-k", "test_console_error_is_reported"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)


def test_without_chromium_the_browser_tests_are_skipped_saying_how_to_get_one(tmp_path):
    done = run_without_chromium(tmp_path, "false")
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout.strip().splitlines()[-1]
    assert ("no Chromium found (set SEAM_CHROMIUM or install Debian's chromium: apt-get install chromium); "
            "the browser tests are skipped") in done.stdout


def test_on_ci_a_missing_chromium_is_an_error_not_a_skip(tmp_path):
    done = run_without_chromium(tmp_path, "true")
    assert done.returncode == 1
    summary = done.stdout.strip().splitlines()[-1]
    assert "1 error" in summary and "skipped" not in summary
    assert "CI must run the browser tests, but no Chromium found" in done.stdout
