"""Find a data file inside an installed PyPI package or an unpacked Debian package.

PyPI packages are located through their installed metadata, without importing
them (several of the corpora's packages cannot be imported without their heavy
dependencies, and we only need their files). Debian packages are unpacked by
`scripts/fetch_debian_sources.sh` into `$SEAM_SOURCES/debian/<package>/` (by
default `.sources/` in the repository), which records the version it unpacked
in a `VERSION` file; a system-wide install of the same package also works.
"""

from __future__ import annotations

import os
import subprocess
from importlib import metadata
from pathlib import Path

from benchmark.sources import Provenance
from common.errors import UserError
from common.files import sha256_file

ROOT = Path(__file__).resolve().parents[2]
BUILD_INSTALL_HINT = "pip install --no-deps -r requirements-build.txt && bash scripts/fetch_debian_sources.sh"


class MissingSource(UserError):
    """A source package or file is not installed; the message names the install command."""


def sources_dir() -> Path:
    return Path(os.environ.get("SEAM_SOURCES", ROOT / ".sources"))


def pypi_file(package: str, relpath: str) -> tuple[Path, Provenance]:
    """The installed file `relpath` of PyPI distribution `package`, and its provenance."""
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise MissingSource(
            f"source package {package!r} (PyPI) is not installed; install the build sources with: "
            f"{BUILD_INSTALL_HINT}") from None
    path = Path(dist.locate_file(relpath))
    if not path.is_file():
        raise MissingSource(f"{package} {dist.version} is installed but has no file {relpath}; "
                            f"reinstall with: {BUILD_INSTALL_HINT}")
    return path, Provenance("pypi", package, dist.version, relpath, sha256_file(path))


def debian_file(package: str, relpath: str) -> tuple[Path, Provenance]:
    """The file `relpath` (absolute path as installed, e.g. /usr/share/...) of a Debian package."""
    unpacked = sources_dir() / "debian" / package
    candidate = unpacked / relpath.lstrip("/")
    if candidate.is_file():
        version = (unpacked / "VERSION").read_text(encoding="utf-8").strip()
        return candidate, Provenance("debian", package, version, relpath, sha256_file(candidate))
    system = Path(relpath)
    if system.is_file():
        try:
            version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                                     capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            version = "unknown"
        return system, Provenance("debian", package, version, relpath, sha256_file(system))
    raise MissingSource(
        f"source package {package!r} (Debian) is not unpacked under {unpacked} nor installed; "
        f"fetch it with: bash scripts/fetch_debian_sources.sh")
