"""The audit trail of admin actions (who did what, when, from where, with what outcome)."""
