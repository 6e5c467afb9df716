"""``judge check``'s lines: a pure function of what the check found."""

from types import SimpleNamespace as NS

from judge.report.check_text import check_lines


def _checked(judge: object = None) -> NS:
    labels = NS(current=[1, 2], retired_lines=lambda: ["1 label of a retired question"])
    inputs = NS(
        golden=NS(questions=[1, 2, 3], corpus={"a": 1, "b": 2}),
        run=NS(records=[1, 2, 3]),
        run_source="run.jsonl",
        labels=labels,
    )
    return NS(
        inputs=inputs,
        per_type={"factual": 2, "negative": 1},
        unlabelled=["q3"],
        documents=1,
        labellers=1,
        answers=NS(describe=lambda: "from run.jsonl"),
        judge=judge,
        detectable=[NS(describe=lambda: "factual: 2 questions")],
        gating=None,
    )


def test_the_inputs_the_judge_and_what_the_gate_can_call() -> None:
    assert check_lines(_checked(), with_labels=True) == [
        "questions: 3 (2 factual, 1 negative)",
        "           relevant chunks not labelled for 1 (judged only)",
        "corpus:    2 chunks in 1 documents",
        "run:       3 answers from run.jsonl",
        "answers:   from run.jsonl",
        "labels:    2 from 1 labeller(s)",
        "           1 label of a retired question",
        "judge:     not checked (--no-judge)",
        "the gate can call (docs/gate.md):",
        "  factual: 2 questions",
    ]


def test_a_preflight_says_what_the_cache_holds() -> None:
    further = NS(line=lambda: "chunk grades: 4 of 6 in the cache")
    judge = NS(
        judge="ollama gemma", reason="asked", cached=1, total=3, to_judge=2, further=[further]
    )
    lines = check_lines(_checked(judge), with_labels=False)
    assert not any(line.startswith("labels:") for line in lines)
    assert lines[5:9] == [
        "judge:     ollama gemma",
        "           (asked)",
        "cache:     1 of 3 answers judged already (from the cache); 2 to judge",
        "           chunk grades: 4 of 6 in the cache",
    ]


def test_a_set_too_small_for_the_judges_error_is_warned_under_the_gates_lines() -> None:
    warning = "with 2 questions a type and 20 % verdict error, about 4 in 10 seasons would ..."
    checked = _checked()
    checked.gating = warning
    lines = check_lines(checked, with_labels=False)
    assert lines[-2:] == ["  factual: 2 questions", f"  warning: {warning}"]
