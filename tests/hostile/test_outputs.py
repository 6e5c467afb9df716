"""Hostile text from the data, in every field it can reach, checked in every channel it reaches.

Channels: the terminal (what ``judge.cli.main`` prints: run, show, audit, audit label, check,
diff, report, audit import), the CSV files (``verdicts.csv`` and the labelling sheet),
``report.md`` (its source, and as a CommonMark + tables renderer shows it), ``review.html`` (in
Chromium) and the JUnit XML. Each line of ``CASES`` is one hostile text in one field. For each,
the outputs it reaches must be inert (no raw control character in the terminal, no CSV cell a
spreadsheet reads as a formula, no HTML, link or broken table in the Markdown) and the text must
still be recognisable there (shown escaped, not silently dropped).

The whole matrix lives in one golden set (a question per case), judged twice by a scripted judge
(the second time with an edited prompt, so that report.md lists the flipped verdicts with their
quotes and ids), so each case costs a few string checks. Input errors and adapter errors, which
stop or change a run, have their own small matrices on the ``tiny`` fixture.
"""

import copy
import csv
import html
import io
import json
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote
from xml.etree import ElementTree as ET

import pytest
from markdown_it import MarkdownIt

import judge.pipeline.evaluate
from judge.cli import main
from judge.config import Config, load_config
from judge.errors import BackendRequestError
from judge.hashing import text_sha256
from judge.judging.backends.base import JudgeRequest
from judge.judging.verdict import Reply
from judge.report.values_svg import PICTURE_LINE
from tests.conftest import QUESTIONS, REPO, write_jsonl
from tests.fakes import ScriptedBackend

Tiny = Callable[..., Config]


class Hostile(NamedTuple):
    name: str
    raw: str
    """The text as the data holds it."""
    shown: str
    """What must still be readable wherever it is shown: in the terminal (escaped, on one line
    or not) and in rendered Markdown (line breaks as spaces)."""


OSC = Hostile("osc-title", "\x1b]0;pwned\x07", r"\x1b]0;pwned\x07")
CSI = Hostile("csi-clear", "\x1b[2J\x1b[Hcleared", r"\x1b[2J\x1b[Hcleared")
BEL = Hostile("bell", "ding\x07dong", r"ding\x07dong")
C1 = Hostile("c1-csi", "\x9b31mred\x9b0m", r"\x9b31mred\x9b0m")
BIDI = Hostile("bidi-override", "invoice\u202efdp.exe", r"invoice\u202efdp.exe")
CONTROLS = Hostile(
    "c0-controls", "bs\x08\x08vt\x0bff\x0cdel\x7f\x01end", r"bs\x08\x08vt\x0bff\x0cdel\x7f\x01end"
)
CR = Hostile("carriage-return", "FAILED\rok    ", r"FAILED\rok")
EQ = Hostile("formula-eq", '=HYPERLINK("http://x","y")', '=HYPERLINK("http://x","y")')
PLUS = Hostile("formula-plus", "+cmd|' /C calc'!A0", "+cmd|' /C calc'!A0")
MINUS = Hostile("formula-minus", "-2+3+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0")
AT = Hostile("formula-at", "@SUM(1+9)*cmd|' /C calc'!A0", "@SUM(1+9)*cmd|' /C calc'!A0")
TAB = Hostile("formula-tab", "\t=1+1", "=1+1")
CRF = Hostile("formula-cr", "\r=1+1", r"\r=1+1")
SCRIPT = Hostile("script", "<script>window.__pwned=1</script>", "<script>window.__pwned=1</script>")
IMG = Hostile("img-onerror", "<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>")
SVG = Hostile("svg-onload", "<svg onload=window.__pwned=2>", "<svg onload=window.__pwned=2>")
JSLINK = Hostile("js-link", "[click me](javascript:alert(1))", "[click me](javascript:alert(1))")
AUTOLINK = Hostile("js-autolink", "<javascript:alert(1)>", "<javascript:alert(1)>")
TABLE = Hostile("table-break", "cell | break\n| --- | --- |\n| new | row |", "cell | break")
CDATA = Hostile("cdata-end", "]]></x><!--", "]]></x><!--")
RICH = Hostile("rich-markup", "[bold red]loud[/] :smile: [/]", "[bold red]loud[/] :smile: [/]")
# Printable only: ids may not hold whitespace or control characters (see the brief of inputs).
ID_EQ = Hostile("id-formula-eq", '=HYPERLINK("http://x","y")', '=HYPERLINK("http://x","y")')
ID_PLUS = Hostile("id-formula-plus", "+cmd|'/C_calc'!A0", "+cmd|'/C_calc'!A0")
ID_AT = Hostile("id-formula-at", "@SUM(1+9)", "@SUM(1+9)")
ID_HTML = Hostile("id-html", "<b>x</b>", "<b>x</b>")
ID_SCRIPT = Hostile(
    "id-script", "<script>window.__pwned=3</script>", "<script>window.__pwned=3</script>"
)
ID_IMG = Hostile("id-img", "<img/src=x/onerror=alert(1)>", "<img/src=x/onerror=alert(1)>")
ID_LINK = Hostile("id-js-link", "[x](javascript:alert(1))", "[x](javascript:alert(1))")
ID_PIPE = Hostile("id-pipe", "a|b", "a|b")
ID_CDATA = Hostile("id-cdata", "]]>", "]]>")
TYPE_HTML = Hostile("type-html-pipe", "<b>t|x</b>", "<b>t|x</b>")

