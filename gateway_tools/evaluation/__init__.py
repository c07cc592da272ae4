"""`gateway eval`: measure caching decisions on labeled public data."""
