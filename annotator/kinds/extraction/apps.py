from annotator import kinds


class ExtractionConfig(kinds.KindConfig):
    name = "annotator.kinds.extraction"
    kind = "extraction"
    default_kind = True