#: Where each field shows. Every field shows in ``judge show``; the others are listed.
TERMINAL = "terminal"
REACH: dict[str, set[str]] = {
    "question": {TERMINAL, "sheet", "html", "audit", "label"},
    "answer": {TERMINAL, "sheet", "html", "audit", "label"},
    "chunk": {TERMINAL, "sheet", "html", "label"},
    "note": {TERMINAL, "verdicts.csv", "html", "audit"},
    "evidence": {TERMINAL, "verdicts.csv", "markdown", "html", "audit"},
    "error": {TERMINAL, "verdicts.csv", "markdown", "html", "run"},
    "labeller": {TERMINAL, "markdown", "html", "audit"},
    "label_note": {TERMINAL, "audit"},
    "question_id": {TERMINAL, "verdicts.csv", "sheet", "markdown", "html", "audit", "diff"},
    "type": {TERMINAL, "verdicts.csv", "sheet", "markdown", "html", "audit", "run"},
}
#: The CSV column a field is written to.
COLUMN = {
    "question": "question",
    "answer": "answer",
    "chunk": "context",
    "note": "note",
    "evidence": "evidence",
    "error": "error",
    "question_id": "question_id",
    "type": "type",
}


class Case(NamedTuple):
    field: str
    hostile: Hostile


# One line per case: a hostile text in a field.
CASES = [
    Case("question", OSC),
    Case("question", BIDI),
    Case("question", SCRIPT),
    Case("question", TABLE),
    Case("answer", CSI),
    Case("answer", BEL),
    Case("answer", C1),
    Case("answer", CR),
    Case("answer", EQ),
    Case("answer", MINUS),
    Case("answer", IMG),
    Case("chunk", OSC),
    Case("chunk", CONTROLS),
    Case("chunk", SVG),
    Case("chunk", JSLINK),
    Case("chunk", CDATA),
    Case("note", CSI),
    Case("note", BIDI),
    Case("note", AT),
    Case("note", TAB),
    Case("note", SCRIPT),
    Case("evidence", OSC),
    Case("evidence", PLUS),
    Case("evidence", CRF),
    Case("evidence", TABLE),
    Case("evidence", IMG),
    Case("evidence", JSLINK),
    Case("evidence", AUTOLINK),
    Case("error", OSC),
    Case("error", C1),
    Case("error", SCRIPT),
    Case("error", TABLE),
    Case("error", EQ),
    Case("labeller", BEL),
    Case("labeller", BIDI),
    Case("labeller", SVG),
    Case("labeller", JSLINK),
    Case("labeller", AT),
    Case("label_note", CSI),
    Case("label_note", TABLE),
    Case("question_id", ID_EQ),
    Case("question_id", ID_PLUS),
    Case("question_id", ID_AT),
    Case("question_id", ID_HTML),
    Case("question_id", ID_SCRIPT),
    Case("question_id", ID_IMG),
    Case("question_id", ID_LINK),
    Case("question_id", ID_PIPE),
    Case("question_id", ID_CDATA),
    Case("type", TYPE_HTML),
]
TAGS = {f"tag{n:02d}": case for n, case in enumerate(CASES)}
TAG_OF = {case: tag for tag, case in TAGS.items()}
QUOTE = "自動バックアップは毎日午前3時に実行されます。"


