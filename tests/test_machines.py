"""scripts/machines.py: the record of which machine answered which rows of a study collected over sessions."""

from __future__ import annotations

import doctest
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# loaded from its path: scripts/ on sys.path would let scripts/compare.py stand for the compare package
_spec = importlib.util.spec_from_file_location("machines", ROOT / "scripts" / "machines.py")
machines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(machines)

HEADER = "started\tshard\tport\tmodel\tmachine\n"
RELEASED = ROOT / "data" / "traces" / "smollm2-135m.jsonl"


def test_the_examples_in_the_docstrings_hold():
    assert doctest.testmod(machines).failed == 0


def test_describe_names_the_cpu_and_the_vector_units_that_change_the_sums():
    intel = ("processor\t: 0\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R)  Platinum 8480+\n"
             "flags\t\t: avx2 avx512f amx_tile amx_int8\nprocessor\t: 1\nmodel name\t: other\n")
    assert machines.describe(intel, 2) == (
        "Intel(R) Xeon(R) Platinum 8480+ (family 6, model 143; avx2 avx512f amx_tile), 2 CPUs")
    assert machines.describe("model name\t: Old\nflags\t: sse2\n", 1) == (
        "Old (family ?, model ?; none of avx2/avx512f/amx_tile), 1 CPU")


def rows(model: str, port: int, *answered: tuple[str, ...], skip: int = 0) -> list[dict]:
    """Real trace rows (the released trace's, from line `skip` on) made rows of `model` answered on `port`, the
    i-th with attempts started at the times answered[i]."""
    if not RELEASED.exists():
        pytest.skip("no released trace to take rows from")
    made = []
    for line, times in zip(RELEASED.read_text().splitlines()[skip:], answered, strict=False):
        row = json.loads(line)
        attempt = row["attempts"][-1]
        row["model"] = model
        row["request"] = {**row["request"], "url": f"http://127.0.0.1:{port}/v1/chat/completions"}
        row["attempts"] = [{**attempt, "started_at": moment} for moment in times]
        made.append(row)
    return made


def write(folder: Path, name: str, made: list[dict], tail: str = "") -> None:
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in made) + tail)


def test_each_final_row_goes_to_the_server_of_its_model_and_port_started_last_before_its_answer(tmp_path):
    (tmp_path / "machines.tsv").write_text(
        HEADER + "2026-12-05T13:00:00Z\t1/2\t8080\tm\tC\n"  # out of time order: sorted when read
        "2026-12-05T12:00:00Z\t1/2\t8080\tm\tA\n2026-12-05T13:00:01+01:00\t2/2\t8081\tm\tB\n"
        "2026-12-05T13:00:00Z\t1/2\t8080\tother\tD\n")
    main = rows("m", 8080, ("2026-12-05T11:59:59.999Z",),  # before any record
                ("2026-12-05T12:30:00.000Z",),  # A
                ("2026-12-05T11:00:00.000Z", "2026-12-05T13:00:05.000Z"),  # lost at 11:00, answered on C
                ("2026-12-05T14:00:00.000Z",))  # C (D is another model's)
    again = rows("m", 8080, ("2026-12-05T14:10:00.000Z",))  # the first id asked again: it replaces the first row
    write(tmp_path, "m.jsonl", main + again, tail='{"id": "torn')  # a row being written is no row yet
    write(tmp_path, "m.jsonl.shard-2", rows("m", 8081, ("2026-12-05T12:10:00.000Z",), skip=10))  # B (12:00:01Z)
    (tmp_path / "m.jsonl.shard-2.sent").write_text("{}\n")  # a note, not rows
    assert machines.count(tmp_path) == {("A", "m"): 1, ("B", "m"): 1, ("C", "m"): 3}  # none "not recorded"


