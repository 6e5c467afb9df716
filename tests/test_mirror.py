"""Tests mirror the modules: ``judge/<path>/<name>.py`` is tested in ``tests/<path>/test_<name>.py``,
so that a module's tests are found by its name (a test module may have other neighbours too:
end-to-end tests named for what they cover, such as ``tests/pipeline/test_rerender_whole_run.py``).

To see the share and the modules that have no test module of their name, without a script:

    python -m pytest tests/test_mirror.py -q -rP

Every module of ``judge/`` counts but ``__init__.py`` and ``__main__.py`` (a package's init and
the ``python -m judge`` entry hold no behaviour of their own). The share may not fall below
``FLOOR``, the last release's 79 %: a new module comes with its test module.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO

#: The share of modules with a test module of their name a release ago (issue 31).
FLOOR = 0.79
NOT_COUNTED = frozenset({"__init__.py", "__main__.py"})


def mirror(package: Path, tests: Path) -> tuple[list[str], list[str]]:
    """(modules with a test module, modules without), as paths relative to ``package``."""
    modules = sorted(
        path.relative_to(package) for path in package.rglob("*.py") if path.name not in NOT_COUNTED
    )
    tested = [m for m in modules if (tests / m.parent / f"test_{m.name}").is_file()]
    return [str(m) for m in tested], [str(m) for m in modules if m not in tested]


def test_the_mirror_pairs_a_module_with_the_test_module_of_its_name(tmp_path: Path) -> None:
    package, tests = tmp_path / "judge", tmp_path / "tests"
    for name in ("__init__.py", "__main__.py", "a.py", "sub/__init__.py", "sub/b.py", "sub/c.py"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text("", encoding="utf-8")
    # test_b.py at the top is not sub/b.py's; a test of a module that does not exist counts for
    # nothing; a folder named like a test module is not one.
    for name in ("test_a.py", "test_b.py", "sub/test_c.py", "sub/test_gone.py"):
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_text("", encoding="utf-8")
    (tests / "sub" / "test_b.py").mkdir()
    assert mirror(package, tests) == (["a.py", "sub/c.py"], ["sub/b.py"])


def test_tests_mirror_the_modules() -> None:
    tested, untested = mirror(REPO / "judge", REPO / "tests")
    total = len(tested) + len(untested)
    share = len(tested) / total
    summary = (
        f"tests mirror {len(tested)} of {total} modules ({share:.0%}); "
        f"without a test module of their name ({len(untested)}):\n"
        + "\n".join(f"  judge/{name}" for name in untested)
    )
    print(summary)
    assert share >= FLOOR, f"{summary}\nbelow the floor of {FLOOR:.0%}: add their test modules"
