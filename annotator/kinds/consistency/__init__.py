"""The consistency kind on the app side: runs that sample other models
and correct flagged sentences."""
