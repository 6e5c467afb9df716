"""Corrected estimates (prediction-powered inference): the estimator against ppi-python, the
projection to more labels by hand, which items and labels count, and the report on the sample.

ppi-python is a dev dependency and imported once here (about 2.5 s: scipy, statsmodels, numba);
a missing package is a collection error, not a skip.
"""

import json
import math
import random
import sys
import warnings
from pathlib import Path

import numpy as np
import ppi_py
import pytest

from judge.audit.agreement import as_json, audit_items, corrected_json
from judge.audit.ppi import labels_to_halve, ppi_mean, projected_variance
from judge.audit.types import MIN_LABELLED, AuditResult, Halving
from judge.cli import main
from judge.config import load_config
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.types import ContextChunk, Verdict
from judge.pipeline.audit import run_audit
from judge.record.store import ReportsDir
from judge.report.audit_text import render_audit
from judge.report.corrected_text import corrected_lines, corrected_markdown_lines
from judge.results.item_record import ItemRecord
from tests.conftest import REPO, SAMPLE

Z95 = 1.959963984540054


def _reference(
    human: list[float], predicted: list[float], unlabelled: list[float], lam: float | None
) -> tuple[float, float, float]:
    """ppi-python's point estimate and 95 % interval (alpha 0.05)."""
    y, yhat, yhat_u = (np.array(v, dtype=float) for v in (human, predicted, unlabelled))
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=lam)
    return float(np.ravel(point)[0]), float(low[0]), float(high[0])


def _random_case(
    rng: random.Random, n: int, big_n: int
) -> tuple[list[float], list[float], list[float]]:
    """0-2 judge scores; human scores that agree with the judge more or less (some items
    labelled by two people, so their mean is a half)."""
    agree = rng.random()
    predicted = [float(rng.choice((0, 1, 2))) for _ in range(n)]
    human = []
    for p in predicted:
        h = p if rng.random() < agree else float(rng.choice((0, 1, 2)))
        if rng.random() < 0.2:
            h = (h + rng.choice((0, 1, 2))) / 2
        human.append(h)
    unlabelled = [float(rng.choice((0, 1, 2))) for _ in range(big_n)]
    return human, predicted, unlabelled


@pytest.mark.parametrize("lam", [None, 1.0], ids=["ppi++ (power-tuned)", "classical ppi"])
def test_matches_ppi_python_on_random_cases(lam: float | None) -> None:
    rng = random.Random(10)
    compared = 0
    tuned: set[str] = set()
    for n in (2, 3, 5, 10, 12, 30, 100):
        for big_n in (1, 4, 18, 60, 500):
            for _ in range(6):
                human, predicted, unlabelled = _random_case(rng, n, big_n)
                if len(set(predicted + unlabelled)) == 1:
                    continue  # ppi-python gives NaN; tested below
                ours = ppi_mean(human, predicted, unlabelled, lam=lam)
                point, low, high = _reference(human, predicted, unlabelled, lam)
                assert ours.estimate == pytest.approx(point, abs=1e-12), (n, big_n)
                assert ours.interval.low == pytest.approx(low, abs=1e-12), (n, big_n)
                assert ours.interval.high == pytest.approx(high, abs=1e-12), (n, big_n)
                assert 0 <= ours.lam <= 1
                tuned.add("0" if ours.lam == 0 else "1" if ours.lam == 1 else "between")
                compared += 1
    assert compared > 180
    # Power tuning was exercised in all its branches: clipped at 0, clipped at 1, in between.
    assert tuned == ({"0", "1", "between"} if lam is None else {"1"})


def test_power_tuning_ignores_a_useless_judge_and_trusts_a_good_one() -> None:
    rng = random.Random(3)
    human = [float(rng.choice((0, 1, 2))) for _ in range(40)]
    noise = [float(rng.choice((0, 1, 2))) for _ in range(40)]
    unlabelled = [float(rng.choice((0, 1, 2))) for _ in range(400)]
    useless = ppi_mean(human, noise, unlabelled)
    labels_only = ppi_mean(human, noise, unlabelled, lam=0)
    classical = ppi_mean(human, noise, unlabelled, lam=1)
    assert useless.lam < 0.2
    # Classical PPI with a judge that is noise is wider than the labels alone; PPI++ is not.
    assert classical.half_width > labels_only.half_width
    assert useless.half_width <= labels_only.half_width * 1.01
    good = ppi_mean(human, human, unlabelled)
    assert good.lam > 0.8 and good.half_width < labels_only.half_width / 2


