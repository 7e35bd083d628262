"""The citation tests' case law: the example store of
``tools.citation_example``."""

from tools.citation_example import DOE_TEXT, INDEX, OPINIONS, write_example


def write_caselaw(folder):
    """The store and index as JSONL files in ``folder``."""
    files = write_example(folder)
    return files["caselaw"], files["index"]


__all__ = ["DOE_TEXT", "INDEX", "OPINIONS", "write_caselaw"]
