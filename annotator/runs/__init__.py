"""The one lifecycle every run shares, the budgets of LLM runs, the sweep
that finds lost ones, and grading runs."""
