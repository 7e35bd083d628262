from annotator import kinds


class CitationsConfig(kinds.KindConfig):
    name = "annotator.kinds.citations"
    kind = "citations"
