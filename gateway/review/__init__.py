"""Gray-band review: a second opinion on whether two requests ask the same thing."""
