"""Writing files so that a crash or a second command never leaves a half-written one.

``write_atomic`` writes a whole file or nothing (a synced temporary copy renamed into place),
in place of the file a path names, not over it: a symlink stays a link and its target gets the
text, the file keeps its mode and owner, a read-only file is refused in one line
(``NotWritable``), and the copies a killed process left are removed (``clear_stale_copies``);
``append_line`` appends one synced line, never glued onto a last line without its newline
(``end_with_newline``); ``claim_unique`` creates a name no other command has, for outputs named
to the second. An append to a file that several commands update is made holding its lock
(``judge.io.lock.locked``).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from judge.errors import InputError


def end_with_newline(path: Path) -> bool:
    """Give a non-empty text file without a final newline one (a line written by hand or by an
    editor that leaves none), so that a line appended next is a line of its own, never glued
    onto the last one. True when the file was changed (a missing file is not). Call it holding
    the file's lock."""
    if not path.is_file():
        return False
    with path.open("r+b") as handle:
        if handle.seek(0, os.SEEK_END) == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return False
        handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    return True


def append_line(path: Path, line: str) -> None:
    """Append one line (``line`` ends with ``\\n``), synced; a last line without its newline
    gets one first (``end_with_newline``). Call it holding the file's lock."""
    with path.open("a+b") as handle:
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                line = "\n" + line
        handle.write(line.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def claim_unique(parent: Path, stem: str, suffix: str = "", *, folder: bool = False) -> Path:
    """Create ``parent/<stem><suffix>`` exclusively (an empty file, or a folder), or, when it
    exists, ``<stem>-2<suffix>``, ``<stem>-3<suffix>``, ...: the first name no other command
    has. Timestamped outputs are named to the second, and two commands started in the same
    second must not write (or replace) one file. The caller then fills what it claimed (a
    file by ``write_atomic``, which replaces the empty one; a folder by renaming a staged one
    over the empty one)."""
    parent.mkdir(parents=True, exist_ok=True)
    number = 1
    while True:
        path = parent / (f"{stem}{suffix}" if number == 1 else f"{stem}-{number}{suffix}")
        try:
            if folder:
                path.mkdir()
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            number += 1
            continue
        return path


#: What a temporary copy of ``<name>`` is called beside its target: ``.<name>.<pid><suffix>``.
#: ``.accept`` is the staged questions file of ``judge golden accept`` in earlier releases;
#: ``.partial`` a staging folder (``judge import``'s ``.import.<pid>.partial``).
_COPY_SUFFIXES = (".tmp", ".accept", ".partial")


class NotWritable(InputError):
    """A file the harness would write in place of is read-only: one line, nothing written."""


def _temporary_copy(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _stale(number: str) -> bool:
    """Whether ``number`` (the pid in a copy's name) is the pid of no live process: not this
    one, and none the system knows. Anything that is no pid at all (letters, a number past
    what a pid can be) is not decided stale: that file is not one of ours."""
    if not (number.isascii() and number.isdigit()) or not 0 < int(number) < 2**31:
        return False
    pid = int(number)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: alive
        return False
    return False


def clear_stale_copies(path: Path) -> list[Path]:
    """Remove the temporary copies of ``path`` (``.<name>.<pid>.tmp`` beside it) that a killed
    process left: only those whose pid is no live process, never another running command's
    (a pid reused since counts as alive, so its copy waits for the next time). A copy that is
    a folder (the staging folder of an import or a sweep) is removed with what it holds; a
    symlink is unlinked, never followed. Returns what was removed. ``write_atomic`` calls it
    before it writes, ``judge.io.lock.locked`` once it holds the file's lock, an import or a
    sweep before it stages its folder."""
    target = Path(os.path.realpath(path))
    prefix = f".{target.name}."
    removed: list[Path] = []
    try:
        names = [entry.name for entry in os.scandir(target.parent)]
    except OSError:
        return removed
    for name in names:
        if not name.startswith(prefix) or not name.endswith(_COPY_SUFFIXES):
            continue
        if not _stale(name[len(prefix) :].rsplit(".", 1)[0]):
            continue
        stale = target.parent / name
        with suppress(FileNotFoundError):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale)
            else:
                os.unlink(stale)
            removed.append(stale)
    return removed


def clear_stale_folders(parent: Path) -> list[Path]:
    """Remove the staging folders (``.<name>.<pid>.tmp`` or ``.partial``) in ``parent`` that a
    killed process left, whatever their name: for a folder of timestamped outputs (sweeps),
    where the next command stages under another name than the killed one did. Only folders,
    only of pids that no live process has (``clear_stale_copies``' rule); returns them."""
    removed: list[Path] = []
    try:
        entries = [entry for entry in os.scandir(parent) if entry.name.startswith(".")]
    except OSError:
        return removed
    for entry in entries:
        stem, dot, suffix = entry.name.rpartition(".")
        if f".{suffix}" not in _COPY_SUFFIXES or not dot or not entry.is_dir(follow_symlinks=False):
            continue
        if _stale(stem.rpartition(".")[2]):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def check_writable(path: Path) -> None:
    """Raise ``NotWritable`` (one line) when ``write_atomic`` would refuse to write ``path``
    (read-only, or a link that leads to itself): for a command that writes several files and
    must refuse before it writes the first."""
    target = Path(os.path.realpath(path))
    if os.path.islink(target):
        raise NotWritable([f"{path}: a symlink that leads to itself; fix the link"])
    with suppress(FileNotFoundError):
        _refuse_read_only(path, target, os.stat(target).st_mode)


def _refuse_read_only(path: Path, target: Path, mode: int) -> None:
    """Raise ``NotWritable`` when ``target`` (``path``'s real file) may not be written.

    Decided by the mode bits, not by trying: root (the CI and the tests run as root) opens a
    0444 file for writing without a ``PermissionError``, and a rename over it needs only the
    folder's permission, so a file its owner made read-only would be replaced silently. A file
    this user cannot write (``os.access``) is refused too: it is someone else's."""
    if mode & 0o222 and os.access(target, os.W_OK):
        return
    shown = str(path) if target == Path(os.path.abspath(path)) else f"{path} (a link to {target})"
    raise NotWritable(
        [
            f"{shown}: read-only (mode {stat.S_IMODE(mode):04o}), so nothing was written; allow "
            f"writing to it (chmod u+w {target}) and run this again"
        ]
    )


def _open_copy(target: Path, existing: os.stat_result | None) -> tuple[Path, int]:
    """Create the temporary copy of ``target`` beside it, with ``existing``'s owner and mode
    (a new file gets the usual ``0666`` less the umask)."""
    tmp = _temporary_copy(target)
    tmp.unlink(missing_ok=True)  # this pid's own, left by an earlier process of the same pid
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if existing else 0o666)
    except PermissionError:
        raise NotWritable(
            [
                f"{target.parent}: this user may not create files there, so {target.name} was not "
                "written; fix the folder's permissions and run this again"
            ]
        ) from None
    if existing is not None:
        if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
            with suppress(OSError):  # only root may give a file away; a group of one's own is fine
                os.fchown(fd, existing.st_uid, existing.st_gid)
        os.fchmod(fd, stat.S_IMODE(existing.st_mode))  # after the chown, which clears setuid
    return tmp, fd


