"""Cache and memory policies, loaded from YAML files under `policies_dir`."""
