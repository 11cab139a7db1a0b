"""Which modules a `planlineage` command imports, read from the process that ran it.

Start-up is most of what a short command costs, so a command must not import the libraries it
does not use. Run as a script: `python tests/command_imports.py ARGS...` runs the CLI's `main`
with ARGS in this process (its output kept apart) and prints one JSON object, {"code": exit code,
"top": top-level module names, "planlineage": planlineage modules}, on the last line.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

HEAVY = ("pydantic", "pydantic_core", "openlineage", "networkx", "httpx", "httpcore")


def imported_by(args: list[str], env: dict[str, str] | None = None, cwd=None, timeout: float = 120) -> dict:
    """Runs the command in a fresh interpreter; what it imported and its exit code."""
    import subprocess  # here: the child running the command must not have it loaded by us

    result = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _main() -> None:
    from planlineage.cli.main import main

    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        try:
            code = main(sys.argv[1:])
        except SystemExit as exit_:
            code = exit_.code
    modules = list(sys.modules)
    print(
        json.dumps(
            {
                "code": code,
                "top": sorted({name.split(".")[0] for name in modules}),
                "planlineage": sorted(name for name in modules if name.startswith("planlineage")),
            }
        )
    )


if __name__ == "__main__":
    _main()
