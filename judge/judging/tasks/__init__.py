"""The judgements, one task module each (``base`` says what a task is; ``registry`` lists
them). Nothing is imported here: import the module you need."""
