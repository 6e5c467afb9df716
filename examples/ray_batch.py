"""Run a batch export's requests with Ray Data's HTTP processor (docs/batch.md, "Ray Data").

    python examples/ray_batch.py EXPORT URL [--concurrency N] [--batch-size N]

EXPORT is the folder ``judge batch export`` wrote; URL is the chat completions endpoint of an
OpenAI-compatible server (``http://host:8000/v1/chat/completions``), or of a load balancer in
front of several. Ray sends every request's body as the export wrote it, so the replies are
those the ``openai`` backend would get, and this script writes them to
EXPORT/ray-results.jsonl as OpenAI Batch output lines, for ``judge batch import``.

Without RAY_ADDRESS, Ray starts a local instance on this machine.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import ray
from ray.data.llm import HttpRequestProcessorConfig, build_processor


def plain(value: Any) -> Any:
    """A value Ray hands back in numpy's types (its rows are Arrow tables) as JSON has it."""
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


def as_request(row: dict[str, Any]) -> dict[str, Any]:
    """One line of the export as the HTTP stage's input: its body is the payload, as it is."""
    request = json.loads(row["text"])
    return {"custom_id": request["custom_id"], "payload": request["body"]}


def as_output_line(row: dict[str, Any]) -> dict[str, Any]:
    """The HTTP stage's row as an OpenAI Batch output line that ``judge batch import`` reads.

    Ray keeps its rows in Arrow tables, and a table gives an object every key its siblings
    have (``None`` where it had none). The export's bodies all have one shape, so what Ray
    sends is what the export wrote; should a body ever come out otherwise, the reply is not
    the one the item's cache key stands for, and the line is an error (the item stays
    pending), never a reply.

    The stage keeps the server's answer (``http_response``) but not its status code: an answer
    holding an ``error`` is a refused request (a prompt over the context is ``truncated``,
    never a verdict).
    """
    sent = json.loads(json.dumps(row["payload"], default=plain))
    if sent != json.loads(row["text"])["body"]:
        message = "Ray Data sent another body than the export's (its tables filled in keys)"
        return {"custom_id": row["custom_id"], "response": None, "error": {"message": message}}
    answer = json.loads(json.dumps(row["http_response"], default=plain))
    answer = {key: value for key, value in answer.items() if value is not None}
    refused = bool(answer.get("error")) and not answer.get("choices")
    return {
        "custom_id": row["custom_id"],
        "response": {"status_code": 400 if refused else 200, "body": answer},
        "error": None,
    }


def run(export: Path, url: str, *, concurrency: int = 4, batch_size: int = 16) -> Path:
    """Send every request of ``export`` to ``url``; returns the output file.

    The export's lines are read as text and parsed by ``as_request``, and each output line
    leaves Ray as JSON text written here: ``read_json`` would make one table of all the
    bodies, and ``write_json`` writes through pandas, which keeps 10 digits of a float (the
    replies' log-probabilities would no longer be the server's).
    """
    out = export / "ray-results.jsonl"
    if out.exists():
        raise FileExistsError(f"{out} exists: import it, or remove it to run the job again")
    processor = build_processor(
        HttpRequestProcessorConfig(
            url=url,
            # headers={"Authorization": "Bearer <key, if the servers want one>"},
            concurrency=concurrency,  # request workers, each sending its batch one by one
            batch_size=batch_size,
            max_retries=3,  # Ray retries 408, 429, 502, 503 and 504, then stops the job
        ),
        preprocess=as_request,
        postprocess=lambda row: {"line": json.dumps(as_output_line(row))},
    )
    requests = ray.data.read_text(sorted(str(p) for p in export.glob("requests-*.jsonl")))
    with out.open("x", encoding="utf-8") as lines:
        for row in processor(requests).iter_rows():
            lines.write(row["line"] + "\n")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run a batch export's requests with Ray Data.")
    parser.add_argument("export", type=Path, help="the folder 'judge batch export' wrote")
    parser.add_argument("url", help="the chat completions URL of the judge's servers")
    parser.add_argument("--concurrency", type=int, default=4, help="request workers (4)")
    parser.add_argument("--batch-size", type=int, default=16, help="requests a batch (16)")
    args = parser.parse_args(argv)
    if not (args.export / "manifest.json").is_file():
        raise SystemExit(f"error: {args.export} is not a complete export (no manifest.json)")
    try:
        out = run(args.export, args.url, concurrency=args.concurrency, batch_size=args.batch_size)
    except FileExistsError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"wrote {out}; next: judge batch import {out}")


if __name__ == "__main__":
    main()
