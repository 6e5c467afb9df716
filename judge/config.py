"""Configuration: ``judge.toml`` read into frozen models; unknown keys are errors.

Relative paths in the file are relative to the file's own folder, so a config works from any
working directory. A prompt the file does not name is the one shipped inside the package
(``shipped_prompt``), so a judge.toml in any folder runs without a copy of ``prompts/``.
Command-line options override single values (``Config.with_overrides``).
Values are parsed like every input (``judge.io.text``): a number or a bool must be written as
one (``context_k = 5``, not ``"5"`` or ``true``; ``timeout_s = 600`` or ``600.0``), and inf or
nan is no setting. Every section is a ``judge.io.text.StrictRecord``: immutable, unknown keys
and inf/nan are errors (tests/io/test_text.py checks that every section declares its scalars
strictly).

Two parts live beside this module: the backends' settings (``judge.config_backends``) and the
sweep's table (``judge.config_sweep``); this module holds the rest, the whole ``Config`` and
``load_config``.
"""

from __future__ import annotations

import logging
import os
import sys
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from judge.axes import EXPECTED_METRICS, OPTIONAL_AXES, judge_table_metrics, metric_scale
from judge.config_backends import (
    EmbeddedConfig,
    LexicalConfig,
    OllamaConfig,
    OpenAIConfig,
    PanelConfig,
)
from judge.config_sweep import SweepConfig
from judge.errors import ConfigError
from judge.io.text import DEFAULT_MAX_FILE_MB, StrictBool, StrictFloat, StrictInt, StrictRecord
from judge.io.validation import describe_validation_error
from judge.metrics import metric_names
from judge.textnorm import name_key, same_name, shown_name

#: The four question types of the reference workflow; a project may declare its own list.
DEFAULT_QUESTION_TYPES = ("factual", "procedural", "negative", "out_of_scope")

BackendName = Literal["auto", "ollama", "embedded", "openai", "lexical"]

logger = logging.getLogger(__name__)

#: The prompts shipped inside the package: ``judge/prompts``, which in the repository is a link
#: to the top-level ``prompts/`` where the shipped prompt files live; every ``*.md`` there is
#: package data (pyproject.toml), so a prompt file dropped into ``prompts/`` ships with no edit.
SHIPPED_PROMPTS = (Path(__file__).parent / "prompts").resolve()
"""Resolved: in the repository the files are read (and named in reports) where they live."""


def shipped_prompt(name: str) -> Path:
    """The shipped prompt file ``name`` (``"judge.v1.md"``): the default of every prompt
    setting, found wherever the package is installed, whatever folder the config is in."""
    return SHIPPED_PROMPTS / name


class DataConfig(StrictRecord):
    """Where the golden set, the corpus and the run come from."""

    questions: Path
    """Golden questions (JSONL)."""
    corpus: Path
    """Corpus chunks (JSONL)."""
    run: Path | None = None
    """A run file written by the RAG system. Give this or ``adapter``."""
    adapter: str | None = None
    """``module:function`` that answers one question; the harness then produces the run."""
    adapter_concurrency: StrictInt = Field(default=4, ge=1, le=256)
    """How many questions the adapter answers at once."""
    adapter_timeout_s: StrictFloat = Field(default=300.0, gt=0)
    """How long the adapter may take for one question; a question taking longer is failed
    (the default is ``judge.inputs.adapter.DEFAULT_ADAPTER_TIMEOUT_S``)."""
    labels: Path | None = None
    """Human labels (JSONL), for the agreement audit. An empty file means no labels yet; a
    missing one is reported (``judge check`` refuses it, other commands warn)."""
    question_types: tuple[str, ...] = DEFAULT_QUESTION_TYPES
    """Allowed question types, in the order tables show them."""
    out_of_scope_types: tuple[str, ...] = ("out_of_scope",)
    """Types whose questions have no answer in the corpus (``answerable: false``)."""
    max_file_mb: StrictFloat = Field(default=DEFAULT_MAX_FILE_MB, gt=0)
    """Input files larger than this are refused."""

    @model_validator(mode="after")
    def _check(self) -> DataConfig:
        if self.run is not None and self.adapter is not None:
            raise ValueError("give either data.run or data.adapter, not both")
        # Type names compared as users mean them (``same_name``): "ALL" or "ａｌｌ" is the
        # overall row too, and "Factual" beside "factual" would be two rows of one type.
        for name in self.question_types:
            if same_name(name, "all"):
                raise ValueError(
                    f"'{shown_name(name)}' is reserved for the overall row; rename that "
                    "question type"
                )
        keys: dict[str, str] = {}
        for name in self.question_types:
            first = keys.setdefault(name_key(name), name)
            if first != name:
                raise ValueError(
                    f"question types '{shown_name(first)}' and '{shown_name(name)}' differ only "
                    "in case, width or surrounding spaces; keep one"
                )
        unknown = set(self.out_of_scope_types) - set(self.question_types)
        if unknown:
            raise ValueError(f"out_of_scope_types names unknown types: {sorted(unknown)}")
        return self


