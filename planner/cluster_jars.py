"""The jars of a Flink installation (`--flink-home DIR`) that the analyser should compile with.

A platform's cluster can run what its Flink home holds: the connectors, formats, catalogs and
UDF jars its operators put into `lib/`, and the optional connectors of `opt/`. Compiling with
them means real factories and real functions instead of stand-ins. Flink's own distribution jars
are left out: the analyser already runs the planner of the job's version, and a second copy of
Flink (possibly another version) on the class path would break it.

Precedence (docs/how-it-works.md, "Connectors, functions and catalogs the analyser does not have"): jars given
with `--jar`, then the Flink home's `lib/` and `opt/` jars, are loaded with ADD JAR, in that
order; a class or factory any of them provides is used for real; only what none provides goes
through a stand-in.
"""

from __future__ import annotations

import re
from pathlib import Path

from planlineage.errors import FlinkHomeError

#: Flink's own distribution (lib/ and opt/ of the binary release) and its logging jars.
_DISTRIBUTION = re.compile(
    r"^(?:flink-(?:dist|table-api|table-runtime|table-planner|table-common|cep|csv|json|scala|python|"
    r"sql-client|sql-gateway|gelly|state-processor|queryable-state|connector-files|s3-fs|azure-fs|oss-fs|gs-fs|"
    r"hadoop-fs|runtime|streaming|clients|core|annotations|metrics|rpc|shaded|sql-jdbc-driver|"
    r"external-resource|fs-hadoop|changelog|statebackend|dstl)|log4j-|slf4j-)",
    re.IGNORECASE,
)
#: What of `opt/` is worth compiling with: connectors, formats and catalogs, never Flink itself.
_OPT_WANTED = re.compile(
    r"connector|catalog|format|cdc|paimon|iceberg|hudi|hive|sql-(?:avro|parquet|orc|protobuf)", re.I
)


def cluster_jars(flink_home: str | None) -> list[str]:
    """The non-distribution jars of DIR/lib and the connector jars of DIR/opt, sorted by name."""
    if not flink_home:
        return []
    home = Path(flink_home)
    if not (home / "lib").is_dir():
        raise FlinkHomeError(
            f"--flink-home {flink_home} has no lib/ folder: pass the folder the cluster's Flink is installed in."
        )
    found = [p for p in sorted((home / "lib").glob("*.jar")) if not _DISTRIBUTION.match(p.name)]
    found += [
        p
        for p in sorted((home / "opt").glob("*.jar"))
        if not _DISTRIBUTION.match(p.name) and _OPT_WANTED.search(p.name)
    ]
    return [str(p) for p in found]
