"""API keys issued at run time through the admin API (beside the config's keys)."""
