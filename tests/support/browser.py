"""A small headless-Chromium driver for the tests, over the DevTools protocol on a pipe.

Why not Selenium or Playwright: with `--remote-debugging-pipe` Chromium reads protocol commands on
its file descriptor 3 and writes replies and events on fd 4, as JSON messages each ended by a NUL
byte, so the browser itself is all a test needs: no chromedriver, no port, no Python package.

    with Browser.launch() as browser:
        page = browser.open(tmp_path / "page.html", width=1280, height=900)
        assert page.evaluate("document.title") == "seam"
        assert page.console_errors == []

Every wait has a timeout, so a hung browser fails the test with a message instead of hanging CI,
and the browser's whole process group is killed and its temporary profile removed on exit.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-pipe")


class BrowserError(Exception):
    """Something went wrong in the browser or in talking to it."""


class BrowserUnavailable(BrowserError):
    """No Chromium to run (the message says how to get one)."""


class BrowserTimeout(BrowserError, TimeoutError):
    """A wait ran out of time: the browser or the page is hung, or a condition never came true."""


class PageError(BrowserError):
    """The page refused: a JavaScript exception, a failed navigation, a missing element."""


def find_chromium() -> str:
    """$SEAM_CHROMIUM if set, else the first of NAMES on PATH (scripts/install_browser.sh looks the same
    way); BrowserUnavailable, saying how to get one, if there is none."""
    chosen = os.environ.get("SEAM_CHROMIUM")
    for name in [chosen] if chosen else NAMES:
        if found := shutil.which(name):
            return found
    if chosen:
        raise BrowserUnavailable(f"SEAM_CHROMIUM={chosen} is not an executable")
    raise BrowserUnavailable("no Chromium found (set SEAM_CHROMIUM or install Debian's chromium: "
                             "apt-get install chromium)")


def running_in_group(group: int) -> bool:
    """Whether a process of that group is still running. Zombies do not count: Chromium's zygotes are
    reparented to init, which may take a second or more to reap them."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]  # after "pid (name)"
        except (OSError, IndexError):
            continue  # gone meanwhile
        if pgrp == str(group) and state != "Z":
            return True
    return False


