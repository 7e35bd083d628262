from annotator import kinds


class ConsistencyConfig(kinds.KindConfig):
    name = "annotator.kinds.consistency"
    kind = "consistency"
