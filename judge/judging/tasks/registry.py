"""Every judgement the judge knows, by name, in the order a run asks them: the answer's
verdict first, then the further judgements in the order of their names
(``judge.judging.tasks.base``: what a task is).

The judgements are the task modules of ``judge.judging.tasks``: each module defines one
``TaskDef`` named like the module (``chunk.py`` defines the task ``chunk``). Adding a
judgement is its task module and its prompt file; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from judge.config import Config
from judge.errors import ConfigError
from judge.judging.prompts import Prompt, load_prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import AnyTask, TaskDef

#: The modules of the tasks package that define no task.
_NOT_TASKS = frozenset({"base", "registry"})


def discovered(package_name: str = "judge.judging.tasks") -> dict[str, AnyTask]:
    """The ``TaskDef`` of each task module, by name: the answer's first, then by name. A task
    module must define exactly one task, named like the module (a test holds every module to
    it), so a misnamed or missing one fails at import, not in a run."""
    package = importlib.import_module(package_name)
    found: dict[str, AnyTask] = {ANSWER.name: ANSWER}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name in _NOT_TASKS or info.name == ANSWER.name:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        tasks = [value for value in vars(module).values() if isinstance(value, TaskDef)]
        if len(tasks) != 1 or tasks[0].name != info.name:
            named = ", ".join(task.name for task in tasks) or "none"
            raise RuntimeError(
                f"judge/judging/tasks/{info.name}.py must define one task named "
                f"'{info.name}' (it defines: {named})"
            )
        found[info.name] = tasks[0]
    return found


TASKS: dict[str, AnyTask] = discovered()
#: The judgements asked after the answers, each when its configuration turns it on.
FURTHER: tuple[AnyTask, ...] = tuple(task for task in TASKS.values() if task is not ANSWER)


def task_named(name: str) -> AnyTask:
    """The task of that name (``ConfigError`` naming the known ones otherwise)."""
    task = TASKS.get(name)
    if task is None:
        raise ConfigError(f"no judgement called '{name}'; the judge knows {', '.join(TASKS)}")
    return task


def load_task_prompt(path: Path, task: AnyTask) -> Prompt:
    """Read and check ``task``'s prompt file; a prompt of another known task is refused by
    name (``judge.judging.prompts.load_prompt``)."""
    others = [other.prompt for other in TASKS.values() if other is not task]
    return load_prompt(path, task.prompt, others)


def enabled_tasks(config: Config) -> list[tuple[AnyTask, Prompt]]:
    """The further judgements ``config`` turns on, each with its prompt loaded and checked
    (called before anything is asked, so a bad prompt fails first). A ``[judge.tasks.<name>]``
    table of no task that reads it is refused (the chunk grades have ``[judge.chunks]``)."""
    for name in config.judge.tasks:
        if name not in TASKS or TASKS[name].table != f"judge.tasks.{name}":
            raise ConfigError(
                f"judge.tasks.{name}: no judgement reads this table; the judge's judgements "
                f"are configured in {', '.join(task.table for task in FURTHER)}"
            )
    out = []
    for task in FURTHER:
        settings = task.settings(config)
        if settings.enabled:
            out.append((task, load_task_prompt(settings.prompt, task)))
    return out
