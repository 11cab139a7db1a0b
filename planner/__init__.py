"""The Flink engine: Flink SQL compiled by the real Flink planner of the job's version.

`planner/` is Flink's as `spark/` is Spark's: the same parts under the same names (provision,
child, request, walk, naming, columns), its facts and stages behind the one engine interface in
`engine.py` (:class:`planlineage.engine.Engine`), composed by :func:`planlineage.pipeline.extract`
through `stages.py`; its versions are the data files of `flink-versions/`. The folder keeps the
design card's name.
"""
