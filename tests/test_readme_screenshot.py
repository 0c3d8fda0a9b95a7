"""The README's Chromium command (the screenshot of the page's top, docs/report.png) runs as written, also as root
(issue 36: without --no-sandbox, Chromium refuses to start as root), and makes a 1100 x 760 PNG. Run here with the
screenshot written into a temporary folder instead of docs/; skipped where there is no Chromium, except on CI (as
the browser tests are)."""

from __future__ import annotations

import re
import shlex
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import on_ci
from support.browser import BrowserUnavailable, find_chromium

ROOT = Path(__file__).resolve().parents[1]


def readme_command() -> list[str]:
    """The README's `chromium ...` command, its words (the line break inside its backquotes joined)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"`(chromium [^`]*)`", text)
    assert found, "README.md: no `chromium ...` command"
    return shlex.split(found.group(1).replace("\n", " "))


def test_the_readmes_chromium_command_makes_the_screenshot(tmp_path):
    try:
        chromium = find_chromium()
    except BrowserUnavailable as exc:
        if on_ci():
            pytest.fail(f"CI must run the browser tests, but {exc}", pytrace=False)
        pytest.skip(f"{exc}; the README's screenshot command is not tried")
    words = readme_command()
    assert "--screenshot=docs/report.png" in words and words[-1] == "file://$PWD/data/report.html"
    shot = tmp_path / "report.png"
    words = [chromium, *("--screenshot=" + str(shot) if word == "--screenshot=docs/report.png" else word
                         for word in words[1:-1]), (ROOT / "data" / "report.html").as_uri()]
    done = subprocess.run(words, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1100, 760)
