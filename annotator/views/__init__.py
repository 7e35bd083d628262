"""Server-rendered pages: thin, each checks access, reads, renders."""
