"""Index provenance an adapter states: the embedder's name, version, dimension and canary
vectors (vectors of a few fixed texts the user's system embeds each night), beside the chunking
and the generator.

A run file states them in its ``run_meta`` header line (``judge.inputs.runs.RunMeta``); an
adapter states them as a ``run_meta`` attribute of its function: a dict, or a function of no
arguments returning one (called once per run, before any question is asked). The harness
keeps a digest of the canaries in the run's settings (``judge.inputs.runs.canary_digest``), and
the comparison with the previous compatible run names a change, even under the same embedder
name (``judge.results.history.settings_changes``). See docs/history.md.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import ValidationError

from judge.errors import InputError
from judge.inputs.runs import RunMeta
from judge.inputs.user_code import Adapter
from judge.io.validation import describe_validation_error

#: What an adapter may state about the system through its ``run_meta`` attribute (the run
#: file's ``run_meta`` fields that describe the system, not the run's own bookkeeping).
ADAPTER_META_FIELDS = frozenset(
    {
        "system",
        "embedding_model",
        "embedding_version",
        "embedding_dimension",
        "embedding_canaries",
        "chunking",
        "generator_model",
        "notes",
    }
)


def adapter_meta(spec: str, adapter: Adapter) -> RunMeta | None:
    """What the adapter states about the system (None: nothing): its ``run_meta`` attribute, a
    dict or a function of no arguments returning one, with the run file's ``run_meta`` fields
    (``ADAPTER_META_FIELDS``: the embedder's name, version, dimension and canary vectors, the
    chunking, the generator). Anything else, or a malformed value (a canary of the wrong
    dimension, a NaN), is one located error per problem."""
    stated = getattr(adapter, "run_meta", None)
    if stated is None:
        return None
    where = f"{spec}: run_meta"
    if callable(stated):
        try:
            stated = stated()
        except Exception as exc:  # the user's code: its failure, located, never a traceback
            raise InputError([f"{where}() raised {type(exc).__name__}: {exc}"]) from None
    if not isinstance(stated, dict):
        raise InputError(
            [f"{where}: a dict of run_meta fields is expected, not {type(stated).__name__}"]
        )
    unknown = sorted(str(k) for k in stated if k not in ADAPTER_META_FIELDS)
    if unknown:
        raise InputError(
            [
                f"{where}: unknown field(s) {', '.join(unknown)}; an adapter may state "
                + ", ".join(sorted(ADAPTER_META_FIELDS))
            ]
        )
    try:
        return RunMeta.model_validate(stated)
    except ValidationError as exc:
        raise InputError([f"{where}: {p}" for p in describe_validation_error(exc)]) from None


def produced_meta(spec: str, stated: RunMeta | None, failed: dict[str, str]) -> RunMeta:
    """The ``run_meta`` of a run the adapter ``spec`` produced: what it stated about the system
    (its ``system`` name, else the spec), the adapter, the time and the failed questions."""
    base = stated if stated is not None else RunMeta()
    system = spec if base.system == "unknown" else base.system
    return base.model_copy(
        update={
            "system": system,
            "adapter": spec,
            "created_at": datetime.now(UTC),
            "failed": failed,
        }
    )
