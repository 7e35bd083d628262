"""Claims in and out: imports (JSONL, tables, PDFs), records, export, and
the check that finds each claim's evidence and scores it."""