def _case_id(case: Case) -> str:
    return f"{TAG_OF[case]}-{case.field}-{case.hostile.name}"


def _text(case: Case, field: str, default: str) -> str:
    """The case's hostile text (tagged) for its own field, ``default`` for the others."""
    return case.hostile.raw + TAG_OF[case] if case.field == field else default


def _question_id(case: Case) -> str:
    return _text(case, "question_id", TAG_OF[case])


# --- what each channel must never contain ----------------------------------------------------

# Raw C0 (but \t and \n), DEL, C1, bidi controls, line/paragraph separators.
TERMINAL_FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def assert_terminal_safe(text: str) -> None:
    found = TERMINAL_FORBIDDEN.search(text)
    assert found is None, (
        f"raw {found[0]!r} printed: ...{text[max(0, found.start() - 40) : found.end() + 40]!r}"
    )


def assert_csv_safe(rows: list[list[str]]) -> None:
    """Every cell a spreadsheet would take for a formula carries the leading quote (a number is
    a number: a negative one may start with a minus)."""
    for row in rows:
        for cell in row:
            if cell.startswith(FORMULA_START):
                try:
                    float(cell)
                except ValueError:
                    pytest.fail(f"CSV cell read as a formula: {cell!r}")


def _unescaped_pipes(line: str) -> int:
    count, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        count += line[i] == "|"
        i += 1
    return count


def rendered_markdown(source: str) -> tuple[str, str]:
    """(HTML, visible text) of Markdown as a CommonMark + tables renderer shows it."""
    rendered = MARKDOWN.render(source)
    return rendered, html.unescape(re.sub(r"<[^>]*>", " ", rendered))


def assert_markdown_safe(source: str) -> None:
    """No HTML, no link and no broken table in the source or in what it renders to. The one
    exception is the harness's own picture (``PICTURE_LINE``: fixed text, no data in it), which
    may appear once on a line of its own and is taken out before the checks."""
    lines = source.splitlines()
    assert lines.count(PICTURE_LINE) <= 1
    source = "\n".join(line for line in lines if line != PICTURE_LINE)
    lowered = source.lower()
    for raw in ("<script", "<img", "<svg", "<a ", "<b>", "<javascript:", "<!--"):
        assert raw not in lowered, f"raw {raw} in report.md"
    assert re.search(r"(?<!\\)\]\(", source) is None, "a link target in report.md"
    tokens = MARKDOWN.parse(source)
    assert not [t for t in tokens if t.type == "html_block"]
    for token in tokens:
        assert not [c for c in token.children or [] if c.type in ("html_inline", "link_open")]
    rendered, _ = rendered_markdown(source)
    for tag in ("<script", "<img", "<svg", "<a ", "href=", "<b>"):
        assert tag not in rendered.lower()
    # Tables: every row has as many cell borders as its header.
    table: list[str] = []
    for line in [*source.splitlines(), ""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            widths = {_unescaped_pipes(row) for row in table}
            assert len(widths) == 1, f"a table row broken out of its table: {table}"
            table = []


def _sheet_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))


# --- the world: one golden set holding every case, judged twice --------------------------------


class World(NamedTuple):
    config: Config
    terminal: dict[str, str]
    """Command → what it printed (stdout and stderr)."""
    shown: dict[str, str]
    """Question id → what ``judge show`` printed."""
    codes: dict[str, int]
    verdicts_csv: list[list[str]]
    sheet: list[list[str]]
    report_md: str
    folder: Path


