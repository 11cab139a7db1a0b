"""What the lifecycle commands say on stderr: one redacted line, and the home's standing notices."""

from __future__ import annotations

import sys


def warn(message: str) -> None:
    """One line on stderr, redacted (a message may quote a path or a server's answer)."""
    try:
        from planlineage.registry.secrets import redact_text

        print(f"planlineage: {redact_text(' '.join(str(message).split()))}", file=sys.stderr)
    except Exception:
        pass


def say_notices() -> None:
    """What an earlier command had to move aside, once per command, until the user dealt with it."""
    try:
        from planlineage import home

        home.say_notices()
    except Exception:
        pass
