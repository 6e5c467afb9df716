"""The README and the docs against the tree: what they name must exist, and what exists must be
named where a newcomer looks for it.

Docs drift quietly: a module is added and the README's layout still lists the old ones; a
command writes a new folder under ``reports.dir`` and the list of what that directory holds
does not say so. These tests fail when that happens, naming what to add or remove:

- the README's ``## Layout`` block lists every module, subpackage and file of ``judge/``,
  every prompt file and every sample set under ``golden/``, and nothing that does not exist;
- the lists of what ``reports.dir`` holds (``docs/reports.md``, ``docs/configuration.md``,
  ``reports/README.md``) name every entry the package writes there, found in the package's
  source, and (the two docs lists) nothing else;
- every ``judge <command>`` the README and docs name is a command of ``judge.cli``'s parser,
  and every command of the parser is in the README's ``## Commands`` section;
- every ``make <target>`` they name is a target of the Makefile.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from judge.cli import build_parser

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
#: Every Markdown file a user reads: the README, the docs, the data formats, the reports folder.
DOCS = [
    README,
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "golden").rglob("README.md")),
    REPO / "reports" / "README.md",
]

# --- reading Markdown ----------------------------------------------------------------------

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
SHELL_LANGUAGES = {"sh", "bash", "shell", "console", "cron"}


def _section(text: str, heading: str) -> str:
    """The body of the ``## heading`` section (up to the next heading of level 1 or 2)."""
    match = re.search(rf"^## {re.escape(heading)}[ \t]*\n(.*?)(?=^#{{1,2}} |\Z)", text, re.M | re.S)
    assert match, f"no '## {heading}' section"
    return match.group(1)


def _fences(text: str) -> list[tuple[str, str]]:
    """Fenced code blocks as (language, body)."""
    return [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)]


def _code_spans(text: str) -> list[str]:
    """Inline code spans outside fenced blocks; a span broken over two lines is joined."""
    prose = FENCE.sub("", text)
    return [" ".join(m.group(2).split()) for m in re.finditer(r"(`+)(.+?)\1", prose, re.S)]


def _table_rows(text: str) -> list[list[str]]:
    """The body rows of the first Markdown table in ``text``, as lists of cells."""
    rows: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, "no table"
    return rows[2:]  # the header and the --- line


# --- the README's layout -------------------------------------------------------------------

LAYOUT_LINE = re.compile(r"^(?P<indent> *)(?P<name>\S+)(?: {2,}(?P<what>\S.*))?$")


def _layout() -> dict[str, str]:
    """The ``## Layout`` block: relative path → what the line says it holds.

    One entry a line, nested two spaces deeper than its folder (which ends in ``/``), its
    description after two or more spaces.
    """
    fences = _fences(_section(README.read_text(encoding="utf-8"), "Layout"))
    assert fences, "the Layout section has no code block"
    entries: dict[str, str] = {}
    folders: list[str] = []  # the folder of each indentation level above the current line
    for line in fences[0][1].splitlines():
        if not line.strip():
            continue
        match = LAYOUT_LINE.match(line)
        assert match, f"Layout line is not 'name  what it holds': {line!r}"
        depth, rest = divmod(len(match["indent"]), 2)
        assert rest == 0 and depth <= len(folders), f"Layout line is indented oddly: {line!r}"
        del folders[depth:]
        path = "".join(folders) + match["name"]
        assert path not in entries, f"Layout names {path} twice"
        entries[path] = match["what"] or ""
        if match["name"].endswith("/"):
            folders.append(match["name"])
    return entries


def _package_entries() -> set[str]:
    """Every folder and file of the package a reader should find in the layout.

    ``__init__.py`` files are the folders' own line; ``py.typed`` is a marker for type checkers.
    """
    package = REPO / "judge"
    found = {"judge/"}
    for path in package.rglob("*"):
        relative = path.relative_to(REPO).as_posix()
        if "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        if path.is_dir():
            found.add(relative + "/")
        elif path.name not in {"__init__.py", "py.typed"}:
            found.add(relative)
    return found


def test_the_layout_names_only_what_exists() -> None:
    missing = sorted(p for p in _layout() if not (REPO / p.rstrip("/")).exists())
    assert not missing, f"README.md's Layout names what does not exist: {', '.join(missing)}"
    not_folders = sorted(p for p in _layout() if p.endswith("/") and not (REPO / p).is_dir())
    assert not not_folders, f"README.md's Layout: not folders: {', '.join(not_folders)}"


def test_the_layout_lists_every_module_and_subpackage() -> None:
    layout = _layout()
    unlisted = sorted(_package_entries() - set(layout))
    assert not unlisted, (
        "README.md's Layout does not list: "
        + ", ".join(unlisted)
        + " (one line each, under its folder, with what it holds)"
    )
    undescribed = sorted(p for p, what in layout.items() if p.startswith("judge/") and not what)
    assert not undescribed, f"README.md's Layout: say what these hold: {', '.join(undescribed)}"


