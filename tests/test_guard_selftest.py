"""The guard's measurement (guard/measure.py, scripts/guard_selftest.py): each verdict where it belongs, the
hand-written set well formed and split for good, its held-out part never listed, a malformed case one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from common.errors import UserError
from guard.mark import guard
from guard.measure import VERDICTS, verdict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import guard_selftest  # noqa: E402

sys.path.remove(str(ROOT / "scripts"))

MESSAGE = "Fix:\n\nx = 1\ny = 2\nbtw, for class"  # artifact 6..17, remark 18..32


@pytest.mark.parametrize(("artifact", "remark", "expected"), [
    ((6, 17), (18, 31), "right"),
    ((6, 31), None, "artifact cut"),  # the last line was the paste's own
    ((6, 12), (12, 31), "remark inside"),  # the remark began on the paste's last line
    (None, None, "no paste"),
    ((12, 17), (18, 32), "instruction inside"),  # had "x = 1" been the user's words before the paste
    ((20, 32), (6, 17), "remark inside"),  # both cut and remark inside: the remark, the worse, is said
])
def test_each_verdict_where_it_belongs(artifact, remark, expected):
    assert verdict(guard(MESSAGE), artifact, remark, MESSAGE) == expected
    assert verdict(guard("hello"), artifact, remark) == "not marked"
    assert expected in VERDICTS


def test_the_hand_written_set_is_as_its_readme_says():
    cases = guard_selftest.read_handset(guard_selftest.HANDSET)
    kinds = [case.kind for case in cases]
    assert len(cases) >= 200 and kinds.count("negative") >= 80 and kinds.count("no-paste") > 0
    assert len({case.id for case in cases}) == len(cases)
    assert sum("\r\n" in case.message for case in cases) >= 20
    parts = {(guard_selftest.handset_half(c.id), c.kind) for c in cases}
    assert parts == {(p, k) for p in guard_selftest.HANDSET_HALVES for k in guard_selftest.KINDS}
    readme = (guard_selftest.HANDSET.parent / "README.md").read_text(encoding="utf-8")
    dev = [c for c in cases if guard_selftest.handset_half(c.id) == "dev"]
    assert f"{len(dev)} dev" in readme and f"{len(cases) - len(dev)} held-out" in readme


def test_misses_never_list_a_held_out_case():
    cases = guard_selftest.read_handset(guard_selftest.HANDSET)
    listed = {line.split()[0] for line in guard_selftest.misses(cases)}
    assert listed and all(guard_selftest.handset_half(case_id) == "dev" for case_id in listed)


def test_the_held_out_part_is_counted_only_when_asked():
    cases = guard_selftest.read_handset(guard_selftest.HANDSET)
    assert {row.part for row in guard_selftest.handset_rows(cases, held_out=False)} == {"dev"}
    assert {row.part for row in guard_selftest.handset_rows(cases, held_out=True)} == {"dev", "held-out", "all"}


@pytest.mark.parametrize(("row", "expected"), [
    ({"id": "x", "kind": "maybe", "message": "m"}, "field 'kind' is 'maybe'"),
    ({"id": "x", "kind": "positive", "message": "ab ab", "artifact": "ab", "remark": "c"},
     "field 'artifact': expected a text that occurs exactly once"),
    ({"id": "x", "kind": "positive", "message": "tail then paste", "artifact": "paste", "remark": "tail"},
     "field 'remark': expected it after the artifact"),
    ({"id": "x", "kind": "negative", "message": "a b", "artifact": "a", "remark": "b"},
     "a negative case has an artifact and no remark"),
])
def test_a_malformed_case_is_one_line_naming_file_line_and_field(tmp_path, row, expected):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(UserError) as caught:
        guard_selftest.read_handset(path)
    assert str(caught.value).startswith(f"{path}:1: ") and expected in str(caught.value)


def test_the_script_runs_as_its_docstring_says(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "guard_selftest.py")], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "seam          held-out  newline" in done.stdout and "hand-written  held-out" not in done.stdout
