"""The Primitive base and the Primitive classes under one import path, kept for code that
imports ``mscore.ops.primitives`` (the Primitives live beside their functions in the concept
modules; :mod:`mscore.ops.operations` is MindSpore's path to them)."""
from mscore.ops.operations import *
from mscore.ops.primitive_base import (
    Primitive, call_signature, cast_floating, check_axes, check_bool, check_float, check_int,
    check_reduction, prim_attr_register)
