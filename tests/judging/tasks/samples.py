"""What the tests of the judgement tasks share: the shipped task prompts, a chunk item and a
correctness item, a reply, and the baseline judge counting what it is asked."""

from __future__ import annotations

from judge.judging.backends.base import JudgeRequest
from judge.judging.backends.lexical import LexicalBackend
from judge.judging.prompts import load_prompt
from judge.judging.tasks.chunk import ChunkItem, chunk_key
from judge.judging.tasks.correctness import CorrectnessItem, correctness_key
from judge.judging.tasks.registry import TASKS, load_task_prompt
from judge.judging.verdict import Reply
from tests.conftest import REPO

PROMPTS = REPO / "prompts"
CHUNK = load_task_prompt(PROMPTS / "chunk.v1.md", TASKS["chunk"])
CORRECTNESS = load_task_prompt(PROMPTS / "correctness.v1.md", TASKS["correctness"])
ANSWER = load_prompt(PROMPTS / "judge.v1.md")

ITEM = ChunkItem(
    "q1",
    "年額プランはいくらですか？",
    "pricing/plans",
    2,
    "年額3,800円です。",
    chunk_key("年額プランはいくらですか？", "pricing/plans", "年額3,800円です。"),
)
ANSWER_ITEM = CorrectnessItem(
    "q1",
    "How much is the yearly plan?",
    "The yearly plan costs 3,800 yen.",
    True,
    "It costs 3,800 yen a year.",
    correctness_key(
        "How much is the yearly plan?",
        "The yearly plan costs 3,800 yen.",
        True,
        "It costs 3,800 yen a year.",
    ),
)


def reply(text: str, finish_reason: str = "stop") -> Reply:
    return Reply(text=text, finish_reason=finish_reason)


class Counting(LexicalBackend):
    """The baseline, counting what it is asked (by task)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[JudgeRequest] = []

    def complete(self, request: JudgeRequest) -> Reply:
        self.asked.append(request)
        return super().complete(request)
