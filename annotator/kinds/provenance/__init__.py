"""The provenance kind on the app side: the online check of one RAG item."""
