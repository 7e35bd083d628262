"""Projects, who may see and do what in them, and their webhooks."""