def test_where_ppi_python_is_undefined_the_estimate_is_the_labels_mean() -> None:
    human = [2.0, 1.0, 2.0, 0.0, 2.0, 2.0, 1.0, 2.0, 2.0, 2.0]
    mean = sum(human) / len(human)
    spread = math.sqrt(sum((h - mean) ** 2 for h in human) / len(human)) / math.sqrt(len(human))
    # No unlabelled item (every judged item labelled): ppi-python divides by zero.
    with warnings.catch_warnings(), pytest.raises(ZeroDivisionError):
        warnings.simplefilter("ignore")  # numpy's "mean of empty slice" on the way
        _reference(human, human, [], None)
    alone = ppi_mean(human, [2.0] * 5 + [1.0] * 5, [])
    assert alone.lam == 0 and alone.estimate == pytest.approx(mean)
    assert alone.interval.low == pytest.approx(mean - Z95 * spread)
    assert alone.interval.high == pytest.approx(mean + Z95 * spread)
    # The judge gave every item the same score: ppi-python's λ is 0/0. Every λ gives the same
    # estimate and interval here, so ours equals ppi-python's with λ fixed.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        assert math.isnan(_reference(human, [2.0] * 10, [2.0] * 7, None)[0])
    flat = ppi_mean(human, [2.0] * 10, [2.0] * 7)
    assert flat.lam == 0
    for lam in (0.0, 0.5, 1.0):
        point, low, high = _reference(human, [2.0] * 10, [2.0] * 7, lam)
        assert (flat.estimate, *flat.interval) == pytest.approx((point, low, high))


def test_bad_input_is_refused_with_one_line() -> None:
    with pytest.raises(ValueError, match="2 human scores but 1 judge scores"):
        ppi_mean([1.0, 2.0], [1.0], [2.0])
    with pytest.raises(ValueError, match="no labelled items"):
        ppi_mean([], [], [2.0])
    with pytest.raises(ValueError, match="needs unlabelled items"):
        ppi_mean([1.0, 2.0], [1.0, 2.0], [], lam=1)


def test_labels_to_halve_with_a_useless_judge_is_four_times_the_labels() -> None:
    # The judge gives 1 to every labelled item: no covariance, λ = 0 now and after more labels,
    # so the variance is Var(Y)/n = 1/10 and halving the interval needs n' = 40: 30 more.
    human = [0.0, 2.0] * 5
    estimate = ppi_mean(human, [1.0] * 10, [0.0, 2.0] * 20)
    assert estimate.lam == 0 and estimate.variance == pytest.approx(0.1)
    assert labels_to_halve(estimate) == Halving(30, 30, 0)
    # Only 20 unlabelled items: 20 of them, then 10 new questions.
    few = ppi_mean(human, [1.0] * 10, [0.0, 2.0] * 10)
    assert labels_to_halve(few) == Halving(30, 20, 10)
    # Everything labelled already: all new questions.
    assert labels_to_halve(ppi_mean(human, [1.0] * 10, [])) == Halving(30, 0, 30)


def test_labels_to_halve_with_a_good_judge_by_hand() -> None:
    # Y = 2·Ŷ on the 10 labelled items (Ŷ = 0 or 1 by halves), 1000 unlabelled items scored
    # 0 or 1 by halves. Cov(Y, Ŷ) = 0.5, Var(Ŷ) = 0.25, so λ = 0.5 / ((1 + n/N)·0.25…) ≈ 1.98
    # → clipped to 1. Y − Ŷ = Ŷ, so Var = 0.25/10 + 0.25/1000 = 0.02525, estimate
    # mean(U) + mean(Y − Ŷ) = 0.5 + 0.5 = 1.
    predicted = [0.0, 1.0] * 5
    human = [2 * p for p in predicted]
    estimate = ppi_mean(human, predicted, [0.0, 1.0] * 500)
    assert estimate.lam == 1
    assert estimate.estimate == pytest.approx(1.0)
    assert estimate.variance == pytest.approx(0.02525)
    assert estimate.half_width == pytest.approx(Z95 * math.sqrt(0.02525))
    # Target 0.02525 / 4 = 0.0063125. λ stays 1 (n' stays far below N'); k more labels give
    # 0.25/(10 + k) + 0.25/(1000 − k): k = 31 → 0.0063556 (too much), k = 32 → 0.0062107.
    assert labels_to_halve(estimate) == Halving(32, 32, 0)


