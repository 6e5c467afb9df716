"""``judge.audit.align``: labelled examples of the exact answer, folds that never share a
question, exemplars that cover every score, type and language within the budget, and the
variant that shows them in the prompt's fixed prefix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.audit.align import (
    EXEMPLARS_HEADING,
    Example,
    choose_exemplars,
    deal_folds,
    estimated_tokens,
    examples_of,
    exemplar_block,
    language_of,
    next_version_name,
    variant_prompt,
    variant_text,
)
from judge.config import load_config
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.items import JudgeItem, build_items
from judge.judging.prompts import load_prompt
from judge.pipeline.inputs import load_inputs

REPO = Path(__file__).resolve().parents[2]
PROMPT = REPO / "prompts" / "judge.v1.md"


def _sample(name: str) -> tuple[list[JudgeItem], list[HumanLabel]]:
    toml = REPO / "judge.toml" if name == "sample" else REPO / "golden" / name / "judge.toml"
    config = load_config(toml)
    inputs = load_inputs(config)
    return build_items(inputs.golden, inputs.run, config.retrieval.context_k), inputs.labels.current


@pytest.fixture(scope="module")
def ja() -> list[Example]:
    items, labels = _sample("sample")
    return examples_of(items, labels)


@pytest.fixture(scope="module")
def en() -> list[Example]:
    items, labels = _sample("sample-en")
    return examples_of(items, labels)


def test_a_label_counts_only_for_the_exact_answer_it_was_given_for() -> None:
    items, labels = _sample("sample")
    first = labels[0]
    other = first.model_copy(update={"answer_sha256": text_sha256("another answer")})
    rest = [label for label in labels if label.question_id != first.question_id]
    examples = examples_of(items, [other, *rest])
    assert first.question_id not in {e.question_id for e in examples}
    matched = examples_of(items, [first])
    assert [e.question_id for e in matched] == [first.question_id]
    assert text_sha256(matched[0].item.record.answer) == first.answer_sha256


def test_every_labeller_of_an_answer_is_kept_and_the_first_by_name_is_shown(
    ja: list[Example],
) -> None:
    several = [e for e in ja if len(e.labels) > 1]
    assert several  # the sample has answers labelled twice
    for example in several:
        names = [label.labeller for label in example.labels]
        assert names == sorted(names)
        assert example.label is example.labels[0]


def test_languages_are_told_apart() -> None:
    assert language_of("年払いにしたらいくら？") == "ja"
    assert language_of("ウィジェット") == "ja"
    assert language_of("How do I change the wifi password?") == "en"


def test_the_token_estimate_counts_japanese_and_english() -> None:
    assert estimated_tokens("年払い") == 3
    assert estimated_tokens("abcdefghijkl") == 4


@pytest.mark.parametrize("folds", [2, 3, 5, 100])
def test_folds_never_share_a_question_and_hold_every_example(ja: list[Example], folds: int) -> None:
    dealt = deal_folds(ja, folds, seed=3)
    assert len(dealt) == min(folds, len(ja))
    ids = [e.question_id for fold in dealt for e in fold]
    assert sorted(ids) == sorted(e.question_id for e in ja)
    assert len(ids) == len(set(ids))


def test_folds_spread_each_type_and_are_seeded(ja: list[Example]) -> None:
    dealt = deal_folds(ja, 3, seed=1)
    for name in {e.type for e in ja}:
        counts = [sum(e.type == name for e in fold) for fold in dealt]
        assert max(counts) - min(counts) <= 1
    assert [[e.question_id for e in f] for f in deal_folds(ja, 3, seed=1)] == [
        [e.question_id for e in f] for f in dealt
    ]
    assert [[e.question_id for e in f] for f in deal_folds(ja, 3, seed=2)] != [
        [e.question_id for e in f] for f in dealt
    ]


def _covered(chosen: list[Example]) -> set[tuple[str, str]]:
    found = set()
    for e in chosen:
        found |= {
            ("faithfulness", str(e.label.faithfulness)),
            ("relevance", str(e.label.relevance)),
        }
        found |= {("type", e.type), ("language", e.language)}
    return found


def _available(pool: list[Example]) -> set[tuple[str, str]]:
    return _covered(pool)


def test_exemplars_cover_every_score_type_and_language_of_both_samples(
    ja: list[Example], en: list[Example]
) -> None:
    pool = ja + en
    chosen = choose_exemplars(pool, 12, 100_000)
    assert _covered(chosen) == _available(pool)
    assert {("language", "ja"), ("language", "en")} <= _covered(chosen)
    assert len({e.question_id + e.language for e in chosen}) == len(chosen)


def test_exemplars_stay_within_k_and_the_budget(ja: list[Example]) -> None:
    assert len(choose_exemplars(ja, 3, 100_000)) == 3
    budget = 2500
    chosen = choose_exemplars(ja, 10, budget)
    assert chosen
    assert estimated_tokens(exemplar_block(chosen)) <= budget
    assert choose_exemplars(ja, 4, 10) == []  # nothing fits


def test_the_choice_is_deterministic(en: list[Example]) -> None:
    assert choose_exemplars(en, 4, 6000) == choose_exemplars(list(reversed(en)), 4, 6000)


def test_an_exemplar_shows_the_material_the_grade_and_the_reason(en: list[Example]) -> None:
    example = next(e for e in en if e.label.note)
    block = exemplar_block([example])
    assert block.startswith(EXEMPLARS_HEADING)
    assert example.item.record.answer[:30] in block
    assert example.item.context[0].chunk_id in block
    grade = f"faithfulness {example.label.faithfulness}, relevance {example.label.relevance}"
    assert f"PERSON'S GRADE: {grade}" in block
    assert "PERSON'S REASON" in block
    reference = example.item.question.reference_answer
    assert reference and f"REFERENCE (JSON string):\n{json.dumps(reference)}" in block
    assert "REFERENCE" not in exemplar_block([example], uses_reference=False)


def test_the_exemplars_go_in_the_fixed_prefix_and_the_prompt_still_loads(
    ja: list[Example], tmp_path: Path
) -> None:
    base = load_prompt(PROMPT)
    variant = variant_prompt(base, choose_exemplars(ja, 2, 100_000), "judge+k2.md")
    first_placeholder = variant.text.index("$question")
    assert variant.text.index(EXEMPLARS_HEADING) < variant.text.index("Below is the quoted")
    assert variant.text.index(EXEMPLARS_HEADING) < first_placeholder
    assert variant.sha256 != base.sha256
    assert variant.mode == base.mode
    path = tmp_path / "judge.v2.md"
    path.write_text(variant.text, encoding="utf-8")
    assert load_prompt(path).text == variant.text
    # Two items share every character up to the first placeholder: the cached prefix.
    a, b = ja[0].item, ja[1].item
    rendered_a, rendered_b = variant.render_item(a), variant.render_item(b)
    assert rendered_a[:first_placeholder] == rendered_b[:first_placeholder]


def test_a_dollar_in_an_exemplar_stays_text() -> None:
    base = "Rules.\n\nBelow is the quoted material.\n\nQ: $question\nC: $context\nA: $answer\n"
    text = variant_text(base, "EXAMPLE: it costs $5 (¥800)\n")
    assert "$$5" in text
    assert text.index("EXAMPLE") < text.index("Below is the quoted")


def test_without_the_material_line_the_block_goes_before_the_first_placeholder() -> None:
    base = "Rules.\n\nQ: $question\nC: $context\nA: $answer\n"
    assert variant_text(base, "EX\n") == "Rules.\n\nEX\nQ: $question\nC: $context\nA: $answer\n"
    assert variant_text(base, "") == base


def test_the_next_version_is_one_past_the_highest() -> None:
    path = Path("prompts/judge.v1.md")
    assert next_version_name(path, ["judge.v1.md", "chunk.v1.md"]) == "judge.v2.md"
    assert next_version_name(path, ["judge.v1.md", "judge.v3.md", "judge.cited.v7.md"]) == (
        "judge.v4.md"
    )
    assert next_version_name(Path("mine.md"), ["mine.md"]) == "mine.v2.md"
