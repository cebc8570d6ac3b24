"""A campaign's target loaded, its framework picked and its module run once: what is wrong is bad input here."""

from __future__ import annotations

from pathlib import Path

from dnsse.engine.inputs import InputParameter
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework, framework_named


def load(
    target_text: str, framework_name: str, world_size: int, faults: bool = True, directory: Path | None = None
) -> tuple[LoadedTarget, Framework]:
    """Parse and compile the target and pick its framework; BadInput on any defect.

    ``directory``: where a launch command's relative paths start (None: here).
    """
    if world_size < 1:
        raise BadInput(f"--world-size must be at least 1, got {world_size}")
    target = LoadedTarget(TargetSpec.parse(target_text, directory), framework_name)
    return target, framework_named(target.framework, world_size, faults)


def preflight(target: LoadedTarget, framework: Framework) -> None:
    """Run the target's module once, so an import error is bad input, not a bug."""
    try:
        framework.inputs(target)
    except BadInput:
        raise
    except Exception as error:  # noqa: BLE001 - whatever the module raises, the user must fix it
        raise BadInput(
            f"the target {target.spec} failed to load: {type(error).__name__}: {error}. "
            "Run it with plain Python to see the full error."
        ) from None


def pin_inputs(parameters: list[InputParameter], given: dict[str, str]) -> dict[str, object]:
    """The values of ``--input NAME=VALUE`` options; BadInput for an unknown name or a bad value."""
    by_name = {parameter.name: parameter for parameter in parameters}
    pinned = {}
    for name, text in given.items():
        if name not in by_name:
            known = ", ".join(by_name) or "(none: the entry point has no typed keyword parameters with defaults)"
            raise BadInput(f"--input {name}=...: the entry point has no input {name!r}; its inputs are: {known}")
        pinned[name] = by_name[name].parse(text)
    return pinned
