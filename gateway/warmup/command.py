"""`gateway cache import FILE`: load the config as `gateway serve` does, check the
tenant, run the import, print the summary (and write it as JSON with `--output`)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TextIO

import orjson

from gateway.components import ComponentsFactory, load_components
from gateway.errors import GatewayInternalError
from gateway.policy.errors import PolicyError
from gateway.providers.protocol import Provider
from gateway.settings import OPEN_TENANT, GatewayConfig
from gateway.warmup.importer import (
    ImportOptions,
    ImportSummary,
    ProviderFactory,
    StorageUnavailable,
    import_file,
)
from gateway.warmup.progress import Progress

EXIT_OK = 0
EXIT_STORE_FAILED = 1  # some records could not be written (or the store is down)
EXIT_USAGE = 2


class UsageError(GatewayInternalError):
    pass


def resolve_tenant(config: GatewayConfig, tenant: str | None) -> str:
    """The tenant the entries belong to: one of the config's tenants (required when
    there are any), else the open gateway's own tenant."""
    names = [t.name for t in config.auth.tenants]
    if not names:
        if tenant is not None and tenant != OPEN_TENANT:
            raise UsageError(
                f"no tenants are configured (every request is tenant '{OPEN_TENANT}'); "
                "leave out --tenant"
            )
        return OPEN_TENANT
    if tenant is None:
        raise UsageError(f"--tenant is required: the config has tenants ({', '.join(names)})")
    if tenant not in names:
        raise UsageError(f"unknown tenant '{tenant}': the config has {', '.join(names)}")
    return tenant


def format_summary(summary: ImportSummary) -> str:
    refused = sum(summary.refused.values())
    lines = [
        f"read {summary.records} records from {summary.file} in {summary.seconds:.1f} s "
        f"(tenant {summary.tenant}, {summary.backend} storage; "
        f"{summary.load_seconds:.1f} s to load the models and open the store)",
        f"stored   {summary.stored}",
        f"refused  {refused}",
    ]
    width = max((len(reason) for reason in summary.refused), default=0)
    for reason, count in summary.refused.most_common():
        examples = summary.example_lines.get(reason, [])
        more = ", ..." if count > len(examples) else ""
        numbers = ", ".join(str(n) for n in examples)
        lines.append(f"  {reason:<{width}}  {count}  (lines {numbers}{more})")
    if summary.seeded is not None:
        lines.append(summary.seeded.line())
    return "\n".join(lines)


def import_options(
    config: GatewayConfig,
    path: Path,
    *,
    tenant: str | None,
    namespace: str | None = None,
    include_user_records: bool = False,
    seed_adaptive: bool = False,
) -> ImportOptions:
    """The checked arguments; `UsageError` before anything is loaded."""
    options = ImportOptions(
        tenant=resolve_tenant(config, tenant),
        namespace=namespace,
        include_user_records=include_user_records,
        seed_adaptive=seed_adaptive,
    )
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    return options


def run_import(
    config: GatewayConfig,
    path: Path,
    options: ImportOptions,
    *,
    output: Path | None = None,
    show_progress: bool | None = None,
    stdout: TextIO = sys.stdout,
    stderr: TextIO = sys.stderr,
    provider_factory: ProviderFactory | None = None,
    components_factory: ComponentsFactory = load_components,
) -> int:
    """The import itself; returns the command's exit status. `show_progress` None:
    only when stderr is a terminal."""
    if show_progress is None:
        show_progress = stderr.isatty()
    try:
        summary = asyncio.run(
            import_file(
                config,
                path,
                options,
                progress=Progress(stderr if show_progress else None),
                provider_factory=provider_factory or _litellm_provider,
                components_factory=components_factory,
            )
        )
    except PolicyError as exc:
        stderr.write(f"gateway: {exc}\n")
        return EXIT_USAGE
    except StorageUnavailable as exc:
        stderr.write(f"gateway: {exc}; nothing imported\n")
        return EXIT_STORE_FAILED
    stdout.write(format_summary(summary) + "\n")
    if output is not None:
        output.write_bytes(orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2))
    return EXIT_STORE_FAILED if summary.refused.get("store_failed") else EXIT_OK


def _litellm_provider(config: GatewayConfig) -> Provider:
    from gateway.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider.create(config)
