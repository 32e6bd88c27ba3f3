"""The run record's model settings: written at the run's start, taken again by its resume, and
checked against any given again (harness/_model.py, ``model_record`` and ``resumed_model``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trialbook.errors import ArgumentError
from trialbook.harness._model import ModelOptions, model_record, resumed_model


def _options(tmp_path: Path, **changes: object) -> ModelOptions:
    prices = tmp_path / "prices.toml"
    if not prices.exists():
        prices.write_text("[models.m]\ninput = 1\noutput = 2\n")
    values: dict[str, object] = {
        "upstream": "http://127.0.0.1:9",
        "key_env": "KEY",
        "prices": prices,
        "max_cost_per_attempt": 0.5,
        "max_tokens_per_attempt": 1000,
    }
    values.update(changes)
    return ModelOptions(**values)  # type: ignore[arg-type]


def test_a_resume_takes_the_recorded_settings_as_they_were(tmp_path: Path) -> None:
    options = _options(tmp_path)
    recorded = model_record(options, network_model=True)
    assert recorded is not None
    assert "KEY" in recorded
    assert "sk-" not in recorded
    kept, network = resumed_model("r", recorded, None, network_model=False)
    assert kept == options
    assert network is True
    # the same settings given again are accepted
    assert resumed_model("r", recorded, options, network_model=True) == (options, True)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"upstream": "http://127.0.0.1:10"}, "model_upstream"),
        ({"key_env": "OTHER"}, "model_key_env"),
        ({"max_cost_per_attempt": 1.0}, "max_cost_per_attempt"),
        ({"max_tokens_per_attempt": None}, "max_tokens_per_attempt"),
        ({"prices": None}, "prices"),
    ],
)
def test_a_setting_given_again_that_differs_is_refused_by_its_name(
    tmp_path: Path, change: dict[str, object], named: str
) -> None:
    recorded = model_record(_options(tmp_path), network_model=False)
    with pytest.raises(ArgumentError) as info:
        resumed_model("r", recorded, _options(tmp_path, **change), network_model=False)
    assert info.value.argument == named
    assert str(info.value).startswith(f"{named}: run 'r' reached its model with")


def test_network_model_added_on_resume_is_refused(tmp_path: Path) -> None:
    recorded = model_record(_options(tmp_path), network_model=False)
    with pytest.raises(ArgumentError) as info:
        resumed_model("r", recorded, None, network_model=True)
    assert info.value.argument == "network_model"


def test_a_price_table_gone_since_the_run_is_refused(tmp_path: Path) -> None:
    recorded = model_record(_options(tmp_path), network_model=False)
    (tmp_path / "prices.toml").unlink()
    with pytest.raises(ArgumentError, match=r"prices\.toml, which has changed or is gone") as info:
        resumed_model("r", recorded, None, network_model=False)
    assert info.value.argument == "prices"


@pytest.mark.parametrize(
    "forged",
    ["[]", "{}", json.dumps({"upstream": 1, "key_env": "K"}), "not json", '{"prices": 3}'],
)
def test_a_record_trialbook_did_not_write_is_refused_not_used(forged: str) -> None:
    with pytest.raises(ArgumentError, match="not what trialbook writes there") as info:
        resumed_model("r", forged, None, network_model=False)
    assert info.value.argument == "resume"


def test_a_record_without_settings_keeps_what_was_given(tmp_path: Path) -> None:
    options = _options(tmp_path)
    assert resumed_model("r", None, options, network_model=True) == (options, True)
    assert resumed_model("r", None, None, network_model=False) == (None, False)
