"""The price table: exact costs, unpriced means not measured, a bad table names its key."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from trialbook.errors import ArgumentError
from trialbook.gateway import read_prices

TABLE = """
[models."gpt-4o-2024-08-06"]
input = 2.5
output = 10.0
cache_read = 1.25

[models.claude-x]
input = 3
output = 15
cache_read = 0.3
cache_write = 3.75
"""


def test_cost_is_tokens_times_price_exactly(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(TABLE)
    prices = read_prices(path)
    # 1000 x 2.5 + 200 x 10 + 300 x 1.25 = 4875 dollars per million tokens -> 0.004875
    assert prices.cost(
        "gpt-4o-2024-08-06", input=1000, output=200, cache_read=300, cache_write=0
    ) == Decimal("0.004875")
    # 0.1 + 0.2 is not 0.3 in binary floats; the table's decimals keep it exact
    assert prices.cost("claude-x", input=0, output=0, cache_read=1, cache_write=0) == Decimal(
        "3E-7"
    )


def test_unpriced_is_not_measured_never_zero(tmp_path: Path) -> None:
    prices = read_prices({"models": {"m": {"input": 1, "output": 1}}})
    assert prices.cost("other", input=1, output=1, cache_read=0, cache_write=0) is None
    assert prices.cost(None, input=1, output=1, cache_read=0, cache_write=0) is None
    # m gives no cache_read price: a call that read the cache has no measured cost
    assert prices.cost("m", input=1, output=1, cache_read=5, cache_write=0) is None
    assert prices.cost("m", input=0, output=0, cache_read=0, cache_write=0) == 0


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[models.m]\ninput = 1\n", "models.m.output: missing"),
        ('[models.m]\ninput = "cheap"\noutput = 1\n', "models.m.input: must be a number"),
        ("[models.m]\ninput = -1\noutput = 1\n", "models.m.input: must be >= 0"),
        ("[models.m]\ninput = 1\noutput = 1\ncached = 1\n", "models.m.cached: unknown price"),
        ("[model.m]\ninput = 1\n", "unknown key 'model'"),
        ('[models."a b"]\ninput = 1\noutput = true\n', 'models."a b".output: must be a number'),
        ("[models.m\n", "not valid TOML"),
    ],
)
def test_a_bad_table_is_one_line_naming_the_key(tmp_path: Path, text: str, named: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(ArgumentError) as error:
        read_prices(path)
    assert named in str(error.value)
    assert "\n" not in str(error.value)
    assert error.value.argument == "prices"


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match=r"nope\.toml: cannot read"):
        read_prices(tmp_path / "nope.toml")
