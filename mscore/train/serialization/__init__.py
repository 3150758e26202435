"""Model and parameter serialization with MindSpore's interface.

* :func:`save_checkpoint`, :func:`load_checkpoint`, :func:`load_param_into_net` -- ``.ckpt``
  (MindSpore's protobuf format, byte-compatible, optionally encrypted as MindSpore does) and
  ``.safetensors`` files; :func:`wait_async_save` waits for background saves,
  :func:`load_checkpoint_async` loads in the background; :func:`ckpt_to_safetensors` and
  :func:`safetensors_to_ckpt` convert files;
* :func:`merge_sliced_parameter`, :func:`build_searched_strategy` -- model-parallel slices
  and MindSpore's strategy files; :func:`load_distributed_checkpoint` -- the checkpoints of
  the N ranks of a job into one network; :func:`transform_checkpoints` -- re-cut for
  another number of ranks;
* :func:`parse_print` -- MindSpore's print files;
* :func:`export` -- ONNX and MINDIR (traced through the op layer, on any backend);
  :func:`load` -- MindIR files (run them with ``nn.GraphCell``).

Nothing here unpickles: every file is read as protobuf or safetensors and nothing else.
"""
from mscore.train.serialization._checkpoint import (
    async_ckpt_thread_status, load_checkpoint, load_checkpoint_async, load_param_into_net,
    save_checkpoint, wait_async_save)
from mscore.train.serialization._convert import (
    ckpt_to_safetensors, safetensors_to_ckpt)
from mscore.train.serialization._parallel import (
    build_searched_strategy, merge_sliced_parameter)
from mscore.train.serialization._distributed import (
    load_distributed_checkpoint, transform_checkpoints)
from mscore.train.serialization._print import parse_print
from mscore.train.serialization._export import export
from mscore.train.serialization._mindir_load import load

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net",
           "merge_sliced_parameter", "build_searched_strategy", "parse_print", "export",
           "wait_async_save", "load", "load_distributed_checkpoint", "transform_checkpoints",
           "load_checkpoint_async",
           "async_ckpt_thread_status", "ckpt_to_safetensors", "safetensors_to_ckpt"]
