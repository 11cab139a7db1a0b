"""`planlineage watch --check` lists the Flink versions the reported apps compile with and whether
each is provisioned here: a version that is not costs its first compile a download of hundreds of
MB (issue 30), which `planlineage flink install` does beforehand."""

from __future__ import annotations

from planlineage.planner import provision


def test_check_lists_the_flink_versions_of_the_reported_apps(streampark, watch):
    sp = streampark("dev", lineage_enable=True)
    c = sp.console
    default = c.env("1.20.0", default=True)
    newer = c.env("2.0.0", default=False)
    old = c.env("1.16.3", default=False)
    older = c.env("1.14.6", default=False)
    c.create_app("on_default", "INSERT INTO o SELECT 1", env=default, lineage_enable=True)
    c.create_app("no_env", "INSERT INTO o SELECT 1", lineage_enable=True)  # NULL: the default env
    c.create_app("on_2_0", "INSERT INTO o SELECT 1", env=newer, lineage_enable=True)
    c.create_app("on_1_16", "INSERT INTO o SELECT 1", env=old, lineage_enable=True)
    c.create_app("on_1_14", "INSERT INTO o SELECT 1", env=older, lineage_enable=True)
    c.create_app("not_flagged", "INSERT INTO o SELECT 1", env=newer, lineage_enable=False)
    c.create_app("on_9_9", "INSERT INTO o SELECT 1", env=c.env("9.9.0", default=False), lineage_enable=True)
    watch.recorded()  # a cache where 1.16, 1.19 and 1.20 are ready
    result = watch("--check", "--streampark-db", sp.url)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    start = lines.index(f"Flink versions the reported apps compile with (cache {watch.planner.cache}):")
    v20, v2 = provision.resolve_version("1.20").version, provision.resolve_version("2.0").version
    v16 = provision.resolve_version("1.16").version
    assert lines[start + 1 : start + 6] == [
        "  1.14: 1 app: read from the SQL text, not compiled: Flink 1.14 has no CompiledPlan (it arrived in Flink 1.15)",
        f"  1.16 ({v16}): 1 app: ready",
        f"  1.20 ({v20}): 2 apps: ready",
        f"  2.0 ({v2}): 1 app: not installed: the first compile downloads and builds it "
        f"({provision.DOWNLOAD}, {provision.FIRST_USE}); `planlineage flink install 2.0` does it now",
        "  9.9: 1 app: not compiled: Flink 9.9 is not supported; supported versions: "
        + ", ".join(f"{v.minor} ({v.version})" for v in provision.supported().values())
        + ".",
    ]
    assert not (watch.planner.cache / v2).exists()  # --check provisions nothing
