"""The non-cacheable classifier: writes, time-sensitive, IDs, follow-ups, personal data."""
