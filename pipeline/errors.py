"""Errors raised by the pipeline; each names what went wrong and where."""


class PipelineError(Exception):
    """Base class for every error the pipeline raises on purpose."""


class InputError(PipelineError):
    """A record in an input file is unusable; carries the file and line."""

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None
    ):
        self.path = path
        self.line = line
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(f"{where}{message}")


class SchemaError(PipelineError):
    """An entity schema is malformed."""


class ExtractionError(PipelineError):
    """The LLM could not produce a valid extraction for a document."""


class ScorerError(PipelineError):
    """A scorer could not be loaded or run."""


class TrainingError(PipelineError):
    """Training cannot start or failed (e.g. too few labels of one class)."""


class TrainingCancelled(PipelineError):
    """Training was stopped on request (raised by an ``on_progress`` callback).

    ``train_scorer`` lets it through before writing anything, so a cancelled
    run leaves no output folder behind.
    """
