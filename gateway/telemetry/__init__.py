"""Logging, decision records and (later) metrics. Never logs prompt text or keys."""
