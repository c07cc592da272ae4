"""The request pipeline: classify, exact lookup, semantic lookup, memory, forward, store."""
