"""Datasets and traces written by other tools, read into one neutral record per question, and
converted into a golden set, a corpus and a run (``judge import``).

Three sources, each read to its published schema (``docs/imports.md`` cites them):

- **Ragas** evaluation datasets (``SingleTurnSample``: ``user_input``, ``retrieved_contexts``,
  ``response``, ``reference``, ``reference_contexts``), as ``EvaluationDataset.to_jsonl`` and
  ``to_csv`` write them (a list cell in CSV is Python's ``str()`` of the list, since
  ``csv.DictWriter`` writes every value with ``str``), a JSON array, or Parquet;
- **DeepEval** test cases and goldens (``input``, ``actual_output``, ``expected_output``,
  ``retrieval_context``, ``context``), as ``EvaluationDataset.save_as`` writes them: a JSON
  array, JSONL or CSV (the last two join a list with ``|``);
- **OpenTelemetry** traces in OTLP JSON (``resourceSpans[].scopeSpans[].spans[]``, what the
  collector's file exporter writes, one ``TracesData`` a line) with OpenInference attributes:
  one question per trace.

A reader only reads: every row or span it cannot use is one located problem
(``FILE:LINE: field: what to do``), all of a file's raised together as one ``InputError``.
The tools' files are not ours, so a column a reader does not know is not an error (a Ragas
result file carries its metric scores as columns): the reader names the columns it ignored in
one warning, which also catches a misspelt optional column. Turning the records into the three
files (ids, types, out of scope, relevant chunks) is ``convert``'s job, the same for every tool.

The modules, in the order the data flows:

- ``records``: the neutral record, the columns the user names, what a reader found;
- ``table_files`` and ``tables``: a table file's rows, and the Ragas and DeepEval schemas;
- ``spans`` and ``otel``: a trace file's spans, and the OpenInference traces read from them;
- ``read``: the reader of a tool, by its name;
- ``convert``: the records → the golden set's, corpus' and run's lines, and the ``[data]``
  lines for judge.toml.
"""
