"""Judge backends: one small interface (``base``), several implementations (``ollama``,
``embedded``, ``openai``, ``lexical``, a ``pool`` of servers, ``http`` shared by the first and
third), chosen by name (``registry``: ``open_backend``); ``openai_batch`` is the OpenAI batch
format that ``judge batch export|import`` writes and reads. Nothing is imported here: import the
module you need."""
