"""The statement kind's setting: how many statements its job keeps."""

from annotator.core.env import env_int

#: The most statements a run keeps of those the LLM writes for one document.
STATEMENT_MAX_PER_DOCUMENT = env_int("STATEMENT_MAX_PER_DOCUMENT", 2)