def _script(request: JudgeRequest) -> Reply | Exception:
    """F2 (F1 with the edited prompt) R2 quoting QUOTE; a case's hostile note, quote or error."""
    found = re.search(r"tag\d\d", request.question)
    assert found is not None
    tag = found[0]
    case = TAGS[tag]
    if case.field == "error":
        return BackendRequestError(case.hostile.raw + tag)
    payload = {
        "evidence": _text(case, "evidence", QUOTE),
        "faithfulness": 1 if "(edited)" in request.prompt else 2,
        "relevance": 2,
        "note": _text(case, "note", "ok"),
    }
    return Reply(text=json.dumps(payload, ensure_ascii=False), finish_reason="stop")


def _write_world(root: Path) -> Config:
    questions, corpus, run = [], [], [{"run_meta": {"system": "hostile-rag"}}]
    for case in CASES:
        tag = TAG_OF[case]
        qid = _question_id(case)
        chunk_id = f"doc/{tag}"
        corpus.append(
            {
                "chunk_id": chunk_id,
                "doc": "doc",
                "heading": tag,
                "text": _text(case, "chunk", f"{tag}の説明です。") + " " + QUOTE,
            }
        )
        questions.append(
            {
                "id": qid,
                "type": _text(case, "type", "factual"),
                "question": _text(case, "question", f"{tag}について教えて"),
                "relevant_chunks": [chunk_id],
                "answerable": True,
            }
        )
        run.append(
            {
                "id": qid,
                "retrieved": [{"chunk_id": chunk_id, "score": 0.9}],
                "answer": _text(case, "answer", f"{tag}の回答です。"),
            }
        )
    write_jsonl(root / "questions.jsonl", questions)
    write_jsonl(root / "corpus.jsonl", corpus)
    write_jsonl(root / "run.jsonl", run)
    types = ["factual", "procedural", "negative", "out_of_scope"]
    types += [_text(c, "type", "") for c in CASES if c.field == "type"]
    prompt = (REPO / "prompts" / "judge.v1.md").read_text(encoding="utf-8")
    (root / "edited.md").write_text(prompt + "\n(edited)\n", encoding="utf-8")
    toml = root / "judge.toml"
    toml.write_text(
        '[data]\nquestions = "questions.jsonl"\ncorpus = "corpus.jsonl"\nrun = "run.jsonl"\n'
        f'labels = "labels.jsonl"\nquestion_types = {json.dumps(types)}\n'
        f'\n[judge]\ncache_path = "{root / "cache.sqlite3"}"\n'
        f'prompt = "{REPO / "prompts" / "judge.v1.md"}"\n'
        f'\n[reports]\ndir = "{root / "reports"}"\n',
        encoding="utf-8",
    )
    return load_config(toml)


def _write_labels(config: Config) -> None:
    """A disagreeing label (F0 R0) for every answer, by 'ana' or the case's labeller."""
    labels = []
    for case in CASES:
        tag = TAG_OF[case]
        labels.append(
            {
                "question_id": _question_id(case),
                "answer_sha256": text_sha256(_text(case, "answer", f"{tag}の回答です。")),
                "faithfulness": 0,
                "relevance": 0,
                "labeller": _text(case, "labeller", "ana"),
                "note": _text(case, "label_note", "違う"),
                "labelled_at": "2025-01-01T00:00:00Z",
            }
        )
    assert config.data.labels is not None
    write_jsonl(config.data.labels, labels)


