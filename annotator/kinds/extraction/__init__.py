"""The extraction kind on the app side: LLM extraction runs."""