class RetrievalConfig(StrictRecord):
    """Retrieval metrics: the k values and the number of chunks the generator saw."""

    context_k: StrictInt = Field(default=5, ge=1)
    """How many top chunks the generator saw; the judge sees exactly these. The primary k."""
    k_values: tuple[StrictInt, ...] = (1, 5, 10)
    """Cut-offs for recall@k, hit@k and ndcg@k (context_k is always added)."""

    @model_validator(mode="after")
    def _check(self) -> RetrievalConfig:
        if any(k < 1 for k in self.k_values):
            raise ValueError("k_values must be positive")
        return self

    @property
    def ks(self) -> tuple[int, ...]:
        """context_k first, then the other k values in ascending order."""
        rest = sorted(set(self.k_values) - {self.context_k})
        return (self.context_k, *rest)


class ChunksConfig(StrictRecord):
    """Grading the retrieved chunks (``[judge.chunks]``, docs/judge.md): the question and one
    chunk → a grade on 0-3 (``judge.judging.tasks.chunk``). Off by default: it costs one judge call
    per graded chunk, ``depth`` times as many as the answers."""

    enabled: StrictBool = False
    prompt: Path = shipped_prompt("chunk.v1.md")
    depth: StrictInt | None = Field(default=None, ge=1)
    """How many of each question's top retrieved chunks are graded; unset: ``retrieval.context_k``
    (the chunks the generator saw)."""


class CorrectnessConfig(StrictRecord):
    """Judging each answer against its question's reference answer (``[judge.correctness]``):
    a third axis on 0-2, for questions with a ``reference_answer`` and out-of-scope questions
    (whose correct answer is a refusal). Off by default: one more judge call per answer."""

    enabled: StrictBool = False
    prompt: Path = shipped_prompt("correctness.v1.md")


class TaskTable(StrictRecord):
    """A judgement of its own (``[judge.tasks.<name>]``, a task of ``judge.judging.tasks``
    without a table of its own): whether it runs, and its prompt file (unset: the task's
    shipped one)."""

    enabled: StrictBool = False
    prompt: Path | None = None


class JudgeConfig(StrictRecord):
    """The LLM judge."""

    backend: BackendName = "auto"
    """auto = Ollama when it answers, else embedded."""
    prompt: Path = shipped_prompt("judge.v1.md")
    concurrency: StrictInt = Field(default=1, ge=1, le=256)
    """Items judged at once. More than the server's parallel slots only adds queueing. With
    ``endpoints`` (a pool) the sum of their concurrencies is used instead."""
    max_attempts: StrictInt = Field(default=4, ge=1, le=20)
    """Attempts per item for transient backend errors (timeouts, 5xx)."""
    cache_path: Path = Path(".judge-cache/verdicts.sqlite3")
    ollama: OllamaConfig = OllamaConfig()
    embedded: EmbeddedConfig = EmbeddedConfig()
    openai: OpenAIConfig = OpenAIConfig()
    lexical: LexicalConfig = LexicalConfig()
    panel: PanelConfig | None = None
    """``[judge.panel]``: a panel of judges (``judge panel``); None: no panel."""
    chunks: ChunksConfig = ChunksConfig()
    correctness: CorrectnessConfig = CorrectnessConfig()
    tasks: dict[str, TaskTable] = Field(default_factory=dict)
    """Further judgements by task name (``[judge.tasks.<name>]``); a name must be a task the
    judge knows (``judge.judging.tasks.registry``), checked when a run loads its prompts."""


