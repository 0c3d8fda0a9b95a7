"""The prices reader takes time in proportion to the file (issue 36, defect 10: 16,000 tables took about 50 s):
a valid file's text is searched for no table or key, since the text is read again only to name the line of a
problem. Checked by counting the searches, not by timing them (timing: perf/prices_reader.py)."""

from __future__ import annotations

import tomllib

import pytest

from common import tomlfile
from common.errors import UserError
from runner import prices

TABLES = 2000


def _text(tables: int, last: str = "") -> str:
    return "".join(f'[model-{i}]\ninput_per_mtok = 1\noutput_per_mtok = 2\n' for i in range(tables)) + last


@pytest.fixture
def searches(monkeypatch):
    """How many times the reader searched the file's text for a table or a key."""
    count = {"searches": 0}
    for name in ("table_start", "line_of"):
        found = getattr(tomlfile, name)

        def counted(*args, found=found, **kwargs):
            count["searches"] += 1
            return found(*args, **kwargs)

        monkeypatch.setattr(tomlfile, name, counted)
    return count


def test_a_valid_file_is_read_without_searching_its_text(searches):
    text = _text(TABLES)
    read = prices.parse_prices(tomllib.loads(text), text, "p.toml")
    assert len(read) == TABLES and read[f"model-{TABLES - 1}"].output_per_mtok == 2.0
    assert searches["searches"] == 0


def test_a_problem_in_the_last_table_is_found_with_a_few_searches_and_named_at_its_line(searches):
    text = _text(TABLES, "[late]\ninput_per_mtok = -1\noutput_per_mtok = 2\n")
    with pytest.raises(UserError, match=rf"^p\.toml:{3 * TABLES + 2}: \[late\] key 'input_per_mtok' is -1"):
        prices.parse_prices(tomllib.loads(text), text, "p.toml")
    assert searches["searches"] <= 2
