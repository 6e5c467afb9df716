"""Every judgement the judge knows, by name, in the order a run asks them: the answer's
verdict first, then the further judgements (``judge.judging.tasks.base``: what a task is).

Adding a judgement is a task module, its prompt file, and its line here.
"""

from __future__ import annotations

from pathlib import Path

from judge.config import Config
from judge.errors import ConfigError
from judge.judging.prompts import Prompt, load_prompt
from judge.judging.tasks.answer import ANSWER
from judge.judging.tasks.base import AnyTask
from judge.judging.tasks.chunk import CHUNK
from judge.judging.tasks.correctness import CORRECTNESS

TASKS: dict[str, AnyTask] = {task.name: task for task in (ANSWER, CHUNK, CORRECTNESS)}
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
