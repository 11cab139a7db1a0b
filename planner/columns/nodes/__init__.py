"""The node handlers, one module per family; importing this package registers all of them."""

from planlineage.planner.columns.nodes import aggregates, joins, relational, tables
from planlineage.planner.columns.nodes.base import HANDLERS, Handler, Node, handles

__all__ = ["HANDLERS", "Handler", "Node", "handles", "aggregates", "joins", "relational", "tables"]
