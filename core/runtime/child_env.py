"""The environment a child process of `studyai up` gets: an allowlist, never the whole parent's.

Hosting platforms and shells set variables that mean something else to a child: llama.cpp's server
reads its options from `LLAMA_ARG_*` (another port, host or model than the ones it was given) and
`LLAMA_API_KEY` would make it demand a key; unrelated secrets have no business in a child."""

import os
from collections.abc import Mapping

from core.settings import Settings

# What any Python child needs to run, find its libraries and temp files, speak the locale, reach a
# proxy or a private CA (hosted model endpoints), size its thread pools, and find OCR's language data.
_BASE_NAMES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP",
        "PYTHONPATH", "PYTHONHOME", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
        "VIRTUAL_ENV", "LD_LIBRARY_PATH", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_OFFLINE",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
        "CUDA_VISIBLE_DEVICES", "TESSDATA_PREFIX",
    }
)  # fmt: skip
_BASE_PREFIXES = ("LC_", "OMP_", "OPENBLAS_", "MKL_", "GOTO_")


def settings_env_names() -> frozenset[str]:
    """The variables core/settings reads (upper-cased; pydantic-settings matches them ignoring case)."""
    return frozenset(name.upper() for name in Settings.env_fields())


def child_environment(
    overrides: Mapping[str, str] | None = None,
    *,
    with_settings: bool = True,
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allowlisted part of `source` (default os.environ), plus `overrides`. `with_settings` adds the
    studyAI settings variables (a worker reads them; the model server does not need them)."""
    source = os.environ if source is None else source
    settings_names = settings_env_names() if with_settings else frozenset()
    environment = {
        key: value
        for key, value in source.items()
        if key in _BASE_NAMES or key.startswith(_BASE_PREFIXES) or key.upper() in settings_names
    }
    environment.update(overrides or {})
    return environment