def test_labels_to_halve_actually_halves_by_the_estimators_own_formula() -> None:
    rng = random.Random(5)
    for _ in range(40):
        human, predicted, unlabelled = _random_case(rng, rng.randrange(10, 40), 300)
        estimate = ppi_mean(human, predicted, unlabelled)
        halving = labels_to_halve(estimate)
        if halving is None:
            assert estimate.variance == 0
            continue
        assert halving.from_run + halving.new_questions == halving.more
        # The projection starts at today's variance, reaches a quarter of it at `more`, and
        # not one label earlier.
        assert projected_variance(estimate, 0) == pytest.approx(estimate.variance)
        assert projected_variance(estimate, halving.more) <= estimate.variance / 4 * (1 + 1e-9)
        if halving.more > 1:
            assert projected_variance(estimate, halving.more - 1) > estimate.variance / 4


def test_no_width_means_nothing_to_halve() -> None:
    assert labels_to_halve(ppi_mean([2.0] * 10, [2.0] * 10, [2.0] * 5)) is None


# --- which items and labels count ------------------------------------------------------------


def _item(qid: str, kind: str, answer: str | None = None) -> ItemRecord:
    return ItemRecord(
        question_id=qid,
        type=kind,
        split="",
        question=f"質問 {qid}：自動バックアップはいつ実行されますか？",
        answer=answer or f"毎日午前3時に実行されます（{qid}）。",
        context=[ContextChunk(1, "backup/auto", "自動バックアップは毎日午前3時に実行されます。")],
        retrieval={},
        labels=[],
    )


def _ok(qid: str, f: int, r: int) -> Verdict:
    return Verdict(question_id=qid, item_key="k", status="ok", faithfulness=f, relevance=r)


def _label(
    item: ItemRecord, f: int, r: int, who: str = "ana", sha: str | None = None
) -> HumanLabel:
    return HumanLabel(
        question_id=item.question_id,
        answer_sha256=sha or text_sha256(item.answer),
        faithfulness=f,
        relevance=r,
        labeller=who,
    )


def _mixed() -> tuple[dict[str, ItemRecord], dict[str, Verdict], list[HumanLabel]]:
    """Type "factual": 12 labelled ok items (one labelled twice), 2 labelled items with non-ok
    verdicts, 3 unlabelled ok items (one with a label for another answer). Type "negative":
    4 items, 3 labelled."""
    items: dict[str, ItemRecord] = {}
    verdicts: dict[str, Verdict] = {}
    labels: list[HumanLabel] = []
    judge_f = [2, 2, 1, 2, 0, 2, 2, 1, 2, 2, 0, 2]
    human_f = [2, 1, 1, 2, 0, 2, 1, 0, 2, 2, 1, 2]
    for index, (jf, hf) in enumerate(zip(judge_f, human_f, strict=True)):
        qid = f"f{index:02d}"
        item = items[qid] = _item(qid, "factual")
        verdicts[qid] = _ok(qid, jf, 2)
        labels.append(_label(item, hf, 2 if index % 3 else 1))
    labels.append(_label(items["f00"], 0, 2, who="ben"))  # f00's human faithfulness: (2+0)/2
    for qid, status in (("f12", "parse_error"), ("f13", "truncated")):
        items[qid] = _item(qid, "factual")
        verdicts[qid] = Verdict(question_id=qid, item_key="k", status=status)  # type: ignore[arg-type]
        labels.append(_label(items[qid], 0, 0))
    for qid, score in (("f14", 2), ("f15", 1), ("f16", 2)):
        items[qid] = _item(qid, "factual")
        verdicts[qid] = _ok(qid, score, 2)
    # A label given for another answer to f16: it does not count, f16 stays unlabelled.
    labels.append(_label(items["f16"], 0, 0, sha=text_sha256("an earlier answer")))
    for index in range(4):
        qid = f"n{index}"
        items[qid] = _item(qid, "negative")
        verdicts[qid] = _ok(qid, 2, 2)
        if index < 3:
            labels.append(_label(items[qid], 1, 2))
    return items, verdicts, labels