def test_count_prints_a_table_and_a_folder_without_a_record_is_all_not_recorded(tmp_path):
    write(tmp_path, "m.jsonl", rows("m", 8080, ("2026-12-05T12:30:00.000Z",), ("2026-12-05T12:31:00.000Z",)))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "machines.py"), "count", str(tmp_path)],
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "rows\tmodel\tmachine\n2\tm\tnot recorded\n"), done.stderr


@pytest.mark.parametrize(("log", "said"), [
    ("started\tport\n", "machines.tsv:1: expected the header started shard port model machine"),
    (HEADER + "2026-12-05T12:00:00Z\t1/2\t8080\tm\n", "machines.tsv:2: expected 5 tab-separated fields, got 4"),
    (HEADER + "yesterday\t1/2\t8080\tm\tA\n", "machines.tsv:2: started: expected a UTC time such as"),
    (HEADER + "2026-12-05T12:00:00\t1/2\t8080\tm\tA\n", "machines.tsv:2: started: expected a UTC time such as"),
])
def test_a_damaged_record_is_refused_in_one_line_naming_its_line(tmp_path, log, said):
    (tmp_path / "machines.tsv").write_text(log)
    write(tmp_path, "m.jsonl", rows("m", 8080, ("2026-12-05T12:30:00.000Z",)))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "machines.py"), "count", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/v1/chat/completions", "http://[::1/v1"])
def test_a_row_whose_url_has_no_readable_port_is_refused_in_one_line(tmp_path, url):
    made = rows("m", 8080, ("2026-12-05T12:30:00.000Z",))
    made[0]["request"]["url"] = url
    write(tmp_path, "m.jsonl", made)
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "machines.py"), "count", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "m.jsonl:1: request.url" in done.stderr and done.stderr.count("\n") == 1, (
        done.stderr)


def test_a_folder_without_trace_files_or_with_an_unreadable_record_is_refused_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "machines.py"), "count", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "no trace files" in done.stderr and done.stderr.count("\n") == 1
    write(tmp_path, "m.jsonl", rows("m", 8080, ("2026-12-05T12:30:00.000Z",)))
    (tmp_path / "machines.tsv").write_bytes(b"\xff\xfe not text")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "machines.py"), "count", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "cannot be read as a machines.tsv" in done.stderr, done.stderr


def test_a_damaged_trace_row_is_refused_in_one_line_naming_its_line(tmp_path):
    made = rows("m", 8080, ("2026-12-05T12:30:00.000Z",), ("2026-12-05T12:31:00.000Z",))
    del made[1]["model"]
    write(tmp_path, "m.jsonl", made)
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "machines.py"), "count", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "m.jsonl:2:" in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_same_bytes_splits_the_pairs_of_one_message_by_the_machines_that_answered_them(tmp_path):
    (tmp_path / "machines.tsv").write_text(HEADER + "2026-12-05T12:00:00Z\t1/2\t8080\tm\tA\n"
                                                    "2026-12-05T12:00:00Z\t2/2\t8081\tm\tB\n")
    made = rows("m", 8080, *[("2026-12-05T12:30:00.000Z",)] * 10)
    for index, row in enumerate(made):  # five clusters, each asked under two conditions with one message
        row["cluster"], row["condition"] = f"c{index // 2}", ("x", "y")[index % 2]
        row["id"], row["message_sha256"] = f"c{index // 2}/{row['condition']}", f"{index // 2:064x}"
        row["status"], row["output"] = "ok", "same"
    made[3]["output"] = "other"  # c1: two outputs
    made[5]["request"]["url"] = "http://127.0.0.1:8081/v1/chat/completions"  # c2: y answered on B
    made[7]["attempts"][-1]["started_at"] = "2026-12-05T11:00:00.000Z"  # c3: y before the record
    made[9]["message_sha256"] = "f" * 64  # c4: another message: no pair
    write(tmp_path, "m.jsonl", made)
    assert machines.same_bytes(tmp_path, "x", "y") == {
        ("m", "one machine"): (1, 2), ("m", "two machines"): (1, 1), ("m", "one known, one not"): (1, 1)}


