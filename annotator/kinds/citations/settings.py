"""The citations kind's settings: what the case law holds completely, and
CourtListener."""

from annotator.core.env import env_secret, env_str

# Citation checking (issue 12). Reporter volumes the case-law store and index
# hold completely, e.g. "U.S.:329-579": a citation there that matches nothing
# does not exist; elsewhere it is only unverifiable.
CITATION_COMPLETE_REPORTERS = env_str("CITATION_COMPLETE_REPORTERS", "")
# CourtListener as a further source when a token is set (its v4 API).
COURTLISTENER_API_TOKEN = env_secret("COURTLISTENER_API_TOKEN")
COURTLISTENER_URL = env_str("COURTLISTENER_URL", "https://www.courtlistener.com")
