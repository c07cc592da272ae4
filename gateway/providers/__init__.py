"""Upstream providers. `litellm_provider` is the only module that imports litellm."""