class Browser:
    """One Chromium process and the protocol connection to it; a context manager."""

    def __init__(self, executable: str, timeout: float):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="seam-chromium-")
        self.log = Path(self.profile) / "stderr.log"  # read back into error messages
        self._lock = threading.Condition()
        self._replies: dict[int, dict] = {}
        self._pages: dict[str, Page] = {}
        self._next_id = 0
        self._eof = False
        to_child, self._to_browser = os.pipe()
        self._from_browser, from_child = os.pipe()
        # Spawned with posix_spawn rather than subprocess: the pipe ends must become the child's
        # fds 3 and 4, and subprocess's pass_fds keeps fd numbers (renumbering would take a
        # preexec_fn, which is not safe in a threaded process). Moving the ends above 4 first
        # keeps the two dup2s from overwriting one another.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5) for fd in (to_child, from_child)]
        out = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, out, 1),
                   (os.POSIX_SPAWN_DUP2, out, 2), (os.POSIX_SPAWN_DUP2, high[0], 3),
                   (os.POSIX_SPAWN_DUP2, high[1], 4)]
        argv = [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"]
        self.pid = None
        try:  # its own session, so that close() can kill its renderers and helpers with it
            self.pid = os.posix_spawn(executable, argv, os.environ, file_actions=actions, setsid=True)
        except OSError as exc:
            self.close()
            raise BrowserUnavailable(f"cannot run {executable}: {exc}") from exc
        finally:
            for fd in (to_child, from_child, out, *high):
                os.close(fd)
        self._reader = threading.Thread(target=self._read, name="chromium-reader", daemon=True)
        self._reader.start()

    @classmethod
    def launch(cls, executable: str | None = None, timeout: float = 30) -> Browser:
        """Start headless Chromium with a fresh profile; `timeout` bounds each protocol command."""
        browser = cls(shutil.which(executable) or executable if executable else find_chromium(), timeout)
        try:
            browser.send("Browser.getVersion")
        except BaseException:
            browser.close()
            raise
        return browser

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _read(self) -> None:
        """Reader thread: split the stream on NUL, file replies by id and hand events to their page."""
        parts: list[bytes] = []
        try:
            while chunk := os.read(self._from_browser, 1 << 20):
                parts.append(chunk)
                if b"\0" not in chunk:  # a screenshot spans many chunks: join them once, at its end
                    continue
                *messages, rest = b"".join(parts).split(b"\0")
                parts = [rest]
                with self._lock:
                    for message in map(json.loads, messages):
                        if "id" in message:
                            self._replies[message["id"]] = message
                        elif message.get("sessionId") in self._pages:
                            self._pages[message["sessionId"]]._event(message)
                    self._lock.notify_all()
        finally:  # end of stream (or a bug here): make every waiter fail now rather than time out
            with self._lock:
                self._eof = True
                self._lock.notify_all()

    def wait(self, ready, timeout: float, what: str):
        """Wait until ready() (called under the lock) returns something truthy and return it."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not (result := ready()):
                left = deadline - time.monotonic()
                if self._eof:
                    raise BrowserError(f"Chromium exited while waiting for {what}; its output:\n{self.output()}")
                if left <= 0:
                    raise BrowserTimeout(f"timed out after {timeout:g} s waiting for {what}")
                self._lock.wait(left)
        return result

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        """Send one command and wait for its reply; a protocol error raises BrowserError."""
        with self._lock:
            self._next_id += 1
            number = self._next_id
            message = {"id": number, "method": method, "params": params or {}}
            if session:
                message["sessionId"] = session
            try:
                os.write(self._to_browser, json.dumps(message).encode() + b"\0")
            except OSError as exc:  # BrokenPipeError once it has exited, EBADF once closed
                raise BrowserError(f"cannot send {method}, Chromium has exited: {exc}\n{self.output()}") from exc
        reply = self.wait(lambda: self._replies.pop(number, None), timeout or self.timeout, f"a reply to {method}")
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')} {reply['error'].get('data', '')}".strip())
        return reply["result"]

    def output(self) -> str:
        """The last lines Chromium wrote to stdout and stderr (for error messages)."""
        try:
            lines = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join([line for line in lines if "dbus" not in line][-20:])  # no D-Bus here: noise

    def open(self, path_or_url: str | os.PathLike, width: int = 1280, height: int = 900,
             timeout: float = 30) -> Page:
        """A new tab with a fixed viewport, navigated to a file or URL; returns once the load event fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        with self._lock:
            self._pages[session] = page
        for domain in ("Page", "Runtime", "Log"):
            page.send(f"{domain}.enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        try:
            page.navigate(path_or_url, timeout)
        except BrowserError:
            page.close()
            raise
        return page

    def close(self) -> None:
        """Kill Chromium's process group, wait until it is gone and remove the profile; safe to call twice."""
        if self.pid is not None:
            os.killpg(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            deadline = time.monotonic() + 10
            while running_in_group(self.pid) and time.monotonic() < deadline:  # renderers die a moment later
                time.sleep(0.02)
            self.pid = None
            self._reader.join(5)
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._to_browser = self._from_browser = -1
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab, attached with flatten=true so that its commands and events carry its sessionId."""

    def __init__(self, browser: Browser, target: str, session: str):
        self.browser, self.target, self.session = browser, target, session
        self.events: list[dict] = []
        self.console_errors: list[str] = []  # console.error/assert, uncaught exceptions, Log errors

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _event(self, message: dict) -> None:
        """Called by the reader thread under the browser's lock."""
        self.events.append(message)
        method, params = message["method"], message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            words = [str(arg.get("value", arg.get("description", arg["type"]))) for arg in params["args"]]
            self.console_errors.append(f"console.{params['type']}: {' '.join(words)}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.console_errors.append(f"{details['text']} {details.get('exception', {}).get('description', '')}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            self.console_errors.append(f"{entry['source']}: {entry['text']} {entry.get('url', '')}".strip())

    def send(self, method: str, params: dict | None = None, timeout: float | None = None) -> dict:
        return self.browser.send(method, params, self.session, timeout)

    def navigate(self, path_or_url: str | os.PathLike, timeout: float = 30) -> None:
        """Go to a URL or a local file and wait for its load event."""
        url = str(path_or_url)
        if ":" not in url.split("/")[0]:
            url = Path(url).resolve().as_uri()
        seen = len(self.events)
        result = self.send("Page.navigate", {"url": url}, timeout)
        if result.get("errorText"):
            raise PageError(f"cannot open {url}: {result['errorText']}")
        self.browser.wait(lambda: any(e["method"] == "Page.loadEventFired" for e in self.events[seen:]),
                          timeout, f"the load event of {url}")

    def evaluate(self, expression: str, timeout: float = 10):
        """The JSON value of a JavaScript expression (promises awaited); an exception raises PageError."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True, "userGesture": True}, timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise PageError(details.get("exception", {}).get("description") or details["text"])
        return result["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 5, interval: float = 0.05):
        """Poll a JavaScript expression until it is truthy and return its value; BrowserTimeout if it never is."""
        deadline = time.monotonic() + timeout
        while True:  # a hung page makes evaluate itself time out (given at least half a second)
            value = self.evaluate(condition, max(deadline - time.monotonic(), 0.5))
            if value:
                return value
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserTimeout(f"timed out after {timeout:g} s waiting for {condition!r} (last value {value!r})")
            time.sleep(min(interval, left))

    def click(self, selector: str, timeout: float = 10) -> None:
        """Click the middle of the element as a person would, with real mouse events; PageError if it is
        missing, not visible, or covered by another element there."""
        where = self.evaluate(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el) return "no element matches";
            el.scrollIntoView({{block: "center", inline: "center"}});
            const box = el.getBoundingClientRect(), x = box.x + box.width / 2, y = box.y + box.height / 2;
            if (!box.width || !box.height) return "it is not visible (zero size)";
            const hit = document.elementFromPoint(x, y);
            if (!el.contains(hit)) return "it is covered by " + (hit ? hit.outerHTML.slice(0, 80) : "nothing");
            return [x, y];
        }})()""", timeout)
        if isinstance(where, str):
            raise PageError(f"cannot click {selector!r}: {where}")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": where[0], "y": where[1], "button": "left",
                                                   "clickCount": 1}, timeout)

    def set_hash(self, fragment: str, timeout: float = 5) -> None:
        """Set location.hash and return after the page's hashchange handlers ran (none fire if unchanged)."""
        self.evaluate(f"""new Promise(done => {{
            const want = "#" + {json.dumps(fragment.lstrip("#"))};
            if (location.hash === want) return done();
            addEventListener("hashchange", () => setTimeout(done), {{once: true}});
            location.hash = want;
        }})""", timeout)

    def screenshot(self, path: str | os.PathLike | None = None, timeout: float = 30) -> bytes:
        """A PNG of the whole page (beyond the viewport too), written to `path` if given."""
        size = self.send("Page.getLayoutMetrics", timeout=timeout)["cssContentSize"]
        viewport = self.evaluate("[innerWidth, innerHeight]")
        clip = {"x": 0, "y": 0, "width": max(size["width"], viewport[0]), "height": max(size["height"], viewport[1]),
                "scale": 1}
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip},
                         timeout)["data"]
        png = base64.b64decode(data)
        if path is not None:
            Path(path).write_bytes(png)
        return png

    def first_contentful_paint_ms(self, timeout: float = 5) -> float:
        """Milliseconds from navigation start to the first paint of text or an image (the browser's own
        first-contentful-paint entry); BrowserTimeout if nothing contentful is ever painted."""
        return float(self.wait_for("performance.getEntriesByName('first-contentful-paint')[0]?.startTime", timeout))

    def close(self, timeout: float = 5) -> None:
        """Close the tab (the browser stays)."""
        if self.browser.pid is not None:
            self.browser.send("Target.closeTarget", {"targetId": self.target}, timeout=timeout)
        with self.browser._lock:
            self.browser._pages.pop(self.session, None)
