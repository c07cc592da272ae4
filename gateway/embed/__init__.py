"""Sentence embedders: the protocol, the offline local default, and litellm models."""
