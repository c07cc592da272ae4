"""HTTP routes, one module per area, plus the request-id middleware and error handlers."""