def write_atomic(
    path: Path, text: str | bytes, *, check: Callable[[Path], None] | None = None
) -> None:
    """Write a whole file or nothing, in place of the file ``path`` names: a temporary copy
    beside the real file, synced, then renamed over it. ``text``: a string (written as UTF-8),
    or the UTF-8 bytes themselves. ``check``, when given, is called with the synced copy before
    the rename; what it raises leaves the file as it was.

    A crash leaves the old file (or none), never a half-written one. A symlink (a shared
    ``judge.toml``) stays a link: its target is written, in the target's folder. The file keeps
    its mode and, where this user may set it, its owner and group. A read-only file is refused
    (``NotWritable``, one line) before anything is written. Copies a killed process left are
    removed first (``clear_stale_copies``).
    """
    target = Path(os.path.realpath(path))
    if os.path.islink(target):
        raise NotWritable([f"{path}: a symlink that leads to itself; fix the link"])
    try:
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        _refuse_read_only(path, target, existing.st_mode)
    clear_stale_copies(target)
    tmp, fd = _open_copy(target, existing)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        if check is not None:
            check(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file ``path`` holds exactly ``data``: its size first, then its bytes a
    megabyte at a time (a large review page is never read whole)."""
    try:
        if os.stat(path).st_size != len(data):
            return False
        view, step = memoryview(data), 1 << 20
        with open(path, "rb") as handle:
            for start in range(0, len(data), step):
                if handle.read(step) != view[start : start + step]:
                    return False
    except OSError:
        return False
    return True


def write_changed(path: Path, text: str | bytes) -> bool:
    """``write_atomic``, unless the file already holds those bytes (then it is left as it
    is, its time unchanged): True when it was written. Re-rendering an intact folder rewrites
    nothing."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    if _holds(path, data):
        return False
    write_atomic(path, data)
    return True
