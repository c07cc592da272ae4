"""Rate limits: per tenant and per API key (policy `rate_limits`), per deployment
(`model_list[].litellm_params.rpm` / `tpm`)."""
