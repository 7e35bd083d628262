from annotator import kinds


class ProvenanceConfig(kinds.KindConfig):
    name = "annotator.kinds.provenance"
    kind = "provenance"
