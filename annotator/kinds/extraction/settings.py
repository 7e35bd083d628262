"""The extraction kind's settings."""

from annotator.core.env import env_float

# What an extraction run started without a budget may spend (under
# LLM_RUN_MAX_BUDGET).
EXTRACTION_DEFAULT_BUDGET = env_float("EXTRACTION_DEFAULT_BUDGET", 10.0)
