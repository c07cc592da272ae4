"""Memory injection: token budgets and the memories added to chat requests."""
