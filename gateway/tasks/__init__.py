"""Task state: the structured, exact record of one task a user works on (goal,
constraints, decisions, artifacts, open questions), read by key, never ranked."""
