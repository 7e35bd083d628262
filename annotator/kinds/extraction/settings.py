"""The extraction kind's settings."""

from annotator.core.env import env_float

# What an extraction run started without a budget may spend (under
# LLM_RUN_MAX_BUDGET).
EXTRACTION_DEFAULT_BUDGET = env_float("EXTRACTION_DEFAULT_BUDGET", 10.0)
# The alignment threshold of a project made without one (paper eq. 2).
DEFAULT_ALIGN_THRESHOLD = env_float("DEFAULT_ALIGN_THRESHOLD", 0.6)
