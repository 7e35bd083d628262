from annotator import kinds
from tests.kinds.statement.checker import KIND


class StatementConfig(kinds.KindConfig):
    name = "tests.kinds.statement"
    label = "statement_test"
    kind = KIND
