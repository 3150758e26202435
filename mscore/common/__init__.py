"""dtypes, Tensor, Parameter, initializers."""
from mscore.common import dtype
from mscore.common.dtype import *
from mscore.common.tensor import Tensor
from mscore.common.parameter import Parameter, ParameterTuple