@pytest.fixture
def mixed() -> AuditResult:
    return audit_items("run-1", *_mixed())


def test_the_cell_uses_ok_verdicts_and_matching_labels_only(mixed: AuditResult) -> None:
    cell = mixed.corrected["faithfulness"]["factual"]
    assert (cell.items, cell.judged, cell.labelled, cell.labels) == (17, 15, 12, 13)
    assert cell.unused_labels == 2  # f12 and f13: no judge score to correct
    assert cell.note is None and cell.estimate is not None
    # The same estimate from the numbers written out: f00's human score is the two labels' mean.
    human = [1.0, 1, 1, 2, 0, 2, 1, 0, 2, 2, 1, 2]
    predicted = [2.0, 2, 1, 2, 0, 2, 2, 1, 2, 2, 0, 2]
    expected = ppi_mean(human, predicted, [2.0, 1.0, 2.0])
    assert cell.estimate == expected
    assert cell.estimate.unlabelled == 3  # f14, f15 and f16 (its label is for another answer)
    assert cell.judge_mean == pytest.approx(sum([*predicted, 2, 1, 2]) / 15)
    point, low, high = _reference(human, predicted, [2.0, 1.0, 2.0], None)
    assert (cell.estimate.estimate, *cell.estimate.interval) == pytest.approx((point, low, high))
    assert cell.halving == labels_to_halve(expected)


def test_review_page_labels_are_left_out_and_counted(mixed: AuditResult) -> None:
    # A reviewer's marks on f14 and f15 (chosen, not sampled): the estimate is the one without
    # them, and the cell says how many were left out; the agreement still counts them.
    items, verdicts, labels = _mixed()
    chosen = [
        _label(items[qid], 0, 0, who="rev").model_copy(update={"source": "review"})
        for qid in ("f14", "f15")
    ]
    result = audit_items("run-1", items, verdicts, [*labels, *chosen])
    cell = result.corrected["faithfulness"]["factual"]
    assert cell.estimate == mixed.corrected["faithfulness"]["factual"].estimate
    assert (cell.chosen_labels, cell.labelled, cell.estimate.unlabelled) == (2, 12, 3)
    assert result.judge.labelled == mixed.judge.labelled + 2
    assert "review.html marks" in "\n".join(corrected_lines(result.corrected, result.pooled))
    cells = corrected_json(result.corrected)["per_axis"]["faithfulness"]
    assert cells["factual"]["review_labels_not_used"] == 2


def test_too_few_labels_says_so_instead_of_a_number(mixed: AuditResult) -> None:
    negative = mixed.corrected["faithfulness"]["negative"]
    assert negative.estimate is None and negative.halving is None
    assert negative.note == f"too few labels (3 of {MIN_LABELLED})"
    assert negative.judge_mean == 2.0
    # "all" pools both types: 15 labelled items.
    pooled = mixed.corrected["faithfulness"]["all"]
    assert pooled.labelled == 15 and pooled.estimate is not None
    assert list(mixed.corrected["faithfulness"]) == ["factual", "negative", "all"]


