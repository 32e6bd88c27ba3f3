"""``[model]`` in suite.toml: read with the same checks as trialbook.toml's, its ``prices`` relative
to the suite's folder, and outside the ``dataset_id`` and the lock (docs/gateway.md, "Settings in
files")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_suite
from trialbook.errors import ArgumentError
from trialbook.harness import load_project
from trialbook.suite import ModelTable, SuiteError, check_lock, freeze, load_suite

TABLE = (
    '[model]\nupstream = "https://api.openai.com"\nkey_env = "OPENAI_REAL_KEY"\n'
    'prices = "prices.toml"\nmax_cost_per_attempt = 1\nmax_tokens_per_attempt = 5000\n'
    "accept_open_network = true\n"
)


def test_suite_toml_names_its_model_in_a_model_table(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path / "s", {"t": {}}, k=1, extra=TABLE, freeze=False))
    assert suite.model == ModelTable(
        upstream="https://api.openai.com",
        key_env="OPENAI_REAL_KEY",
        prices=(tmp_path / "s" / "prices.toml").resolve(),  # beside suite.toml, not the caller
        max_cost_per_attempt=1.0,
        max_tokens_per_attempt=5000,
        accept_open_network=True,
    )
    plain = load_suite(make_suite(tmp_path / "p", {"t": {}}, k=1, freeze=False))
    assert plain.model is None


def test_the_model_table_is_not_part_of_the_dataset_id_or_the_lock(tmp_path: Path) -> None:
    plain = make_suite(tmp_path / "a", {"t": {}}, k=1)
    with_model = make_suite(tmp_path / "a2", {"t": {}}, k=1, extra=TABLE)
    assert freeze(load_suite(with_model)).dataset_id == freeze(load_suite(plain)).dataset_id
    # a budget edited after the freeze: the lock still holds, no new freeze is needed
    toml = with_model / "suite.toml"
    toml.write_text(toml.read_text().replace("5000", "9000"))
    assert load_suite(with_model).model.max_tokens_per_attempt == 9000  # type: ignore[union-attr]
    assert check_lock(with_model).matches


@pytest.mark.parametrize(
    ("table", "line"),
    [
        ("[model]\nkey = 'sk-...'\n", "model.key: unknown key"),
        ("[model]\nupstream = 'https://x'\n", "model.key_env: missing"),
        (
            "[model]\nmax_tokens_per_attempt = 'many'\n",
            "model.max_tokens_per_attempt: expected a whole number, got 'many'",
        ),
        ("[model]\nmax_cost_per_attempt = true\n", "model.max_cost_per_attempt: expected a number"),
        (
            "[model]\naccept_open_network = 'yes'\n",
            "model.accept_open_network: expected true or false",
        ),
        ("[model]\nprices = ''\n", "model.prices: expected a non-empty string"),
        ("model = 3\n", "model: expected a table ([model])"),
    ],
)
def test_a_bad_model_table_is_one_line_naming_the_key_in_either_file(
    tmp_path: Path, table: str, line: str
) -> None:
    root = make_suite(tmp_path / "s", {"t": {}}, k=1, extra=table, freeze=False)
    with pytest.raises(SuiteError) as in_suite:
        load_suite(root)
    [problem] = in_suite.value.problems
    assert problem.startswith(f"{root / 'suite.toml'}: {line}")
    # trialbook.toml's [model] is read by the same checks, and says the same
    (tmp_path / "trialbook.toml").write_text(table)
    with pytest.raises(ArgumentError) as in_project:
        load_project(tmp_path)
    assert str(in_project.value) == problem.replace(
        str(root / "suite.toml"), str(tmp_path / "trialbook.toml")
    )
