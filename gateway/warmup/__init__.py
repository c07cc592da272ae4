"""Warm-up from history: `gateway cache import FILE` stores the cacheable answers of
recorded (request, response) pairs through the live pipeline's own rules."""
