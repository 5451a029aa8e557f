"""The Train page: its sentences, charts, a session's live run and the server-wide training queue."""
