"""``judge.cli.inputs``: ``judge check`` (what it counts, every problem on its own line, the
adapter's failures; the judge is preflighted, exit 3 naming the URL when Ollama does not
answer, as ``judge run``, and ``--no-judge`` skips it for offline use), ``judge retrieval`` and
``judge trec export``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.cli.helpers import toml_of
from tests.conftest import QUESTIONS, REPO

Tiny = Callable[..., Config]


def _unreachable(config: Config) -> str:
    assert config.source is not None
    toml = Path(config.source)
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("[judge]\n", '[judge]\nbackend = "ollama"\n')
        + '\n[judge.ollama]\nhost = "http://127.0.0.1:9"\n',
        encoding="utf-8",
    )
    return str(toml)


def test_check_with_an_unreachable_ollama_exits_3_naming_the_url(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _unreachable(tiny())
    assert main(["--config", toml, "check"]) == 3
    captured = capsys.readouterr()
    assert captured.err.startswith("error: Ollama not reachable at http://127.0.0.1:9")
    assert "'ollama serve'" in captured.err
    assert "ok" not in captured.out.split()


def test_check_no_judge_passes_offline(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    toml = _unreachable(tiny())
    assert main(["--config", toml, "check", "--no-judge"]) == 0
    out = capsys.readouterr().out
    assert "judge:     not checked (--no-judge)" in out
    assert out.rstrip().endswith("ok")


def test_check_shows_the_judge_the_answers_and_the_cache(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert config.source is not None
    assert main(["--config", str(config.source), "run", "--backend", "lexical"]) == 0
    capsys.readouterr()
    toml = Path(config.source)
    toml.write_text(
        toml.read_text(encoding="utf-8").replace("[judge]\n", '[judge]\nbackend = "lexical"\n'),
        encoding="utf-8",
    )
    assert main(["--config", str(toml), "check"]) == 0
    out = capsys.readouterr().out
    assert "judge:     lexical · " in out
    assert "           (backend = lexical)" in out
    assert "cache:     4 of 4 answers judged already (from the cache); 0 to judge" in out
    assert "answers:   a run file: no adapter is asked" in out
    assert out.rstrip().endswith("ok")


def test_check_preflights_the_backend_the_option_names(
    tiny: Callable[..., Config], capsys: pytest.CaptureFixture[str]
) -> None:
    # As `judge run --backend lexical` would judge: no model opened, and the cache counted.
    config = tiny()
    assert config.source is not None
    assert main(["--config", str(config.source), "check", "--backend", "lexical"]) == 0
    out = capsys.readouterr().out
    assert "judge:     lexical · lexical-v6" in out
    assert "cache:     0 of 4 answers judged already (from the cache); 4 to judge" in out


def test_check_on_the_tiny_set(tiny: Tiny, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", toml_of(tiny()), "check", "--no-judge"]) == 0
    out = capsys.readouterr().out
    assert "questions: 4 (1 factual, 1 procedural, 1 negative, 1 out_of_scope)" in out
    assert "corpus:    5 chunks in 3 documents" in out
    assert out.rstrip().endswith("ok")


def test_bad_input_prints_every_problem_on_its_own_line(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["type"] = "trivia"
    questions[1]["relevant_chunks"] = ["gone/chunk"]
    assert main(["--config", toml_of(tiny(questions=questions)), "check"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: ") and err[0].endswith(
        "questions.jsonl:1: type: 'trivia' is not one of factual, procedural, negative, out_of_scope"
    )
    assert "questions.jsonl:2: relevant_chunks: not in the corpus: gone/chunk" in err[1]
    assert err[2] == "2 problems; nothing was evaluated"


def test_check_on_the_shipped_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(REPO / "judge.toml"), "check", "--no-judge"]) == 0
    captured = capsys.readouterr()
    assert "questions: 30 (12 factual, 8 procedural, 5 negative, 5 out_of_scope)" in captured.out
    assert "labels:" in captured.out
    assert "warning" not in captured.err


def test_check_fails_and_lists_every_question_the_adapter_failed(
    tiny_adapter: Callable[..., Config], capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny_adapter(
        "half_rag",
        "def answer(question):\n"
        "    if 'Windows' in question or 'iPad' in question:\n"
        "        raise TimeoutError('search took too long')\n"
        "    return {'retrieved': ['pricing/plans'], 'answer': 'x'}\n",
    )
    assert main(["--config", toml_of(config), "check", "--no-judge"]) == 2
    err = capsys.readouterr().err.splitlines()
    failed = [line for line in err if line.startswith("error: ")]
    assert len(failed) == 2
    assert failed[0].endswith(
        "the adapter failed for question 'q3': TimeoutError: search took too long"
    )
    assert "'q4'" in failed[1]
    assert err[-1] == "2 problems; nothing was evaluated"


@pytest.mark.parametrize(
    ("returns", "said"),
    [
        pytest.param("None", "returned must be an object, not null", id="none"),
        pytest.param(
            "['pricing/plans']", 'returned must be an object, not ["pricing/plans"]', id="list"
        ),
        pytest.param(
            "{'retrieved': ['pricing/plans'], 'answer': '  '}",
            "returned answer: must not be empty",
            id="blank",
        ),
    ],
)
def test_check_fails_when_the_adapter_returns_no_usable_answer(
    tiny_adapter: Callable[..., Config],
    capsys: pytest.CaptureFixture[str],
    returns: str,
    said: str,
) -> None:
    config = tiny_adapter("odd_rag", f"def answer(question):\n    return {returns}\n")
    assert main(["--config", toml_of(config), "check", "--no-judge"]) == 2
    err = capsys.readouterr().err
    assert "the adapter failed for question 'q1': ValueError: " in err
    assert said in err
    assert "Traceback" not in err


def test_retrieval_prints_and_writes_json(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = tmp_path / "r.json"
    assert main(["--config", toml_of(tiny()), "retrieval", "--json", str(out_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:4] == ["type", "n", "excluded", "recall@5"]
    payload = json.loads(out_path.read_text(encoding="utf-8"))
    assert payload["context_k"] == 5
    assert payload["table"]["weakest_type"] == "negative"
    assert payload["table"]["rows"][-1]["type"] == "all"
    assert payload["excluded"] == {"q4": "no relevant chunks (out of scope)"}


def test_trec_export_then_score_the_exported_run(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = toml_of(tiny())
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.run"
    assert (
        main(["--config", toml, "trec", "export", "--qrels", str(qrels), "--trec-out", str(run)])
        == 0
    )
    assert (
        main(
            [
                "--config",
                toml,
                "retrieval",
                "--trec-run",
                str(run),
                "--json",
                str(tmp_path / "a.json"),
            ]
        )
        == 0
    )
    assert main(["--config", toml, "retrieval", "--json", str(tmp_path / "b.json")]) == 0
    a = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert a["table"] == b["table"]


def test_trec_export_without_flags_writes_the_documented_defaults(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert main(["trec", "export", "--config", toml_of(config)]) == 0
    qrels = config.reports.dir / "trec" / "qrels.txt"
    run = config.reports.dir / "trec" / "run.txt"
    # q1: 1 relevant chunk, q2: 2, q3: 1, q4 (out of scope): none
    assert len(qrels.read_text(encoding="utf-8").splitlines()) == 4
    assert run.read_text(encoding="utf-8").splitlines()[0] == "q1 Q0 pricing/plans 1 2 judge"
    out = capsys.readouterr().out
    assert f"wrote 4 qrels lines to {qrels}" in out
