"""Each task's container environment, made ready before a run writes anything.

A task names its environment as ``image = "NAME"`` or ``dockerfile = "environment/Dockerfile"``
(or takes the suite's ``image``). In the container tier every such image is had before the first
attempt: a Dockerfile is built (once per build context, ``_container.build_image``) and every image
is run once as a trivial container, which also finds what this machine's engine needs
(``_container.engine_for``); an image that cannot be had refuses the run in one line, nothing
written. In another tier a task that names an environment is refused: it would run against the
host's system instead of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from trialbook.errors import ArgumentError
from trialbook.harness.sandbox._container import (
    LABEL_HARNESS,
    ContainerError,
    ContainerTarget,
    Engine,
    build_image,
    engine_for,
    find_engine,
    missing_folder,
    network_problem,
)
from trialbook.harness.sandbox._sandbox import Tier
from trialbook.suite import ContainerSettings, Task

__all__ = ["prepare_environments"]


def prepare_environments(
    tasks: Sequence[Task], tier: Tier, harness: str
) -> Mapping[str, ContainerTarget]:
    """Task id -> the engine and image its attempts run in (empty outside the container tier).

    Raises :class:`ArgumentError` naming the task and what is wrong with its environment."""
    if tier != "container":
        named = [t for t in tasks if t.environment is not None]
        if named:
            first = named[0]
            raise ArgumentError(
                f"task {first.id} names a container environment ({first.environment}): run it "
                f"with --sandbox container (the {tier} tier would run it on the host's system)",
                argument="sandbox",
            )
        return {}
    bare = [t.id for t in tasks if t.environment is None]
    if bare:
        raise ArgumentError(
            f"task {bare[0]} names no container image: give image (or dockerfile) in its "
            "task.toml, or image in suite.toml",
            argument="sandbox",
        )
    name, exe = find_engine()
    builder = Engine(name, exe)
    images: dict[str, str] = {}
    for task in tasks:
        if task.dockerfile is not None:
            try:
                images[task.id] = build_image(builder, task.dockerfile, task.dockerfile.parent)
            except ContainerError as exc:
                raise ArgumentError(f"task {task.id}: {exc}", argument="dockerfile") from None
        else:
            assert task.image is not None
            images[task.id] = task.image
    out: dict[str, ContainerTarget] = {}
    by_id = {t.id: t for t in tasks}
    for task_id, image in images.items():
        try:
            engine = engine_for(None, image)
        except ArgumentError as exc:
            raise ArgumentError(f"task {task_id}: {exc}", argument=exc.argument) from None
        if by_id[task_id].network and (why := network_problem(engine, image)):
            raise ArgumentError(
                f"task {task_id} sets network = true, and {engine.name} cannot give a container "
                f"a network here: {why} (install what it names, or set network = false)",
                argument="sandbox",
            )
        settings = by_id[task_id].container or ContainerSettings()
        # a Dockerfile's WORKDIR makes its folder; a named image may lack it
        by_name = settings.workdir is not None and by_id[task_id].dockerfile is None
        if (
            by_name
            and settings.workdir
            and (why := missing_folder(engine, image, settings.workdir))
        ):
            raise ArgumentError(
                f"task {task_id}: its image {image} has no folder {settings.workdir} to start "
                f"the workspace from ({why})",
                argument="workdir",
            )
        out[task_id] = ContainerTarget(
            engine,
            image,
            {LABEL_HARNESS: harness},
            workdir=settings.workdir,
            oracle_dir=settings.oracle_dir,
            cpus=settings.cpus,
            memory_mb=settings.memory_mb,
            reward=settings.verdict == "harbor-reward",
            built=by_id[task_id].dockerfile is not None,
        )
    return out