def _fill_sheet(sheet: Path) -> None:
    """Scores and a labeller in every row, saved back as a spreadsheet does (CRLF, BOM)."""
    rows = _sheet_rows(sheet.read_bytes().decode("utf-8"))
    header = rows[0]
    for row in rows[1:]:
        row[header.index("faithfulness")] = "2"
        row[header.index("relevance")] = "1"
        row[header.index("labeller")] = "imported"
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(rows)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("hostile")
    config = _write_world(root)
    toml = str(config.source)
    terminal: dict[str, str] = {}
    codes: dict[str, int] = {}

    def cli(name: str, *args: str) -> str:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            codes[name] = main(["--config", toml, *args])
        terminal[name] = out.getvalue() + err.getvalue()
        return terminal[name]

    real_evaluate = judge.pipeline.evaluate.evaluate

    def scripted(config: Config, *, backend: Any = None, **kwargs: Any) -> Any:
        return real_evaluate(config, backend=ScriptedBackend(_script), **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(judge.pipeline.evaluate, "evaluate", scripted)
        cli("run-a", "run")
        first = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
        cli("run", "run", "--prompt", str(root / "edited.md"), "--junit", str(root / "gate.xml"))
        second = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
        sheet = root / "sheet.csv"
        cli("sample", "audit", "sample", "--n", str(len(CASES)), "--out", str(sheet))
        sheet_text = sheet.read_bytes().decode("utf-8")  # as written: a lone CR stays
        _write_labels(config)
        cli("report", "report")
        shown = {}
        for case in CASES:
            shown[_question_id(case)] = cli("show", "show", _question_id(case))
        cli("audit", "audit", "--limit", "0")
        cli("check", "check", "--no-judge")
        cli("diff", "diff", first, second)
        patch.setattr(sys, "stdin", io.StringIO("s\n" * 2 * len(CASES)))
        cli("label", "audit", "label", "--labeller", "zed")
        _fill_sheet(sheet)
        cli("import", "audit", "import", str(sheet))
    folder = config.reports.dir / second
    yield World(
        config,
        terminal,
        shown,
        codes,
        _sheet_rows((folder / "verdicts.csv").read_bytes().decode("utf-8")),
        _sheet_rows(sheet_text),
        (folder / "report.md").read_text(encoding="utf-8"),
        folder,
    )


def _row(rows: list[list[str]], qid: str) -> dict[str, str]:
    header = rows[0]
    column = header.index("question_id")
    found = [r for r in rows[1:] if r[column] in (qid, "'" + qid)]
    assert len(found) == 1, f"{qid!r} not once in the CSV"
    return dict(zip(header, found[0], strict=True))


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_hostile_text_reaches_every_channel_inert_and_readable(world: World, case: Case) -> None:
    tag, reach, shown = TAG_OF[case], REACH[case.field], case.hostile.shown
    qid = _question_id(case)
    tagged = case.hostile.raw + tag

    # Terminal: `judge show`, and the other commands that print this field.
    outputs = {"show": world.shown[qid]} | {
        c: world.terminal[c] for c in reach & set(world.terminal)
    }
    for command, text in outputs.items():
        assert_terminal_safe(text)
        assert shown in text and tag in text, f"{command} lost {case.hostile.name}"

    # CSV: the cell holds the text as it is, with a quote before a formula.
    for name, rows in (("verdicts.csv", world.verdicts_csv), ("sheet", world.sheet)):
        if name in reach:
            assert_csv_safe(rows)
            cell = _row(rows, qid)[COLUMN[case.field]]
            assert tagged in cell
            if case.hostile.raw.startswith(FORMULA_START) and cell.startswith(tagged[0]):
                pytest.fail(f"{name}: {cell!r} is a formula")

    # report.md: escaped in the source, the same text once rendered.
    if "markdown" in reach:
        assert_markdown_safe(world.report_md)
        _, visible = rendered_markdown(world.report_md)
        assert " ".join(shown.split()) in visible and tag in visible


def test_the_world_ran_cleanly(world: World) -> None:
    """Every command of the matrix did what it should (so no case passes on an empty output)."""
    assert world.codes == dict.fromkeys(world.codes, 0)
    assert "verdicts need a look" in world.terminal["run"]
    assert "Since the prompt edit" in world.report_md
    assert "## Agreement with human labels" in world.report_md
    assert f"{len(CASES)} added" in world.terminal["import"]  # every quoted id came back
    for text in world.terminal.values():
        assert_terminal_safe(text)
    assert_markdown_safe(world.report_md)
    assert_csv_safe(world.verdicts_csv)
    assert_csv_safe(world.sheet)
    ET.parse(world.folder.parent.parent / "gate.xml")  # well-formed, whatever the data held


def test_styled_show_colours_only_our_text(world: World) -> None:
    """With colours on, `judge show` still escapes the data: only our own codes are ESC."""
    from judge.record.store import ReportFolder
    from judge.report.show import show_item

    case = Case("chunk", OSC)
    text = show_item(ReportFolder(world.folder).record(), _question_id(case), color=True)
    ours = re.sub(r"\x1b\[[0-9;]*m", "", text)  # colours: ESC [ digits m, nothing else
    assert_terminal_safe(ours)
    assert "\x1b[43m\x1b[30m" + QUOTE in text  # the quote is still highlighted
    assert OSC.shown in ours


# --- input errors and adapter errors ---------------------------------------------------------

INPUT_ERRORS = [OSC, CSI, BEL, C1, BIDI, CR]


@pytest.mark.parametrize("hostile", INPUT_ERRORS, ids=lambda h: f"input-error-{h.name}")
def test_an_input_error_echoes_the_data_escaped(
    tiny: Tiny, capsys: pytest.CaptureFixture[str], hostile: Hostile
) -> None:
    questions = copy.deepcopy(QUESTIONS)
    questions[0]["type"] = hostile.raw + "tagE"
    config = tiny(questions=questions)
    assert main(["--config", str(config.source), "check", "--no-judge"]) == 2
    captured = capsys.readouterr()
    assert_terminal_safe(captured.out + captured.err)
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert any(hostile.shown in line and "tagE" in line for line in errors), captured.err


ADAPTER = """
import os

def answer(question):
    if "Windows" in question:
        raise RuntimeError(os.environ["HOSTILE_ADAPTER_ERROR"])
    return {"retrieved": ["pricing/plans"], "answer": "回答"}
"""
ADAPTER_ERRORS = [OSC, C1, BIDI, RICH]


@pytest.mark.parametrize("hostile", ADAPTER_ERRORS, ids=lambda h: f"adapter-error-{h.name}")
def test_an_adapter_error_is_printed_escaped(
    tiny: Tiny,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    hostile: Hostile,
) -> None:
    config = tiny()
    assert config.source is not None
    folder = config.source.parent
    module = f"hostile_rag_{ADAPTER_ERRORS.index(hostile)}"
    (folder / f"{module}.py").write_text(ADAPTER, encoding="utf-8")
    toml = config.source.read_text(encoding="utf-8")
    config.source.write_text(
        toml.replace('run = "run.jsonl"', f'adapter = "{module}:answer"'), encoding="utf-8"
    )
    monkeypatch.setenv("HOSTILE_ADAPTER_ERROR", hostile.raw + "tagA")
    monkeypatch.syspath_prepend(str(folder))
    try:
        main(["--config", str(config.source), "check", "--no-judge"])
    finally:
        sys.modules.pop(module, None)
    captured = capsys.readouterr()
    assert_terminal_safe(captured.out + captured.err)
    line = next(x for x in captured.err.splitlines() if "adapter failed for question" in x)
    assert hostile.shown in line and "tagA" in line


# --- review.html in a real browser -----------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_review_page_shows_every_hostile_text_as_text(world: World) -> None:
    if CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        try:
            page = browser.new_page()
            problems: list[str] = []
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("dialog", lambda dialog: (problems.append(dialog.message), dialog.dismiss()))
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.goto((world.folder / "review.html").as_uri())
            page.wait_for_selector("section.item")
            assert page.locator("section.item").count() == len(CASES)
            page.click("#open-all")  # items open on demand: render every one
            assert page.locator(".detail:visible").count() == len(CASES)
            assert page.evaluate("window.__pwned") is None
            assert (
                page.locator(
                    "#items script, #items img, #items svg, #items a:not(.permalink), #items b"
                ).count()
                == 0
            )
            # The page's own per-item links point into the page, whatever the id holds.
            links = page.evaluate(
                "Array.from(document.querySelectorAll('#items a')).map(a => [a.getAttribute("
                "'href'), a.closest('section').dataset.qid])"
            )
            assert len(links) == len(CASES)
            # quote() with encodeURIComponent's set of unescaped marks.
            assert all(href == "#" + quote(qid, safe="!*'()") for href, qid in links)
            text = page.evaluate("document.getElementById('items').textContent")
            qids = page.evaluate(
                "Array.from(document.querySelectorAll('section.item')).map(s => s.dataset.qid)"
            )
            page.close()
        finally:
            browser.close()
    assert problems == []
    assert [url for url in requests if not url.startswith("file://")] == []
    assert sorted(qids) == sorted(_question_id(case) for case in CASES)
    for case in CASES:
        if "html" in REACH[case.field]:
            assert case.hostile.raw + TAG_OF[case] in text, _case_id(case)
