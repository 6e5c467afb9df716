"""The run record: its typed model (``model``), its pure assembly from a run's stages
(``stages``, ``build``, ``manifest_build``, ``rows``) and the one store that reads and writes
a report folder (``store``). Nothing is re-exported here: import each name from its module."""
