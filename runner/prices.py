"""A prices file: what a model's tokens cost, in US dollars per million, to turn token counts into money.

One TOML table per model name (the `name` of its config, as trace rows record it; a name with dots is
quoted, `["qwen2.5-coder-0.5b"]`, or TOML reads it as nested tables):

    [gpt-4o-mini]
    input_per_mtok = 0.15
    output_per_mtok = 0.60
    batch_input_per_mtok = 0.075    # optional: rows collected through a provider's batch API
    batch_output_per_mtok = 0.30

Prices change and differ by account, so the kit ships none: a model without a
table gets its tokens counted and an empty cost, never a guessed price. A
missing, negative or non-numeric price, one above MAX_PRICE (a dollar a token, far
beyond any model's; 1e308 or 400 digits would make every cost overflow), an unknown
key or a model named twice (TOML itself refuses a table defined twice) is one line
naming file, line and key.

The text is searched for a table's line only to name a problem, never for a valid
table, so that reading takes time in proportion to the file (thousands of tables).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from common import tomlfile
from common.errors import UserError
from common.records import shown

REQUIRED = ("input_per_mtok", "output_per_mtok")
OPTIONAL = ("batch_input_per_mtok", "batch_output_per_mtok")
PER = 1_000_000  # tokens a price is given for
MAX_PRICE = 1_000_000  # USD per million tokens: a dollar a token


@dataclass(frozen=True)
class Price:
    """USD per million tokens; the batch prices are None when the file gives none."""

    input_per_mtok: float
    output_per_mtok: float
    batch_input_per_mtok: float | None = None
    batch_output_per_mtok: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, *, batch: bool = False) -> float:
        """The cost in USD of these tokens, at batch prices for a batch row (the plain ones when none given);
        math.inf when it is beyond a float (token counts of hundreds of digits, e.g. an estimate's ceiling
        from a config's max_tokens), which callers say is too large to price.

        >>> Price(0.15, 0.60).cost(1_000_000, 500_000)
        0.45
        >>> Price(0.15, 0.60, 0.075, 0.30).cost(1_000_000, 500_000, batch=True)
        0.225
        >>> Price(0.15, 0.60).cost(10**400, 0)
        inf
        """
        into = self.batch_input_per_mtok if batch and self.batch_input_per_mtok is not None else self.input_per_mtok
        out = self.batch_output_per_mtok if batch and self.batch_output_per_mtok is not None else \
            self.output_per_mtok
        try:
            return (prompt_tokens * into + completion_tokens * out) / PER
        except OverflowError:  # an int too large to become a float
            return math.inf


def quoted(model: str) -> str:
    """A model name as a TOML table header's key: bare when it can be, else quoted.

    >>> quoted("gpt-4o-mini"), quoted("qwen2.5-coder-0.5b")
    ('gpt-4o-mini', '"qwen2.5-coder-0.5b"')
    """
    return model if all(c.isalnum() or c in "-_" for c in model) else '"' + model.replace('"', '\\"') + '"'


def _dotted(name: str, table: dict) -> str:
    """The dotted name TOML read as nested tables ([a.b.c] as a -> b -> c), joined again from `name` (a.b)."""
    parts = [name]
    while isinstance(table, dict) and len(table) == 1 and isinstance(next(iter(table.values())), dict):
        key, table = next(iter(table.items()))
        parts.append(key)
    return ".".join(parts)


def load_prices(path: str | Path | None) -> dict[str, Price]:
    """The prices of a file (an empty dict for None: no prices, no costs)."""
    if path is None:
        return {}
    raw, text = tomlfile.load(path, "prices file")
    return parse_prices(raw, text, str(path))


def parse_prices(raw: dict, text: str, path: str) -> dict[str, Price]:
    """Check a parsed prices file; `text` locates the keys for the errors.

    >>> parse_prices({"m": {"input_per_mtok": 1, "output_per_mtok": 2}}, "", "p.toml")["m"].output_per_mtok
    2.0
    >>> parse_prices({"m": {"input_per_mtok": -1, "output_per_mtok": 2}}, "[m]\\ninput_per_mtok = -1\\n", "p.toml")
    Traceback (most recent call last):
    common.errors.UserError: p.toml:2: [m] key 'input_per_mtok' is -1, expected a price from 0 to 1,000,000 (USD ...
    """
    prices = {}
    for model, table in raw.items():

        def where(key: str | None = None, model: str = model) -> str:
            """file:line of `key` in the model's table (of the table, without a key): searched for only when
            there is a problem to name, since a search per table makes a file of thousands quadratic."""
            if key:
                line = tomlfile.line_of(text, key, tomlfile.table_start(text, model))
            else:
                line = tomlfile.line_of(text, model)
            return f"{path}:{line}" if line else path

        if not isinstance(table, dict):
            raise UserError(f"{where(model)}: {shown(model)} is not a table; expected [MODEL] with "
                            f"{', '.join(REQUIRED)}")
        for key in table:
            if isinstance(table[key], dict):  # [qwen2.5-coder] is the table qwen2 holding "5-coder"
                dotted = _dotted(f"{model}.{key}", table[key])
                line = tomlfile.line_of(text, dotted)
                where_dotted = f"{path}:{line}" if line else path
                raise UserError(f"{where_dotted}: [{dotted}] is a table inside [{model}], but a model's table holds "
                                f"prices only; a model name with dots is quoted: [{quoted(dotted)}]")
            if key not in REQUIRED + OPTIONAL:
                raise UserError(f"{where(key)}: [{model}] unknown key {shown(key)}; expected "
                                f"{', '.join(REQUIRED + OPTIONAL)}")
        values = {}
        for key in REQUIRED + OPTIONAL:
            if key not in table:
                if key in REQUIRED:
                    raise UserError(f"{where()}: [{model}] has no {key!r} (USD per million tokens)")
                continue
            value = table[key]
            # compared, not converted: a float of an int of 400 digits overflows, and NaN fails both comparisons
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_PRICE:
                shown_value = str(value).lower() if isinstance(value, bool) else shown(value)
                raise UserError(f"{where(key)}: [{model}] key {key!r} is {shown_value}, expected a price from 0 to "
                                f"{MAX_PRICE:,} (USD per million tokens)")
            values[key] = float(value)
        prices[model] = Price(**values)
    return prices