def test_the_layout_says_how_many_modules_have_a_test_module_of_their_own() -> None:
    package = REPO / "judge"
    modules = [p for p in package.rglob("*.py") if p.name not in {"__init__.py", "__main__.py"}]
    tests = [REPO / "tests" / p.parent.relative_to(package) / f"test_{p.name}" for p in modules]
    share = round(100 * sum(test.exists() for test in tests) / len(modules))
    said = re.search(r"about (\d+) % of the modules have a test module", _layout()["tests/"])
    assert said and abs(int(said[1]) - share) <= 5, f"README.md's tests/ line: {share} % today"


def test_the_layout_lists_every_prompt_and_sample_set() -> None:
    layout = set(_layout())
    prompts = {p.relative_to(REPO).as_posix() for p in (REPO / "prompts").iterdir() if p.is_file()}
    samples = {
        p.relative_to(REPO).as_posix() + "/" for p in (REPO / "golden").iterdir() if p.is_dir()
    }
    assert prompts and samples
    unlisted = sorted((prompts | samples) - layout)
    assert not unlisted, f"README.md's Layout does not list: {', '.join(unlisted)}"


def test_the_layout_parser_reads_nesting_and_refuses_a_continuation_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "## Layout\n\n```\njudge/\n  a.py     one\n  sub/     two\n    b.py   three\n"
        "top.md   four\n```\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.README", readme)
    assert _layout() == {
        "judge/": "",
        "judge/a.py": "one",
        "judge/sub/": "two",
        "judge/sub/b.py": "three",
        "top.md": "four",
    }
    readme.write_text(
        "## Layout\n\n```\njudge/\n  a.py     one that goes on\n           on the next line\n```\n",
        encoding="utf-8",
    )
    with pytest.raises(AssertionError, match="Layout line"):
        _layout()


# --- what reports.dir holds ----------------------------------------------------------------

#: An expression that is the reports directory (``config.reports.dir``, a ``ReportsDir``'s
#: ``path``, ``run_lock``'s ``reports_dir``).
REPORTS_DIR = re.compile(r"\breports(?:\.dir|\.path|_dir)\b")
#: Entries whose names are built at run time, so no literal names them: the name the docs give
#: each, and a piece of the package's source that builds it (if that goes, so must the entry).
BUILT_NAMES = {
    "<UTC time>-<judge fingerprint>/": "def new_folder_name(",
    ".<folder>.<pid>.partial/": '.partial"',
}


def _package_source() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted((REPO / "judge").rglob("*.py"))}


