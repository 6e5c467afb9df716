"""The record's build, wired (``judge.pipeline.build``): what it reads for the pure build, the
git commit and whether the tree changed."""

from pathlib import Path


def test_git_says_the_commit_and_whether_the_tree_changed(tmp_path: Path) -> None:
    import subprocess

    from judge.pipeline.build import git_info

    def _git(path: Path) -> tuple[str | None, bool | None]:
        info = git_info(path)
        return info.commit, info.dirty

    assert _git(tmp_path) == (None, None)  # not a repository
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    assert _git(tmp_path) == (None, None)  # no commit yet
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert _git(tmp_path) == (head, False)
    (tmp_path / "untracked.txt").write_text("b", encoding="utf-8")
    assert _git(tmp_path) == (head, True)
