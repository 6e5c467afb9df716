"""The record's manifest and history line (``judge.record.manifest_build``): the run hash is
the one earlier folders hold."""


def test_the_run_hash_is_the_tagged_hash_of_the_rankings_and_answers() -> None:
    """``run_hash`` writes the canonical JSON out piece by piece: it must be exactly the hash
    earlier folders hold (a different one would make every earlier run another RAG output)."""
    from judge.hashing import tagged_hash
    from judge.inputs.runs import RetrievedChunk, Run, RunMeta, RunRecord
    from judge.record.manifest_build import run_hash

    records = {
        qid: RunRecord(
            id=qid,
            retrieved=tuple(RetrievedChunk(chunk_id=c, text=t) for c, t in ranking),
            answer=answer,
        )
        for qid, ranking, answer in [
            ("q2", [("pricing/plans", None), ("doc/2", 'a "quoted" \\ text\n')], "年額です。"),
            ("q10", [("doc/2", 'a "quoted" \\ text\n'), ("x/é", "\u2028\x00")], "ok"),
            ("q1", [], "no chunk retrieved"),
        ]
    }
    run = Run(RunMeta(), records)
    expected = tagged_hash(
        {q: [[[c.chunk_id, c.text] for c in r.retrieved], r.answer] for q, r in records.items()},
        16,
    )
    assert run_hash(run) == expected
