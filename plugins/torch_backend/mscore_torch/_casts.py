"""torch's conversions to each floating dtype as methods without arguments.

``Tensor.half()`` and ``Tensor.to(torch.float16)`` make the same copy (or return the tensor
itself when it has the dtype already), but ``to`` first chooses among its overloads, which
at the small sizes of a launch-bound step costs more host time than the copy."""
from __future__ import annotations

import torch

FLOAT_METHODS = {torch.float16: torch.Tensor.half, torch.bfloat16: torch.Tensor.bfloat16,
                 torch.float32: torch.Tensor.float, torch.float64: torch.Tensor.double}
