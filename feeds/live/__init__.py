"""Shared boards, live (docs/api.md, "Shared boards, live"): the WebSocket consumer, the per-board op
log in the data Redis, applying ops to a doc, and compaction into PostgreSQL."""
