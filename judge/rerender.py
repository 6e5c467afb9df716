"""``judge report [RUN]``: rebuild a run folder's report from its saved run and the cache.

Nothing is judged. Each verdict is re-derived from the backend reply stored in the cache (so a
newer evidence verifier or parser applies); a reply no longer in the cache (pruned) keeps the
verdict saved in the folder. The golden set must be the one the run used.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from judge.backends import BackendIdentity
from judge.cache import VerdictCache
from judge.config import Config
from judge.errors import ConfigError
from judge.golden import find_leaks, load_golden, load_labels_if_any
from judge.grading import Fingerprint, JudgeOutcome, build_items
from judge.pipeline import Inputs, JudgeResult, evaluate_retrieval, judge_table
from judge.prompts import Prompt
from judge.records import read_verdicts
from judge.report import build_report, write_files
from judge.runs import load_run
from judge.runs_index import resolve_folder
from judge.verdict import make_verdict


def rerender(config: Config, folder_name: str | None) -> Path:
    folder = resolve_folder(config.reports.dir, folder_name)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    golden = load_golden(config.data)
    if golden.questions_hash != manifest["fingerprints"]["golden"]:
        raise ConfigError(
            f"{folder.name} was judged on another golden set than {config.data.questions} holds "
            "now; re-rendering would mix the two"
        )
    if golden.corpus_hash != manifest["fingerprints"]["corpus"]:
        raise ConfigError(
            f"the corpus changed since {folder.name} was judged; its chunks would no longer be "
            "the ones the judge saw, so it cannot be re-rendered"
        )
    # Measure as that run measured, whatever judge.toml says now.
    config = config.with_overrides(retrieval=manifest["config"]["retrieval"])
    run = load_run(folder / "run.jsonl", golden)
    inputs = Inputs(golden, run, manifest["run"]["source"], find_leaks(golden))
    retrieval = evaluate_retrieval(config, golden, run)
    saved = read_verdicts(folder)
    fingerprint = manifest["fingerprints"]["judge"]
    cache = VerdictCache(config.judge.cache_path)
    try:
        items = build_items(golden, run, config.retrieval.context_k)
        replies = cache.get_many(fingerprint, (item.key for item in items))
    finally:
        cache.close()
    verdicts = {}
    for item in items:
        reply = replies.get(item.key)
        if reply is None:
            if item.question.id in saved:
                verdicts[item.question.id] = saved[item.question.id]
            continue
        verdicts[item.question.id] = make_verdict(
            item.question.id, item.key, reply, item.context, item.question.answerable, cached=True
        )
    judge = manifest["judge"]
    parts = manifest["fingerprints"]["judge_parts"]
    identity = BackendIdentity(
        kind=judge["backend"],
        model=judge["model"],
        digest=judge["digest"],
        options=parts["options"],
        endpoint=judge["endpoint"],
        server_version=judge["server_version"],
    )
    outcome = JudgeOutcome(
        verdicts=verdicts,
        fingerprint=Fingerprint(fingerprint, parts),
        identity=identity,
        interrupted=False,
        elapsed_s=float(manifest["judge_seconds"]),
    )
    prompt = Prompt(Path(judge["prompt"]), "", judge["prompt_sha256"])
    table = judge_table(config, golden, retrieval.scores, list(verdicts.values()))
    judged = JudgeResult(outcome, table, judge["chosen_because"], prompt)
    labels = load_labels_if_any(config.data.labels, golden.by_id())
    report = build_report(
        config,
        inputs,
        retrieval,
        judged,
        labels,
        datetime.fromisoformat(manifest["started_at"]),
        folder.name,
        finished_at=datetime.fromisoformat(manifest["finished_at"]),
    )
    write_files(folder, report, run)
    return folder