def test_labels_without_spread_still_get_an_interval_from_the_pseudo_labels(
    mixed: AuditResult,
) -> None:
    # Relevance: the factual labels are 2 and 1 (spread), the judge says 2 everywhere, so λ = 0
    # and the interval is the labels' own. Make every relevance label 2: no spread. The old
    # rule showed no interval ("no spread in 12 labels"); now the plus-four variance gives one:
    # λ = 0 (the judge's scores are all 2), rectifiers = labels = 2, so
    # S = 0 + 2·((0 − 2)² + (2 − 2)²) = 8 and Var₊ = 8 / 15 / 16 (N's part is 0).
    items, verdicts, labels = _mixed()
    flat = [label.model_copy(update={"relevance": 2}) for label in labels]
    cell = audit_items("run-1", items, verdicts, flat).corrected["relevance"]["factual"]
    assert cell.estimate is not None and cell.estimate.estimate == 2.0
    assert cell.note is None and cell.halving is None  # nothing to halve: variance 0
    assert cell.estimate.plus_variance == pytest.approx(8 / 15 / 16)
    t11 = 2.200985160091639  # scipy.stats.t.ppf(0.975, 11)
    low = 2 - t11 * math.sqrt(8 / 15 / 16)
    assert tuple(cell.estimate.shown) == pytest.approx((low, 2.0))
    # The judge gave 2 to every one of them: said as such, not as "no spread".
    assert cell.matched == 12
    assert cell.remark == "the judge matched all 12 labels; width from the pseudo-labels"
    assert mixed.corrected["relevance"]["factual"].note is None
    assert mixed.corrected["relevance"]["factual"].remark is None


def test_json_has_a_note_wherever_a_number_is_missing(mixed: AuditResult) -> None:
    data = json.loads(json.dumps(as_json(mixed)["corrected"], allow_nan=False))
    assert data["min_labelled"] == MIN_LABELLED and data["level"] == 0.95
    factual = data["per_axis"]["faithfulness"]["factual"]
    cell = mixed.corrected["faithfulness"]["factual"]
    assert cell.estimate is not None
    assert factual["estimate"] == cell.estimate.value == cell.estimate.estimate
    assert factual["interval"] == {
        "low": cell.estimate.shown.low,
        "high": cell.estimate.shown.high,
    }
    # PPI++'s own figures (ppi-python's) stay in the file under their own names.
    assert factual["ppi_estimate"] == cell.estimate.estimate
    assert factual["normal_interval"] == {
        "low": cell.estimate.interval.low,
        "high": cell.estimate.interval.high,
    }
    assert factual["unused_labels"] == 2 and factual["labelled"] == 12 and factual["labels"] == 13
    assert factual["labels_to_halve"]["more"] >= 1
    negative = data["per_axis"]["faithfulness"]["negative"]
    assert negative["estimate"] is None and negative["note"] == "too few labels (3 of 10)"


# --- the shipped sample ----------------------------------------------------------------------


