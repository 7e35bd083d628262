"""Experts' labels: the queue that hands claims out, what each hand-out
shows, labels, the gold set, adjudication and guidelines."""
