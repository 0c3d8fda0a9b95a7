"""scripts/machines.py: the record of which machine answered which rows of a study collected over sessions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import machines  # noqa: E402

HEADER = "started\tshard\tport\tmodel\tmachine\n"


def test_describe_names_the_cpu_and_the_vector_units_that_change_the_sums():
    intel = ("processor\t: 0\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R)  Platinum 8480+\n"
             "flags\t\t: avx2 avx512f amx_tile amx_int8\nprocessor\t: 1\nmodel name\t: other\n")
    assert machines.describe(intel, 2) == (
        "Intel(R) Xeon(R) Platinum 8480+ (family 6, model 143; avx2 avx512f amx_tile), 2 CPUs")
    assert machines.describe("model name\t: Old\nflags\t: sse2\n", 1) == (
        "Old (family ?, model ?; none of avx2/avx512f/amx_tile), 1 CPU")


def row(model: str, port: int, *started: str) -> dict:
    return {"model": model, "request": {"url": f"http://127.0.0.1:{port}/v1/chat/completions"},
            "attempts": [{"started_at": moment} for moment in started]}


def write(folder: Path, name: str, rows: list[dict]) -> None:
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_each_row_goes_to_the_last_server_of_its_model_and_port_started_before_its_answer(tmp_path):
    (tmp_path / "machines.tsv").write_text(
        HEADER + "2026-12-05T12:00:00Z\t1/2\t8080\tm\tA\n2026-12-05T12:00:01Z\t2/2\t8081\tm\tB\n"
        "2026-12-05T13:00:00Z\t1/2\t8080\tm\tC\n2026-12-05T13:00:00Z\t1/2\t8080\tother\tD\n")
    write(tmp_path, "m.jsonl", [
        row("m", 8080, "2026-12-05T11:59:59.999Z"),  # before any record
        row("m", 8080, "2026-12-05T12:30:00.000Z"),  # A
        row("m", 8080, "2026-12-05T11:00:00.000Z", "2026-12-05T13:00:05.000Z"),  # lost at 11:00, answered on C
        row("m", 8080, "2026-12-05T14:00:00.000Z")])  # C (D is another model's)
    write(tmp_path, "m.jsonl.shard-2", [row("m", 8081, "2026-12-05T12:10:00.000Z")])  # B
    (tmp_path / "m.jsonl.shard-2.sent").write_text("{}\n")  # a note, not rows
    assert machines.count(tmp_path) == {("not recorded", "m"): 1, ("A", "m"): 1, ("B", "m"): 1, ("C", "m"): 2}


def test_count_prints_a_table_and_a_folder_without_a_record_is_all_not_recorded(tmp_path, capsys):
    write(tmp_path, "m.jsonl", [row("m", 8080, "2026-12-05T12:30:00.000Z")] * 2)
    assert machines.main(["count", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "rows\tmodel\tmachine\n2\tm\tnot recorded\n"


@pytest.mark.parametrize(("log", "said"), [
    ("started\tport\n", "machines.tsv:1: expected the header started shard port model machine"),
    (HEADER + "2026-12-05T12:00:00Z\t1/2\t8080\tm\n", "machines.tsv:2: expected 5 tab-separated fields, got 4"),
    (HEADER + "yesterday\t1/2\t8080\tm\tA\n", "machines.tsv:2: started: expected a UTC time such as"),
])
def test_a_damaged_record_is_refused_naming_its_line(tmp_path, log, said):
    (tmp_path / "machines.tsv").write_text(log)
    with pytest.raises(SystemExit) as stopped:
        machines.count(tmp_path)
    assert said in str(stopped.value) and "\n" not in str(stopped.value)


def test_a_torn_trace_line_is_refused_naming_its_line(tmp_path):
    (tmp_path / "m.jsonl").write_text(json.dumps(row("m", 8080, "2026-12-05T12:30:00.000Z")) + "\n{\"model\": ")
    with pytest.raises(SystemExit) as stopped:
        machines.count(tmp_path)
    assert "m.jsonl:2: expected a trace row" in str(stopped.value)