def test_the_sample_report_carries_the_corrected_estimates(tmp_path: Path) -> None:
    toml = tmp_path / "judge.toml"
    base = (REPO / "judge.toml").read_text(encoding="utf-8").split("[retrieval]")[0]
    toml.write_text(
        base.replace('"golden/sample/', f'"{SAMPLE}/')
        + f'\n[judge]\ncache_path = "{tmp_path / "cache.sqlite3"}"\n'
        + f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
        + f'\n[reports]\ndir = "{tmp_path / "reports"}"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "run", "--backend", "lexical"]) == 0
    config = load_config(toml)
    folder = ReportsDir(config.reports.dir).folder(None)
    report = json.loads((folder.path / "report.json").read_text(encoding="utf-8"))
    # report.json holds the audit's figures as the typed record does (``AuditResult.figures``);
    # the record read back is the object the views show.
    saved = report["audit"]["corrected"]
    audit = folder.record().audit
    assert audit is not None
    corrected = corrected_json(audit.corrected, audit.pooled)["per_axis"]
    # Every sample question is labelled (30 items, 42 labels): no unlabelled item, so the
    # corrected estimate is the mean of the items' human scores, with the labels' interval.
    factual = corrected["faithfulness"]["factual"]
    assert (factual["labelled"], factual["labels"], factual["unlabelled"]) == (12, 16, 0)
    on_disk = saved["faithfulness"]["factual"]
    assert (on_disk["labelled"], on_disk["labels"], on_disk["estimate"]["unlabelled"]) == (
        12,
        16,
        0,
    )
    assert on_disk["estimate"]["value"] == factual["estimate"]
    assert on_disk["estimate"]["shown"] == factual["interval"]
    assert on_disk["halving"] == factual["labels_to_halve"]
    assert on_disk["fit"] is None  # the record keeps the figures shown, not the fits
    humans: dict[str, list[int]] = {}
    items = folder.items()
    for line in (SAMPLE / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        label = json.loads(line)
        if items[label["question_id"]].type == "factual":
            humans.setdefault(label["question_id"], []).append(label["faithfulness"])
    scores = [sum(v) / len(v) for v in humans.values()]
    assert factual["estimate"] == pytest.approx(sum(scores) / len(scores))
    assert factual["interval"]["low"] < factual["estimate"] < factual["interval"]["high"]
    assert factual["labels_to_halve"] == {"more": 36, "from_run": 0, "new_questions": 36}
    for small in ("procedural", "negative", "out_of_scope"):
        cell = corrected["faithfulness"][small]
        assert cell["estimate"] is None and cell["note"].startswith("too few labels")
        assert saved["faithfulness"][small]["estimate"] is None
    # Relevance on factual: all 12 items labelled 2, the lexical judge disagrees on some: an
    # interval from the pseudo-labels, said as such (it was "no spread in 12 labels").
    relevance = corrected["relevance"]["factual"]
    assert relevance["note"] is None and relevance["estimate"] == 2.0
    assert relevance["remark"] == "all 12 labels alike; width from the pseudo-labels"
    assert relevance["interval"]["high"] == 2.0 and 1.5 < relevance["interval"]["low"] < 1.7
    assert corrected["faithfulness"]["all"]["labelled"] == 30
    # The same figures on the terminal (`judge audit`) and as the table for report.md.
    labels = [
        HumanLabel.model_validate_json(line)
        for line in (SAMPLE / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    result = run_audit(folder, labels)
    assert as_json(result)["corrected"] == corrected_json(audit.corrected, audit.pooled)
    assert result.figures() == audit
    text = render_audit(result, "lexical")
    assert "corrected estimates" in text and "too few labels (8 of 10)" in text
    table = "\n".join(corrected_markdown_lines(result))
    row = f"| factual | 12 | 12 (16 labels) | {factual['judge_mean']:.2f} | {factual['estimate']:.2f} ["
    assert row in table
    # report.md carries that table under the agreement with human labels.
    report_md = (folder.path / "report.md").read_text(encoding="utf-8")
    assert "### Corrected estimates" in report_md and row in report_md


# --- assumptions -----------------------------------------------------------------------------


def test_importing_ppi_python_downloads_nothing() -> None:
    # ppi_py.datasets fetches with gdown; the estimators must not pull it in.
    assert "ppi_py.datasets" not in sys.modules and "gdown" not in sys.modules


@pytest.mark.slow
def test_coverage_of_the_intervals_shown() -> None:
    """The old measurement, of ppi-python's normal interval (``PpiEstimate.interval``, no
    longer the one shown): how often the nominal 95 % interval contains the true mean, among
    the cells with a width, on 0-2 scores drawn at random; the judge agrees with the human
    70 % of the time and otherwise leans to 2. The interval shown now is measured in
    tests/audit/test_ppi_coverage.py and bench/ppi_sim.py."""

    def draw(rng: random.Random, p: tuple[float, ...]) -> tuple[int, int]:
        y = rng.choices((0, 1, 2), p)[0]
        return (y, y) if rng.random() < 0.7 else (y, rng.choices((0, 1, 2), (0.2, 0.3, 0.5))[0])

    for p in ((0.15, 0.2, 0.65), (0.05, 0.05, 0.9)):
        truth = sum(score * w for score, w in zip((0, 1, 2), p, strict=True))
        for n in (10, 40):
            rng = random.Random(0)
            shown = covered = 0
            for _ in range(2000):
                labelled = [draw(rng, p) for _ in range(n)]
                unlabelled = [float(draw(rng, p)[1]) for _ in range(100)]
                e = ppi_mean(
                    [float(y) for y, _ in labelled], [float(j) for _, j in labelled], unlabelled
                )
                if e.rectifier_variance > 0:
                    shown += 1
                    covered += e.interval.low <= truth <= e.interval.high
            print(f"p={p} n={n}: shown {shown / 2000:.1%}, covering {covered / shown:.1%}")
            assert covered / shown > (0.84 if n == 10 else 0.87)
