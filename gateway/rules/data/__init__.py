"""Rule files (YAML) shipped with the package; loaded by `gateway.rules.compile`."""