class ReportsConfig(StrictRecord):
    """Where reports go and how runs are compared (question by question, docs/gate.md)."""

    dir: Path = Path("reports")
    margin_share: StrictFloat = Field(default=0.05, ge=0, le=1)
    """How far the mean of a 0-1 metric (retrieval metrics, full_marks, quote_verified,
    ok_share) must fall, over the questions of a type, to be a regression (or rise, an
    improvement); an exact test must also show the fall (docs/gate.md)."""
    margin_score: StrictFloat = Field(default=0.10, ge=0, le=2)
    """The same for the judge's 0-2 scores (faithfulness, relevance)."""
    min_questions: StrictInt | None = Field(default=None, ge=1)
    """Deprecated and ignored: the gate decides by exact tests, collapses and the season, so a
    small type can fail (docs/gate.md); a warning says so."""
    regression_threshold: StrictFloat | None = Field(default=None, ge=0, le=1)
    """Deprecated: the old name of ``margin_share`` (it sets it; a warning says so)."""
    baseline: Path = Path("judge-baseline.json")
    """The pinned baseline (commit it): every run is also held to it when it exists. Read from
    a file, the default is per configuration: ``<config stem>-baseline.json`` beside it
    (``judge-baseline.json`` for ``judge.toml``, ``nightly-baseline.json`` for
    ``nightly.toml``), so two configurations in one folder never share one
    (``baseline_default``)."""

    @model_validator(mode="before")
    @classmethod
    def _old_threshold(cls, data: Any) -> Any:
        # The old single threshold becomes the 0-1 margin, so configs in the wild keep working;
        # a wrong value is reported under its own name by the field itself.
        if isinstance(data, dict) and data.get("regression_threshold") is not None:
            old = data["regression_threshold"]
            if data.get("margin_share", old) != old:
                raise ValueError(
                    "regression_threshold is the old name of margin_share: keep only "
                    "reports.margin_share"
                )
            if type(old) in (int, float):
                data = {**data, "margin_share": old}
        return data


#: ``[bars]``: metric → question type (or ``all``) → the lowest acceptable per-type mean.
Bars = dict[str, dict[str, StrictFloat]]


def bar_problems(
    bars: Bars, types: tuple[str, ...], out_of_scope: tuple[str, ...], ks: tuple[int, ...]
) -> list[str]:
    """What is wrong with a ``[bars]`` table: unknown metrics or types, a retrieval bar on an
    out-of-scope type (its questions have no relevant chunks: never a value), a floor off the
    metric's scale (0-2 for the judge's scores, 0-1 for shares: ``judge.axes.metric_scale``)."""
    retrieval = metric_names(ks)
    known = [*judge_table_metrics(OPTIONAL_AXES), *EXPECTED_METRICS, *retrieval]
    allowed = [*types, "all"]
    problems = []
    for metric, floors in bars.items():
        if metric not in known:
            problems.append(
                f"bars: unknown metric '{metric}'; a bar can be set on {', '.join(known)}"
            )
            continue
        if not floors:
            problems.append(f"bars.{metric} is empty: give a floor per question type")
        top = 2.0 if metric_scale(metric) == "score" else 1.0
        for qtype, floor in floors.items():
            where = f"bars.{metric}.{qtype}"
            if qtype not in allowed:
                problems.append(
                    f"{where}: unknown question type '{qtype}'; the types are {', '.join(allowed)}"
                )
            elif metric in retrieval and qtype in out_of_scope:
                problems.append(
                    f"{where}: {qtype} questions have no relevant chunks, so {metric} has no "
                    "value for them; remove this bar"
                )
            if not 0 <= floor <= top:
                scale = "a 0-2 judge score" if top == 2 else "a 0-1 share"
                problems.append(f"{where} = {floor}: off the scale of {metric} ({scale})")
    return problems


class Config(StrictRecord):
    """The whole configuration."""

    data: DataConfig
    retrieval: RetrievalConfig = RetrievalConfig()
    judge: JudgeConfig = JudgeConfig()
    reports: ReportsConfig = ReportsConfig()
    sweep: SweepConfig | None = None
    """``judge sweep``'s grid; absent in projects that do not sweep."""
    bars: Bars = Field(default_factory=dict)
    """Per-type bars (``judge run --bars``, the nightly, the pytest plugin): metric → question
    type → the lowest acceptable mean of that type (``judge.results.bars``)."""
    source: Path | None = Field(default=None, exclude=True)
    """The file this came from (not part of the configuration itself)."""

    @model_validator(mode="after")
    def _check_sweep_metrics(self) -> Config:
        if self.sweep is None:
            return self
        known = metric_names(self.retrieval.ks)
        for name in (self.sweep.primary, *self.sweep.secondary):
            if name not in known:
                raise ValueError(
                    f"sweep: unknown metric '{name}'; the retrieval metrics at "
                    f"k = {', '.join(map(str, self.retrieval.ks))} are {', '.join(known)}"
                )
        if self.sweep.primary in self.sweep.secondary:
            raise ValueError(f"sweep.secondary lists the primary metric '{self.sweep.primary}'")
        return self

    @model_validator(mode="after")
    def _check_bars(self) -> Config:
        problems = bar_problems(
            self.bars,
            self.data.question_types,
            self.data.out_of_scope_types,
            self.retrieval.ks,
        )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def with_overrides(self, **changes: dict[str, Any]) -> Config:
        """A copy with sections partly replaced, e.g. ``with_overrides(judge={"backend": "x"})``."""
        data = self.model_dump()
        for section, values in changes.items():
            data[section] = {**data[section], **values}
        try:
            return Config.model_validate({**data, "source": self.source})
        except ValidationError as exc:
            raise ConfigError("; ".join(describe_validation_error(exc))) from None


