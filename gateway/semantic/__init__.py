"""Safe semantic reuse: compatibility fingerprints and the entity comparison."""
