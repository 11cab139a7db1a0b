"""The package layout: each top-level folder of the repository becomes one subpackage of the
single import name `planlineage`, so that nothing collides with another distribution's
`planner` or `registry` in a user's site-packages, while the repository's folders keep telling
the data flow. Each folder is named once; its subpackages are discovered.

Everything else about the distribution is in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = {
    "planlineage": "planlineage",  # the public API, the document model, the pipeline, errors, settings
    "planlineage.cli": "cli",
    "planlineage.planner": "planner",
    "planlineage.registry": "registry",
    "planlineage.emitter": "emitter",
    "planlineage.lifecycle": "lifecycle",
    "planlineage.streampark": "streampark",  # `planlineage watch`: StreamPark's database -> the lifecycle
    "planlineage.dinky": "dinky",  # `planlineage watch --dinky-db`: Dinky's database -> the lifecycle
    "planlineage.watch": "watch",  # what every platform watcher shares: the loop, the ledger, states to events
    "planlineage.gateway": "gateway",  # `planlineage gateway`: the SQL Gateway proxy and its JobManager poller
    "planlineage.history": "history",  # `watch --history`: past runs a platform recorded, replayed once
    "planlineage.spark": "spark",  # Spark SQL: per-version PySpark venvs, Spark's parser, the walk, naming
    "planlineage.store": "store",  # the state store backends (SQLite file, shared PostgreSQL), migrations, leases
    "planlineage.flink_versions": "flink-versions",  # one TOML per Flink version, with its pins
    "planlineage.spark_versions": "spark-versions",  # one TOML per Spark version, with its pins
    "planlineage.doctor": "doctor",  # split datasets across producers: reading events and state, grouping
    "planlineage.graph": "graph",  # the lineage graph: model, layout, HTML and DOT rendering
    "planlineage.listener_conf": "listener_conf",  # `spark-conf` / `flink-conf`: the OpenLineage listeners' keys
}

setup(
    package_dir=FOLDERS,
    packages=[
        f"{package}.{sub}" if sub else package
        for package, folder in FOLDERS.items()
        for sub in ["", *find_packages(folder)]
    ],
)