def test_same_bytes_can_read_the_second_conditions_rows_from_another_folder(tmp_path):
    study, release = tmp_path / "study", tmp_path / "release"
    study.mkdir(), release.mkdir()
    (study / "machines.tsv").write_text(HEADER + "2026-12-05T12:00:00Z\t1/1\t8080\tm\tA\n")
    asked = rows("m", 8080, ("2026-12-05T12:30:00.000Z",), ("2026-12-05T11:00:00.000Z",))  # on A; before it
    released = rows("m", 8080, ("2026-11-30T10:00:00.000Z",), ("2026-11-30T10:01:00.000Z",))
    for index, (mine, theirs) in enumerate(zip(asked, released, strict=True)):
        for row, condition in ((mine, "x"), (theirs, "y")):
            row["cluster"], row["condition"], row["id"] = f"c{index}", condition, f"c{index}/{condition}"
            row["message_sha256"], row["status"], row["output"] = f"{index:064x}", "ok", "same"
    released[1]["output"] = "other"
    write(study, "m.jsonl", asked + rows("m", 8080, ("2026-12-05T12:40:00.000Z",), skip=5))  # no y in the study
    write(release, "m.jsonl", released)
    assert machines.same_bytes(study, "x", "y", release) == {
        ("m", "one known, one not"): (1, 1), ("m", "neither known"): (0, 1)}
    with pytest.raises(machines.Refused, match="no rows of condition 'y'"):
        machines.same_bytes(study, "x", "y")  # without it, the study holds no y rows


def test_same_bytes_of_one_condition_against_itself_needs_another_folder_and_never_pairs_a_row_with_itself(
        tmp_path):
    study, release = tmp_path / "study", tmp_path / "release"
    study.mkdir(), release.mkdir()
    mine, theirs = rows("m", 8080, ("2026-12-05T12:30:00.000Z",)), rows("m", 8080, ("2026-11-30T10:00:00.000Z",))
    for row, output in ((mine[0], "study bytes"), (theirs[0], "release bytes")):
        row["cluster"], row["condition"], row["id"] = "c0", "x", "c0/x"
        row["message_sha256"], row["status"], row["output"] = "0" * 64, "unusable", output  # a reply all the same
    write(study, "m.jsonl", mine)
    write(release, "m.jsonl", theirs)
    assert machines.same_bytes(study, "x", "x", release) == {("m", "neither known"): (0, 1)}
    with pytest.raises(machines.Refused, match="both 'x'"):
        machines.same_bytes(study, "x", "x")


def test_an_id_in_two_files_is_refused_as_a_join_would_refuse_it(tmp_path):
    made = rows("m", 8080, ("2026-12-05T12:30:00.000Z",), ("2026-12-05T12:31:00.000Z",))
    write(tmp_path, "m.jsonl", made)
    write(tmp_path, "m.jsonl.shard-2", made[1:])
    with pytest.raises(machines.Refused, match="has a final row in .*m.jsonl:2 too; join the shard files first"):
        machines.count(tmp_path)


def test_a_server_the_record_could_not_describe_is_no_known_machine(tmp_path):
    (tmp_path / "machines.tsv").write_text(HEADER + "2026-12-05T12:00:00Z\t1/1\t8080\tm\tnot described\n")
    made = rows("m", 8080, ("2026-12-05T12:30:00.000Z",), ("2026-12-05T12:31:00.000Z",))
    for index, row in enumerate(made):
        row["cluster"], row["condition"] = "c0", ("x", "y")[index]
        row["id"], row["message_sha256"], row["output"] = f"c0/{row['condition']}", "0" * 64, str(index)
    write(tmp_path, "m.jsonl", made)
    assert machines.same_bytes(tmp_path, "x", "y") == {("m", "neither known"): (0, 1)}
