"""The citations kind on the app side: the case-law store."""
