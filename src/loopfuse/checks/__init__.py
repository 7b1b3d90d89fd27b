"""Checks on configuration values, by topic: value validators (``_validators``), the store's
URL schemes and failure policies (``_store_urls``), and URL redaction (``_redaction``).

Each validator returns the value or raises a ``ConfigError`` naming the section, the key, the
value and what is allowed.
"""

from __future__ import annotations

from ._redaction import redacted
from ._store_urls import (
    STORE_ERROR_POLICIES,
    STORE_SCHEMES,
    check_redis_database,
    check_store_policy,
    check_store_url,
)
from ._validators import (
    MAX_REPEATS_ENV,
    MAX_WINDOW,
    TEMPLATE_ALLOWED,
    check_bool,
    check_choice,
    check_instance,
    check_int,
    check_list,
    check_log_path,
    check_masks,
    check_names,
    check_number,
    check_optional_int,
    check_optional_str,
    check_template,
    check_window,
    fail,
    log_path_problem,
    log_write_problem,
    resolve_max_repeats,
    template_problem,
)

__all__ = [
    "MAX_REPEATS_ENV",
    "MAX_WINDOW",
    "STORE_ERROR_POLICIES",
    "STORE_SCHEMES",
    "TEMPLATE_ALLOWED",
    "check_bool",
    "check_choice",
    "check_instance",
    "check_int",
    "check_list",
    "check_log_path",
    "check_masks",
    "check_names",
    "check_number",
    "check_optional_int",
    "check_optional_str",
    "check_redis_database",
    "check_store_policy",
    "check_store_url",
    "check_template",
    "check_window",
    "fail",
    "log_path_problem",
    "log_write_problem",
    "redacted",
    "resolve_max_repeats",
    "template_problem",
]
