"""Writing files so that a crash or a second command never leaves a half-written one.

``write_atomic`` writes a whole file or nothing (a synced temporary file renamed into place);
``append_line`` appends one synced line, never glued onto a last line without its newline
(``end_with_newline``); ``claim_unique`` creates a name no other command has, for outputs named
to the second. An append to a file that several commands update is made holding its lock
(``judge.io.lock.locked``).
"""

from __future__ import annotations

import os
from pathlib import Path


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


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a whole file or nothing: a temporary file, synced, then renamed into place.
    ``text``: a string (written as UTF-8), or the UTF-8 bytes themselves.

    A crash leaves the old file (or none), never a half-written one.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as handle:
        handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