def _names_under(tree: ast.AST, in_reports_dir_class: bool = False) -> set[str]:
    """The literal first path parts joined onto the reports directory in ``tree``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ClassDef)
            and node.name == "ReportsDir"
            and not in_reports_dir_class
        ):
            names |= _names_under(node, in_reports_dir_class=True)
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            continue
        right, left = node.right, ast.unparse(node.left)
        if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
            continue
        if REPORTS_DIR.search(left) or (in_reports_dir_class and left == "self.path"):
            names.add(right.value.split("/")[0])
    return names


def _reports_dir_entries() -> set[str]:
    """What the package writes under ``reports.dir``, from its source (folders without ``/``)."""
    sources = _package_source()
    names: set[str] = set()
    for source in sources.values():
        names |= _names_under(ast.parse(source))
    everything = "\n".join(sources.values())
    for name, marker in BUILT_NAMES.items():
        assert marker in everything, f"nothing in judge/ builds {name} any more ({marker!r})"
        names.add(name.rstrip("/"))
    return names


def _entries(spans: list[str]) -> set[str]:
    """The entries a list names: its code spans, folders without their ``/``; a span naming a
    command (``judge retrieval``, what writes the entry) is not an entry."""
    return {span.rstrip("/") for span in spans if not re.match(r"judge\b", span)}


def test_the_package_writes_what_these_tests_expect_to_find() -> None:
    """The source scan itself: it must see the entries known today, or it sees nothing."""
    assert {
        "history.jsonl",
        "latest",
        ".lock",
        "runs",
        "sweeps",
        "stability",
        "batch",
        "trec",
        "retrieval.json",
    } <= _reports_dir_entries()


def test_the_scan_finds_a_path_joined_onto_the_reports_directory() -> None:
    source = (
        "def f(config, reports, reports_dir):\n"
        "    a = Path(config.reports.dir) / 'one' / name\n"
        "    b = reports.path / 'two/deeper'\n"
        "    c = reports_dir / '.three'\n"
        "    d = folder.path / 'not-this'\n"
        "class ReportsDir:\n"
        "    def g(self):\n"
        "        return self.path / 'four'\n"
        "class ReportFolder:\n"
        "    def h(self):\n"
        "        return self.path / 'not-this-either'\n"
    )
    assert _names_under(ast.parse(source)) == {"one", "two", ".three", "four"}


def test_docs_reports_md_lists_everything_under_reports_dir() -> None:
    text = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    rows = _table_rows(_section(text, "The reports directory"))
    listed = _entries([_code_spans(row[0])[0] for row in rows])
    expected = _reports_dir_entries()
    assert listed == expected, (
        f"docs/reports.md, 'The reports directory': add {sorted(expected - listed)}, "
        f"remove {sorted(listed - expected)}"
    )


def test_docs_configuration_md_lists_everything_under_reports_dir() -> None:
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = [row for row in _table_rows(_section(text, "`[reports]`")) if row[0] == "`dir`"]
    assert len(rows) == 1, "docs/configuration.md: no `dir` row under [reports]"
    listed = _entries(_code_spans(rows[0][2]))
    expected = _reports_dir_entries()
    assert listed == expected, (
        f"docs/configuration.md, reports.dir: add {sorted(expected - listed)}, "
        f"remove {sorted(listed - expected)}"
    )


def test_reports_readme_names_everything_under_reports_dir() -> None:
    """It also names the files of a report folder, so only "every entry" is checked here."""
    named = _entries(_code_spans((REPO / "reports" / "README.md").read_text(encoding="utf-8")))
    missing = sorted(_reports_dir_entries() - named)
    assert not missing, f"reports/README.md does not name: {', '.join(missing)}"


# --- commands and make targets -------------------------------------------------------------

#: Code spans that start with the word "judge" but name a gate check or a report column, not a
#: command.
NOT_COMMANDS = {
    "judge vs last compatible run",
    "judge vs baseline",
    "judge has something to compare with",
    "judge mean",
    "judge changed",
}
WORD = re.compile(r"[a-z][a-z-]*")


def _parser_commands() -> dict[tuple[str, ...], bool]:
    """Every command path of the parser → whether it runs by itself (a handler of its own)."""
    commands: dict[tuple[str, ...], bool] = {}

    def walk(parser: argparse.ArgumentParser, prefix: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    commands[(*prefix, name)] = sub.get_default("handler") is not None
                    walk(sub, (*prefix, name))

    walk(build_parser(), ())
    return commands


def _invocations(tokens: list[str], program: str) -> list[list[str]]:
    """The words after each ``program`` (or ``.../program``) in a command line's tokens."""
    found = []
    for i, token in enumerate(tokens):
        if token == program or token.endswith("/" + program):
            found.append(tokens[i + 1 :])
    return found


def _judge_command(words: list[str], commands: dict[tuple[str, ...], bool]) -> tuple[str, ...]:
    """The command path a ``judge ...`` line names (``()`` for ``judge --help`` and the like)."""
    while words[:1] == ["--config"]:
        words = words[2:]
    if not words or not WORD.fullmatch(words[0]):
        return ()  # an option (--version) or a placeholder (COMMAND)
    path: tuple[str, ...] = (words[0],)
    has_subcommands = any(len(c) == 2 and c[0] == words[0] for c in commands)
    if has_subcommands and len(words) > 1 and WORD.fullmatch(words[1]):
        path = (words[0], words[1])
    return path


def _command_lines(text: str) -> list[str]:
    """Lines of fenced shell blocks (comments dropped), and the code spans that start with the
    program (``judge check``, ``.venv/bin/judge run``): a span such as ``nightly: FAILED: the
    judge gave no verdict ...`` quotes output, not a command."""
    lines = [
        line.split(" #")[0]
        for language, body in _fences(text)
        if language in SHELL_LANGUAGES
        for line in body.splitlines()
        if not line.lstrip().startswith("#")
    ]
    spans = [span for span in _code_spans(text) if re.match(r"(\S*/)?judge ", span)]
    return lines + spans


def _named_commands(text: str, commands: dict[tuple[str, ...], bool]) -> set[tuple[str, ...]]:
    named: set[tuple[str, ...]] = set()
    for line in _command_lines(text):
        if line in NOT_COMMANDS:
            continue
        for words in _invocations(line.replace("`", " ").split(), "judge"):
            path = _judge_command(words, commands)
            if path:
                named.add(path)
    return named


def test_every_judge_command_in_the_docs_exists() -> None:
    commands = _parser_commands()
    unknown = [
        f"{doc.relative_to(REPO)}: judge {' '.join(path)}"
        for doc in DOCS
        for path in sorted(_named_commands(doc.read_text(encoding="utf-8"), commands))
        if path not in commands
    ]
    assert not unknown, "not a command of judge.cli.build_parser(): " + "; ".join(unknown)


