"""Cells: layers, losses, optimizers and wrapper cells."""
from mscore.nn.cell import Cell, CellList, SequentialCell  # noqa: F401
