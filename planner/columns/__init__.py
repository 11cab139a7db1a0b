"""Column-level lineage from a CompiledPlan: for every sink column, the source columns behind it.

The plan is walked from the sources to the sinks (`walk`); each node kind is read by a handler
registered next to its code (`nodes.*`: tables, relational, joins, aggregates), which reads the
node's expressions (`expression`, RexNode JSON) and composes lineage (`algebra`).

Row-level influences (join keys, filters, grouping, sort, window time) are kept apart from the
per-column ones because the spec distinguishes them (the `columnLineage` facet's `fields` and its
dataset-wide `dataset` list); `SinkColumns.merged()` gives the per-column ("legacy") form that
repeats the row-level entries on every column, which is what consumers that only read `fields`
(Marquez) need.

Plans are read as they are: what the planner adds (AVG as SUM/COUNT with a null guard, a batch
DISTINCT as a second GROUP BY) shows. Node kinds are read from the JSON of Flink 1.18-2.3
(`stream-exec-*`, `batch-exec-*`, version suffix ignored).
"""

from planlineage.planner.columns.algebra import ColumnSource, SinkColumns, Transformation
from planlineage.planner.columns.expression import INFERRED, call_name, expression, stand_in_functions
from planlineage.planner.columns.nodes import HANDLERS
from planlineage.planner.columns.rowtypes import row_names
from planlineage.planner.columns.walk import column_lineage

__all__ = [
    "HANDLERS",
    "INFERRED",
    "stand_in_functions",
    "ColumnSource",
    "SinkColumns",
    "Transformation",
    "call_name",
    "column_lineage",
    "expression",
    "row_names",
]