def test_the_readme_commands_section_has_every_command() -> None:
    commands = _parser_commands()
    section = _section(README.read_text(encoding="utf-8"), "Commands")
    named = _named_commands(section, commands)
    runnable = {path for path, runs in commands.items() if runs}
    missing = sorted(" ".join(path) for path in runnable - named)
    assert not missing, (
        f"README.md's Commands section does not name: judge {', judge '.join(missing)}"
    )


def test_the_command_finder_reads_shell_blocks_and_spans() -> None:
    commands = _parser_commands()
    text = (
        "Run `judge audit sample --n 3` and `judge --config x.toml run`; "
        "`judge --version`; `judge vs baseline`; the judge sees all.\n\n"
        "```sh\n.venv/bin/judge baseline pin   # judge nope\ncd /x && judge trec export\n```\n"
        "```\njudge per type (an output block)\n```\n"
    )
    assert _named_commands(text, commands) == {
        ("audit", "sample"),
        ("run",),
        ("baseline", "pin"),
        ("trec", "export"),
    }


def _make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z0-9_-]+)[ \t]*:(?!=)", text, re.M))


#: ``make TARGET`` (or ``make -C DIR TARGET``) where a command starts: at the start of a line
#: or a code span, after ``&&``, ``;`` or ``||`` ("would make the interval ..." is prose).
MAKE_CALL = re.compile(
    r"(?:^|&&|;|\|\||`)[ \t]*make(?:[ \t]+-C[ \t]+\S+)*[ \t]+([a-z][a-z-]*)", re.M
)


def _named_make_targets(text: str) -> set[str]:
    """The targets of ``make`` calls in code spans and fenced blocks."""
    code = _code_spans(text) + [body for _, body in _fences(text)]
    return {target for piece in code for target in MAKE_CALL.findall(piece)}


def test_every_make_target_in_the_docs_exists() -> None:
    targets = _make_targets()
    assert {"judge", "test", "test-fast", "check"} <= targets
    unknown = [
        f"{doc.relative_to(REPO)}: make {target}"
        for doc in DOCS
        for target in sorted(_named_make_targets(doc.read_text(encoding="utf-8")) - targets)
    ]
    assert not unknown, "not a target of the Makefile: " + "; ".join(unknown)


def test_the_make_finder() -> None:
    text = (
        "`make judge`, `make -C /srv nightly`; the first `make` builds.\n"
        "```sh\nmake bench\ncd /x && make check\n```\n"
        "```\nlabels that would make the interval half as wide; `make test` runs all\n```\n"
    )
    assert _named_make_targets(text) == {"judge", "nightly", "bench", "check", "test"}


# --- the gate's rule, in the code's words --------------------------------------------------

#: How the gate fails, in the words of ``judge/results/gate.py`` (its docstrings, verdict and
#: ``Detectable.describe``): the help of ``run`` and ``nightly`` and docs/gate.md use them.
GATE_TERMS = ("collapse", "exact", "margin", "over the season", "a fall that stays")
#: The previous gate's rule: a bootstrap interval below zero, and a minimum number of questions.
OLD_GATE = re.compile(r"bootstrap|interval|enough questions|min(imum|_questions)", re.I)
OLD_MINIMUM = re.compile(r"min_questions|minimum (?:number )?of (?:\d+ )?questions", re.I)
#: The pages that state the gate's rule.
GATE_DOCS = [
    README,
    *(REPO / "docs" / name for name in ("gate.md", "reports.md", "configuration.md")),
]


def test_the_gate_terms_are_the_codes() -> None:
    source = " ".join((REPO / "judge" / "results" / "gate.py").read_text("utf-8").split())
    assert [term for term in GATE_TERMS if term not in source] == []


def test_gate_md_opens_with_the_current_rule() -> None:
    text = (REPO / "docs" / "gate.md").read_text(encoding="utf-8")
    opening = " ".join(text.split("\n## ", 1)[0].split())  # before the first section
    assert [term for term in GATE_TERMS if term not in opening] == []


def test_the_docs_name_the_old_rule_only_as_the_previous_one() -> None:
    """A paragraph that names a minimum number of questions, or a sentence that decides a
    regression by a bootstrap interval (the previous gate's rule), says it is the previous
    rule, ignored, or (an interval) shown for reading."""
    stale = []
    for doc in GATE_DOCS:
        prose = FENCE.sub("", doc.read_text(encoding="utf-8"))
        for paragraph in re.split(r"\n[ \t]*\n", prose):
            said = " ".join(paragraph.split())
            gated = any("bootstrap" in s and "regress" in s for s in said.split(". "))
            if (OLD_MINIMUM.search(said) or gated) and not re.search(
                r"previous|ignored|for reading", said
            ):
                stale.append(f"{doc.relative_to(REPO)}: {said[:100]}")
    assert stale == []
