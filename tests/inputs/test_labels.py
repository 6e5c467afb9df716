"""Human labels: conflicts and bad scores are errors; labels of retired questions are skipped."""

from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.inputs.golden import load_golden
from judge.inputs.labels import load_labels, load_labels_if_any
from tests.conftest import write_jsonl

Tiny = Callable[..., Config]


def test_labels_conflict_and_unknown_question(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    base = {
        "question_id": "q1",
        "answer_sha256": "a" * 64,
        "faithfulness": 2,
        "relevance": 2,
        "labeller": "ana",
    }
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            base,
            base,  # an identical repeat is harmless
            {**base, "relevance": 1},
            {**base, "question_id": "q9"},
            {**base, "faithfulness": 3},
        ],
    )
    with pytest.raises(InputError) as caught:
        load_labels(path, golden.by_id())
    problems = caught.value.problems
    # q9 is not a golden id: a retired question's label, skipped rather than an error (below).
    assert len(problems) == 2
    assert ":3: conflicts with line 1: labeller 'ana'" in problems[0]
    assert problems[1].endswith(":5: faithfulness: Input should be less than or equal to 2")


def test_labels_of_retired_questions_do_not_block_a_run(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    base = {"answer_sha256": "a" * 64, "faithfulness": 2, "relevance": 2, "labeller": "ana"}
    path = write_jsonl(
        tmp_path / "labels.jsonl", [{**base, "question_id": "q1"}, {**base, "question_id": "q_old"}]
    )
    labels = load_labels(path, golden.by_id())
    assert [lab.question_id for lab in labels.current] == ["q1"]
    assert [(line, lab.question_id) for line, lab in labels.retired] == [(2, "q_old")]
    assert labels.warning() == (
        f"{path}: 1 label(s) for question(s) no longer in the golden set were skipped (q_old); "
        "'judge check' lists them"
    )
    assert labels.retired_lines() == [
        f"{path}:2: question_id 'q_old' is no longer a golden id; the label is kept but not "
        "counted (delete the line if the question is gone for good)"
    ]


def test_a_labels_file_that_does_not_exist_is_reported_not_taken_as_none(
    tiny: Tiny, tmp_path: Path
) -> None:
    golden = load_golden(tiny().data)
    path = tmp_path / "lables.jsonl"
    labels = load_labels_if_any(path, golden.by_id())
    assert labels.current == [] and labels.missing
    problem = (
        f"{path}: data.labels names this file but it does not exist; fix the path in "
        "judge.toml, or create an empty file if there are no labels yet"
    )
    assert labels.missing_problem() == problem
    assert labels.warning() == f"{problem} (no labels are used)"


def test_an_empty_labels_file_or_no_setting_means_no_labels_yet(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    empty = tmp_path / "labels.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    for labels in (load_labels_if_any(empty, golden.by_id()), load_labels_if_any(None, {})):
        assert labels.current == [] and not labels.missing
        assert labels.missing_problem() is None and labels.warning() is None


def test_a_dangling_symlink_as_labels_file_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    link = tmp_path / "labels.jsonl"
    link.symlink_to(tmp_path / "gone.jsonl")
    with pytest.raises(InputError, match="symlink"):
        load_labels_if_any(link, golden.by_id())


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"faithfulness": "2"}, 'faithfulness: must be an integer such as 2, not "2"'),
        ({"faithfulness": True}, "faithfulness: must be an integer such as 2, not true"),
        ({"faithfulness": 2.0}, "faithfulness: must be an integer such as 2, not 2.0"),
        ({"relevance": "1"}, 'relevance: must be an integer such as 2, not "1"'),
        ({"labelled_at": 5}, "labelled_at: must be an ISO 8601 date-time string"),
        ({"question_id": "q 1"}, "question_id: contains U+0020 (a space)"),
    ],
)
def test_label_scores_are_read_strictly(
    tiny: Tiny, tmp_path: Path, change: dict[str, object], said: str
) -> None:
    golden = load_golden(tiny().data)
    base = {"question_id": "q1", "answer_sha256": "a" * 64, "faithfulness": 2, "relevance": 2}
    path = write_jsonl(tmp_path / "labels.jsonl", [{**base, "labeller": "ana", **change}])
    with pytest.raises(InputError) as caught:
        load_labels(path, golden.by_id())
    assert caught.value.problems[0].startswith(f"{path}:1: {said}")


def test_an_iso_labelled_at_still_loads(tiny: Tiny, tmp_path: Path) -> None:
    golden = load_golden(tiny().data)
    label = {"question_id": "q1", "answer_sha256": "a" * 64, "faithfulness": 2, "relevance": 1}
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [{**label, "labeller": "ana", "labelled_at": "2026-11-21T09:00:00Z"}],
    )
    (loaded,) = load_labels(path, golden.by_id()).current
    assert loaded.labelled_at is not None and loaded.labelled_at.day == 21


def test_scores_are_the_label_without_its_answer_hash(tiny: Tiny, tmp_path: Path) -> None:
    from judge.inputs.labels import LabelScores

    golden = load_golden(tiny().data)
    full = {
        "question_id": "q1",
        "answer_sha256": "b" * 64,
        "faithfulness": 1,
        "relevance": 0,
        "labeller": "ana",
        "note": "half of it",
        "labelled_at": "2026-11-21T09:00:00Z",
        "source": "review",
    }
    bare = {k: full[k] for k in ("question_id", "answer_sha256", "faithfulness", "relevance")}
    path = write_jsonl(tmp_path / "labels.jsonl", [full, {**bare, "labeller": "bo"}])
    for label in load_labels(path, golden.by_id()).current:
        scores = label.scores()
        # What dumping the label and validating the dump gives, field for field and as JSON.
        expected = LabelScores.model_validate(label.model_dump(exclude={"answer_sha256"}))
        assert type(scores) is LabelScores
        assert scores == expected
        assert scores.model_dump_json() == expected.model_dump_json()
        assert scores.model_fields_set == expected.model_fields_set
