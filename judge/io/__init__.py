"""Reading and writing files safely: the one I/O home of the harness.

One concern per module, each importing nothing of judge but ``judge.errors``:

- ``text``: strict input types (``StrictRecord``, ``StrictInt``, ``Id``), the id and text
  checks, reading a UTF-8 file within its size limit;
- ``json``: the one JSON parse path (every refusal: not JSON, half a character, too deep, an
  integer too long, the size limits) and its located problems;
- ``jsonl``: JSONL reading with every bad line reported at once, and the JSONL writer that
  refuses what its reader would refuse;
- ``validation``: pydantic's errors said as what a field takes, records validated by line;
- ``write``: appends, atomic writes and unique names;
- ``lock``: the one file lock (a shared file's ``locked``, a reports folder's ``run_lock``);
- ``state``: the JSON state files the harness writes and reads back, and pointer files.

Names are imported from their module (``from judge.io.jsonl import read_jsonl``); this
package's ``__init__`` re-exports nothing.
"""
