"""Writes the Inspect AI logs beside this file, by running inspect-ai for real with its mockllm.

    PYTHONPATH=src python tests/importers/data/inspect/make_logs.py

Offline and deterministic in what the tests read (which sample passes, errs, hits a limit): the
scorers ignore the model's output and decide from the sample id and epoch. The mock model reports
its usage itself (12 tokens in, 3 out per call), as mockllm's default would fetch a tokenizer.
The logs were written with the inspect-ai version printed at the end (each log records it too).

- dict_scorer.eval: a scorer whose value is a dict ({"correct": .., "style": ..}), 6 x 2 epochs,
  reducers mean and pass_at_2;
- failed.eval: a sample raises and fail_on_error is left at its default: the eval's status is
  "error" and the log has no results section;
- errors.eval / errors_scored.eval: samples raise in some epochs (one in every epoch) with
  fail_on_error=False, without and with score_on_error;
- nan.eval: a scorer that returns NaN for some samples and epochs;
- limits.eval and limits.json (the same run written as a JSON log): a time limit, a message
  limit, and a sample whose solver never calls the model.
"""

from __future__ import annotations

import asyncio
import math
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import inspect_ai
from inspect_ai import Epochs, Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver

HERE = Path(__file__).parent


def _output(input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm/model", content="mock answer")
    out.usage = ModelUsage(input_tokens=12, output_tokens=3, total_tokens=15)
    return out


def _model() -> Any:
    return get_model("mockllm/model", custom_outputs=_output)


def _number(state: TaskState) -> int:
    return int(str(state.sample_id)[1:])


def _samples(n: int) -> MemoryDataset:
    return MemoryDataset([Sample(id=f"s{i}", input=f"Question {i}", target="x") for i in range(n)])


@scorer(metrics={"correct": [mean()], "style": [mean()]})
def dict_value() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        i = _number(state)
        return Score(
            value={"correct": int((i + state.epoch) % 2 == 0 or i == 0), "style": int(i % 3 == 0)}
        )

    return score


@scorer(metrics=[accuracy(), stderr()])
def parity() -> Any:
    """CORRECT for an even sample number plus epoch (sample 0: always)."""

    async def score(state: TaskState, target: Target) -> Score:
        i = _number(state)
        return Score(value=CORRECT if i == 0 or (i + state.epoch) % 2 == 0 else INCORRECT)

    return score


@scorer(metrics=[mean()])
def sometimes_nan() -> Any:
    """NaN (Inspect's unscored value) for sample 1 in epoch 1 and for sample 2 in every epoch."""

    async def score(state: TaskState, target: Target) -> Score:
        i = _number(state)
        if (i == 1 and state.epoch == 1) or i == 2:
            return Score(value=math.nan)
        return Score(value=1.0 if (i + state.epoch) % 2 == 0 else 0.0)

    return score


@solver
def failing(raise_on: set[tuple[int, int]]) -> Any:
    """Calls the model, then raises for the (sample number, epoch) pairs given (epoch 0: all)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await generate(state)
        i = _number(state)
        if (i, state.epoch) in raise_on or (i, 0) in raise_on:
            raise RuntimeError(f"tool crashed on sample {i} epoch {state.epoch}")
        return state

    return solve


@solver
def limited() -> Any:
    """s1 sleeps past the time limit; s2 keeps talking past the message limit; s3 never calls the
    model; the others answer once."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        i = _number(state)
        if i == 3:
            return state
        state = await generate(state)
        if i == 1:
            await asyncio.sleep(3)
        if i == 2:
            for _ in range(10):
                state.messages.append(ChatMessageUser(content="and?"))
                state = await generate(state)
        return state

    return solve


def _run(name: str, task: Task, **options: Any) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        (log,) = inspect_eval(task, log_dir=tmp, display="none", max_samples=1, **options)
        shutil.copy(log.location, HERE / f"{name}.eval")
        if name == "limits":
            from inspect_ai.log import read_eval_log, write_eval_log

            write_eval_log(read_eval_log(log.location), str(HERE / f"{name}.json"), format="json")
    return log


def main() -> None:
    _run(
        "dict_scorer",
        Task(
            dataset=_samples(6),
            solver=failing(set()),
            scorer=dict_value(),
            epochs=Epochs(2, ["mean", "pass_at_2"]),
            model=_model(),
        ),
    )
    _run(
        "failed",
        Task(dataset=_samples(4), solver=failing({(2, 0)}), scorer=parity(), model=_model()),
    )
    errors = {(1, 1), (3, 2), (4, 0)}  # sample 4 errs in every epoch
    for name, on_error in (("errors", False), ("errors_scored", True)):
        _run(
            name,
            Task(
                dataset=_samples(6),
                solver=failing(errors),
                scorer=parity(),
                epochs=Epochs(3, ["mean"]),
                model=_model(),
            ),
            fail_on_error=False,
            score_on_error=on_error,
        )
    _run(
        "nan",
        Task(
            dataset=_samples(5),
            solver=failing(set()),
            scorer=sometimes_nan(),
            epochs=Epochs(2, ["mean"]),
            model=_model(),
        ),
    )
    _run(
        "limits",
        Task(
            dataset=_samples(5),
            solver=limited(),
            scorer=parity(),
            epochs=Epochs(2, ["mean", "pass_at_2"]),
            model=_model(),
            time_limit=1,
            message_limit=4,
        ),
    )
    print(f"inspect_ai {inspect_ai.__version__}, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
