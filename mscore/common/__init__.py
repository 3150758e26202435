"""dtypes, Tensor, Parameter, initializers."""
from mscore.common import dtype
from mscore.common.dtype import *
from mscore.common.tensor import Tensor
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common import initializer as _initializer  # binds Tensor(init=...)
