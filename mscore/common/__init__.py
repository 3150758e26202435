"""dtypes, Tensor, Parameter, initializers."""
from mscore.common import dtype  # noqa: F401
from mscore.common.dtype import *  # noqa: F401,F403  (ms.float16, ...)
from mscore.common.tensor import Tensor  # noqa: F401
from mscore.common.parameter import Parameter, ParameterTuple  # noqa: F401