_PATH_FIELDS = {
    "data": ("questions", "corpus", "run", "labels"),
    "judge": ("prompt", "cache_path"),
    "judge.embedded": ("model_path",),
    "judge.chunks": ("prompt",),
    "judge.correctness": ("prompt",),
    "reports": ("dir", "baseline"),
}


def load_config(path: Path | str) -> Config:
    """Read ``judge.toml``; every problem in one ``ConfigError``."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: configuration file not found (copy judge.toml from the repo)")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM (Notepad's) dropped
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    except ValueError as exc:  # tomllib reads integers with int(), which limits their digits
        if "digits" not in str(exc):
            raise
        raise ConfigError(
            f"{path}: an integer has more than {sys.get_int_max_str_digits()} digits; "
            "no setting takes a number that long"
        ) from None
    try:
        config = Config.model_validate({**raw, "source": path})
    except ValidationError as exc:
        problems = describe_validation_error(exc)
        raise ConfigError("\n".join(f"{path}: {p}" for p in problems)) from None
    if config.reports.min_questions is not None:
        logger.warning(
            "%s: reports.min_questions is ignored: a type of any size is decided by exact "
            "tests, collapses and the season now (docs/gate.md); remove it",
            path,
        )
    if config.reports.regression_threshold is not None:
        logger.warning(
            "%s: reports.regression_threshold is deprecated: it now sets reports.margin_share "
            "(the margin of 0-1 metrics; 0-2 scores have reports.margin_score); rename it "
            "(docs/gate.md)",
            path,
        )
    # Relative paths, given or default, are relative to the file's folder, not to the current
    # directory. abspath, not resolve(): a symlinked input must still be seen as one (and refused).
    base = path.resolve().parent
    data = config.model_dump()
    reports = raw.get("reports")
    if not (isinstance(reports, dict) and "baseline" in reports):
        data["reports"]["baseline"] = baseline_default(path)
    for section, keys in _PATH_FIELDS.items():
        table = data
        for part in section.split("."):
            table = table[part]
        for key in keys:
            if table[key] is not None:
                table[key] = Path(os.path.abspath(base / table[key]))
    return Config.model_validate({**data, "source": path})


#: The baseline's default name before it was per configuration: one file for every
#: configuration of a folder.
SHARED_BASELINE = "judge-baseline.json"


def baseline_default(config_path: Path) -> Path:
    """The default ``reports.baseline`` of a configuration file: ``<stem>-baseline.json``
    beside it, so two configurations in one folder never hold their runs to one baseline
    (``judge.toml`` keeps ``judge-baseline.json``, the old shared name).

    A configuration of another name with no baseline of its own yet, beside an old shared
    ``judge-baseline.json``: when a ``judge.toml`` is beside it too, that file is
    ``judge.toml``'s own under this rule, so it is not taken (a warning says to pin one); when
    none is, it was the shared one this configuration was held to, and it is copied to the new
    name once, with a warning saying where. Copied, not moved: several configurations may have
    shared it, and each keeps what it was held to. From then on the configuration reads and
    pins its own file.
    """
    base = Path(os.path.abspath(config_path.resolve().parent))
    own = base / f"{config_path.stem}-baseline.json"
    shared = base / SHARED_BASELINE
    if own == shared or own.exists() or not shared.is_file():
        return own
    if (base / "judge.toml").is_file():
        logger.warning(
            "%s: the baseline is per configuration now: this one's is %s (none yet); %s is "
            "judge.toml's, so this run is held to no baseline: pin one with 'judge --config %s "
            "baseline pin'",
            config_path,
            own.name,
            shared.name,
            config_path.name,
        )
        return own
    try:
        _copy_once(shared, own)
    except FileExistsError:  # another command copied it (or a pin wrote it) meanwhile
        return own
    except OSError as exc:
        logger.warning(
            "%s: the baseline is per configuration now (%s), but %s could not be copied there "
            "(%s); this run is held to no baseline: copy it by hand, or set reports.baseline",
            config_path,
            own.name,
            shared,
            exc.strerror or exc,
        )
        return own
    logger.warning(
        "%s: the baseline is per configuration now: copied the shared %s to %s, this "
        "configuration's own from now on ('judge baseline pin' and 'ratchet' write it); the old "
        "file is left for the other configurations that used it: delete it when none does",
        config_path,
        shared.name,
        own,
    )
    return own


def _copy_once(source: Path, target: Path) -> None:
    """Copy a file whole or not at all, never over an existing target: a temporary file, synced,
    then hard-linked into place (``FileExistsError`` when the target appeared meanwhile)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as handle:
            handle.write(source.read_bytes())
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
