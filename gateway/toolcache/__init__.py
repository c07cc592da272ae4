"""The tool-result cache for agents: canonical keys, the service the API calls, and its
counters (README, "Tool-result cache for agents")."""
