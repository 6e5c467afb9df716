"""What a run's stages hand to the record's build (``judge.record.stages``): a further
judgement's results are read by its task name, and a judgement that was off reads as empty."""

from judge.judging.grading import Fingerprint
from judge.judging.types import CorrectnessVerdict, Verdict
from judge.record.stages import Judged, TaskResults
from judge.results.manifest import JudgeInfo

JUDGE = JudgeInfo(
    backend="fake",
    model="fake-1",
    digest=None,
    server_version=None,
    endpoint=None,
    chosen_because="a test",
    prompt="judge.v1.md",
    prompt_sha256="0" * 64,
    evidence_verifier_version=1,
)


def test_a_judgement_that_was_off_reads_as_empty() -> None:
    verdict = Verdict(question_id="q1", item_key="q1", status="ok", faithfulness=2, relevance=2)
    judged = Judged({"q1": verdict}, JUDGE, Fingerprint("fp", {}), 1.0)
    assert dict(judged.of("chunk")) == {} and dict(judged.of("anything")) == {}
    assert dict(judged.chunk_grades) == {} and dict(judged.correctness) == {}
    assert dict(judged.shown) == {}


def test_a_judgement_that_ran_is_read_by_its_task_name() -> None:
    correct = CorrectnessVerdict(
        question_id="q1", item_key="c-q1", status="ok", correctness=2, reason="same"
    )
    tasks = {"correctness": TaskResults("correctness", {"q1": correct}, Fingerprint("fc", {}))}
    judged = Judged({}, JUDGE, Fingerprint("fp", {}), 1.0, tasks=tasks)
    assert dict(judged.correctness) == {"q1": correct}
    assert dict(judged.of("correctness")) == {"q1": correct}
    assert dict(judged.chunk_grades) == {}
