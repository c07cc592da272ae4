"""Spend and budgets: what forwarded requests cost, per key, tenant, model and UTC day,
and the per-tenant caps a policy sets on it (README, "Spend and budgets")."""
