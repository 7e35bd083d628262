"""SafePassage: grounded information extraction with black-box LLMs.

Glossary:
    context     the text an LLM copied from the document as evidence
    alignment   where that context lies in the document; score = matches /
                alignment length (paper eq. 1); kept if >= 0.6
    hypothesis  h(y) = "{Entity Type}: {value}" (paper 3.3.1)
    scorer      p(the aligned span supports the hypothesis): an NLI
                cross-encoder or an LLM grader
    verdict     safe, or unsafe with a reason: not_in_document / not_supported
    silver      training pairs made without humans (perturbations, LLM grader)

Layout: a core every checker shares (``types`` and ``jsonl`` records,
``align``, ``score`` and ``grader`` scorers, ``llm`` client, ``train``,
``evaluate``) and one subpackage of :mod:`pipeline.checkers` per kind of LLM
output checked (``checkers.extraction``: the terms above). Stages take and
return the frozen records of :mod:`pipeline.types`; the heavy modules (torch,
openai) load only when their stage runs.
"""

__version__ = "0.1.0"
