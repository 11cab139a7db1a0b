"""`planlineage planner start|serve`'s limits default to the ones the compile service's pool uses
(planner.warm's), written twice because building the parser must not import the planner."""

from __future__ import annotations

import pytest

from planlineage.cli.main import build_parser
from planlineage.planner import warm


@pytest.mark.parametrize("command", ["start", "serve"])
def test_the_planner_commands_default_to_the_warm_planners_limits(command):
    args = build_parser().parse_args(["planner", command])
    assert args.max_jobs == warm.DEFAULT_MAX_JOBS == warm.Limits().max_jobs
    assert args.max_rss_mb == warm.DEFAULT_MAX_RSS_MB
    assert args.job_timeout == warm.DEFAULT_JOB_TIMEOUT
    assert args.idle_timeout == warm.DEFAULT_IDLE_SECONDS
