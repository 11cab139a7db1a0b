"""The warm-up job: a small streaming aggregate that loads the planner's classes.

Compiled once when a warm planner starts (so its first real job does not pay for class loading)
and once at provisioning, with class-data sharing recording, to make the archive of the classes
a compile needs.
"""

WARM_UP = {
    "statements": [
        {"sql": "CREATE TABLE s (a INT, b STRING) WITH ('connector' = 'datagen')", "line": 1},
        {"sql": "CREATE TABLE o (a INT, n BIGINT) WITH ('connector' = 'blackhole')", "line": 1},
        {"sql": "INSERT INTO o SELECT a, COUNT(b) FROM s GROUP BY a", "line": 1},
    ],
    "config": {"execution.runtime-mode": "streaming"},
    "batch": False,
    "forced_stand_ins": [],
}
