"""Which files in the policies folder are policies, what each applies to, and a cheap
signature of the folder for change polling. The naming scheme is described in
`gateway/policy/loader.py`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from gateway.errors import GatewayInternalError

DEFAULT_POLICY_FILE = "default.yaml"
POLICY_SUFFIX = ".yaml"
_TENANT_PREFIX = "tenant."
_MODEL_PREFIX = "model."
_PAIR_SEPARATOR = ".model."
# Tenant names as `auth.tenants[].name` allows them (gateway/settings.py).
_TENANT_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# Model names that can be written in a file name: no `/`, no spaces.
_MODEL_NAME = re.compile(r"[A-Za-z0-9_.:@+-]+")

EXPECTED_NAMES = (
    "default.yaml, tenant.<tenant>.yaml, model.<model>.yaml or tenant.<tenant>.model.<model>.yaml"
)


@dataclass(frozen=True, order=True)
class PolicyScope:
    """What one policy file applies to: every request (both None), one model, one
    tenant, or one tenant's requests to one model."""

    tenant: str | None = None
    model: str | None = None

    @property
    def rank(self) -> int:
        """Precedence: 0 default < 1 model < 2 tenant < 3 tenant + model."""
        return (2 if self.tenant is not None else 0) + (1 if self.model is not None else 0)


DEFAULT_SCOPE = PolicyScope()


class PolicyNameError(GatewayInternalError, ValueError):
    """A file in the policies folder whose name says nothing this gateway understands."""


def _tenant(part: str) -> str:
    if not _TENANT_NAME.fullmatch(part):
        raise PolicyNameError(
            "cannot parse the tenant name in the file name (letters, digits, '_', '.', '-'); "
            f"expected {EXPECTED_NAMES}"
        )
    if part.endswith(".model"):
        raise PolicyNameError(
            "ambiguous file name: for a tenant + model override write "
            "tenant.<tenant>.model.<model>.yaml"
        )
    return part


def _model(part: str) -> str:
    if not _MODEL_NAME.fullmatch(part):
        raise PolicyNameError(
            "cannot parse the model name in the file name (letters, digits, '_', '.', ':', "
            f"'@', '+', '-'); expected {EXPECTED_NAMES}"
        )
    return part


def parse_policy_filename(name: str) -> PolicyScope:
    """The scope a policy file name declares; `PolicyNameError` when there is none.

    `tenant.<tenant>.model.<model>.yaml` splits at the first `.model.`, so model names
    may contain dots (`gpt-4.1`) and tenant names may not contain `.model.`.
    """
    if not name.endswith(POLICY_SUFFIX):
        raise PolicyNameError(
            f"policy files must end in {POLICY_SUFFIX}; expected {EXPECTED_NAMES}"
        )
    stem = name[: -len(POLICY_SUFFIX)]
    if name == DEFAULT_POLICY_FILE:
        return DEFAULT_SCOPE
    if stem.startswith(_TENANT_PREFIX):
        rest = stem[len(_TENANT_PREFIX) :]
        tenant, separator, model = rest.partition(_PAIR_SEPARATOR)
        if separator:
            return PolicyScope(tenant=_tenant(tenant), model=_model(model))
        return PolicyScope(tenant=_tenant(rest))
    if stem.startswith(_MODEL_PREFIX):
        return PolicyScope(model=_model(stem[len(_MODEL_PREFIX) :]))
    raise PolicyNameError(f"cannot tell what this file applies to; expected {EXPECTED_NAMES}")


def is_policy_candidate(name: str) -> bool:
    """Files the loader considers: not hidden (editor swap files, Kubernetes' `..data`),
    ending in .yaml or .yml in any case (a misnamed one is an error, not ignored)."""
    return not name.startswith(".") and name.lower().endswith((".yaml", ".yml"))


Signature = tuple[tuple[str, int, int], ...] | None
"""(name, mtime_ns, size) of every candidate file, sorted; None: no such folder."""


def list_policy_files(directory: Path) -> list[str]:
    """Names of the candidate policy files in `directory` (regular files, links
    followed), sorted."""
    with os.scandir(directory) as entries:
        return sorted(
            entry.name for entry in entries if is_policy_candidate(entry.name) and _is_file(entry)
        )


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        # A dangling link is listed (reading it reports the problem): an override must
        # not vanish silently.
        return entry.is_file() or (entry.is_symlink() and not entry.is_dir())
    except OSError:
        return True  # unreadable: reported when it is read


def directory_signature(directory: Path) -> Signature:
    """Cheap change detection: names, mtime_ns and sizes (one stat per file)."""
    try:
        with os.scandir(directory) as entries:
            stats = []
            for entry in entries:
                if not is_policy_candidate(entry.name):
                    continue
                try:
                    stat = entry.stat()
                except OSError:
                    stats.append((entry.name, -1, -1))
                    continue
                stats.append((entry.name, stat.st_mtime_ns, stat.st_size))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return (("", -1, -1),)  # unreadable folder: differs from every readable state
    return tuple(sorted(stats))
