"""The wiring: the one layer that connects the stages (inputs → retrieval → judge → report
folder → gate), one module per command. Each function here reads what it needs once, does the
work, writes what the command writes and returns a typed result; nothing here prints (progress
goes to hooks). ``judge.cli`` parses, calls one of these and prints a view of the result.

==========================================  ================================================
command                                     wiring (``judge.pipeline.<module>``)
==========================================  ================================================
``check``                                   ``check``: ``check``
``retrieval`` (``--trec-run``), ``trec``    ``retrieval``: ``retrieval``, ``export_trec``
``run``, ``nightly``                        ``evaluate``: ``evaluate``; ``run``: the CI files
``report``                                  ``report``: ``rerender``
``show``, ``diff``                          ``folders``: ``folder_record``, ``diff_folders``
                                            (``diff``: ``diff_records``)
``baseline pin``, ``baseline ratchet``      ``baseline``: ``pin``, ``ratchet``
``audit``, ``audit sample|import|label``    ``audit``: ``audit``, ``sample``,
                                            ``import_labels``, ``label``
``cache stats``, ``cache prune``            ``cache``: ``cache_stats``, ``prune_cache``
``sweep``                                   ``sweep``: ``sweep``
``stability``                               ``stability``: ``judge_stability``
``batch export``, ``batch import``          ``judge.pipeline.batch``
``import ragas|deepeval|otel``              ``imports``: ``import_foreign``
==========================================  ================================================

Shared by them: ``inputs`` (the golden set, the run and the labels, loaded and validated once;
retrieval scored on them) and ``session`` (the judge backend and the verdict cache for as long
as a command judges).

Nothing is imported here: a command imports the module it calls
(``from judge.pipeline.evaluate import evaluate``) when it runs, so a test that replaces
``judge.pipeline.evaluate.evaluate`` changes what the commands call. The judge backend is opened
by ``judge.pipeline.session``, which looks ``open_backend`` up in its own namespace: a test
replaces ``judge.pipeline.session.open_backend``.
"""
