"""Upstream providers: the protocols (`protocol.py`) and litellm's implementation
(`litellm_provider.py` and `litellm_params.py`, the only modules that import litellm)."""
