"""``SummaryCollector``: the callback that records loss, learning rate, parameter histograms,
input images and lineage of a ``Model.train`` run (MindSpore 2.x semantics)."""
from __future__ import annotations

import logging
import numbers
import re
import warnings

import numpy as np

from mscore import dispatch
from mscore.common.parameter import MutationScope, Parameter
from mscore.common.tensor import Tensor
from mscore.train.callback._callback import Callback
from mscore.train.summary._checks import check_landscape, check_positive, check_value_type
from mscore.train.summary.graph import network_graph
from mscore.train.summary.record import (
    SummaryRecord,
    _describe_network,
    check_export_options,
    check_max_file_size,
    check_summary_value,
    make_directory,
)
from mscore.train.summary.writer import SummaryWriteError

logger = logging.getLogger("mscore.summary")

LOSS_TAG = "loss/auto"
LR_TAG = "learning_rate/auto"
INPUT_TAG = "input_data/auto"
_TENSOR_LIMIT = 20           # default number of steps TensorSummary data is kept at
MAX_INPUT_IMAGES = 64        # images of a batch drawn as input_data/auto
_OPTIMIZER_FAILED = "Failed"  # _temp_optimizer once no optimizer was found (MindSpore's value)


def _arg(cb_params, name, default=None):
    if isinstance(cb_params, dict):
        return cb_params.get(name, default)
    return getattr(cb_params, name, default)


def _is_optimizer(obj):
    return (obj is not None and callable(getattr(obj, "get_lr", None))
            and isinstance(getattr(obj, "parameters", None), (list, tuple)))


class SummaryCollector(Callback):
    """Collects common summary data during training into ``summary_dir``.

    ``SummaryCollector(summary_dir, collect_freq=10, num_process=32,
    collect_specified_data=None, keep_default_action=True, custom_lineage_data=None,
    collect_tensor_freq=None, max_file_size=None, export_options=None)``
    (``num_process`` is accepted; one writer thread does the work; ``export_options`` as
    :class:`SummaryRecord`'s; ``collect_landscape`` is checked as MindSpore checks it, but no
    loss landscape is computed). Every ``collect_freq`` steps (and at the first step) it records
    the loss (``loss/auto``, the mean of the first network output), the learning rate
    (``learning_rate/auto``, from ``optimizer.get_lr()``), histograms of parameters
    (``<name>/auto``: the first five, or those matching ``histogram_regular``), the first
    input as images (``input_data/auto``, at most 64 of a batch) when it is NCHW (or NHWC)
    image data (floats in [0, 1] or uint8), the metrics of the evaluations of ``Model.fit``
    (``eval/<metric>/auto``, at the step their epoch ended), and whatever the
    summary operators recorded. Lineage (train/eval settings, metrics, custom data) goes to a
    JSON-lines file beside the event files. Only one SummaryCollector may be in a callback
    list. Inside ``with collector:`` its files stay open across ``Model.train`` calls (the
    runs go into the same event file) until the block ends, and ``collector.summary_record``
    takes more values after training. Raises TypeError/ValueError for arguments of the
    wrong type/value.
    """

    _DEFAULT_LANDSCAPE = {"landscape_size": 40, "unit": "step", "num_samples": 2048,
                          "create_landscape": {"train": True, "result": True},
                          "intervals": [[1, 2, 3, 4, 5, 6, 7, 8, 9],
                                        [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]]}
    _DEFAULT_SPECIFIED_DATA = {
        "collect_metric": True,
        "collect_graph": True,
        "collect_train_lineage": True,
        "collect_eval_lineage": True,
        "collect_input_data": True,
        "collect_dataset_graph": True,
        "histogram_regular": None,
        "collect_landscape": _DEFAULT_LANDSCAPE,
    }

    def __init__(self, summary_dir, collect_freq=10, num_process=32,
                 collect_specified_data=None, keep_default_action=True,
                 custom_lineage_data=None, collect_tensor_freq=None, max_file_size=None,
                 export_options=None):
        super().__init__()
        self._summary_dir = self._process_summary_dir(summary_dir)
        self._check_positive("collect_freq", collect_freq)
        self._collect_freq = collect_freq
        self._check_positive("collect_tensor_freq", collect_tensor_freq, allow_none=True)
        self._collect_tensor_freq = collect_tensor_freq
        check_max_file_size(max_file_size, "SummaryCollector")
        self._max_file_size = max_file_size
        self._export_options = check_export_options(export_options)
        check_value_type("keep_default_action", keep_default_action, [bool])
        self._collect_specified_data = self._process_specified_data(collect_specified_data,
                                                                    keep_default_action)
        check_landscape(type(self).__name__, self._collect_specified_data.get("collect_landscape"),
                        self._DEFAULT_LANDSCAPE)
        self._custom_lineage_data = self._check_custom_lineage_data(custom_lineage_data)
        self._record = None
        self._entered = 0          # open ``with`` blocks: Model.train's nests in a user's
        self._reset_run_state()

    def _reset_run_state(self):
        # MindSpore's names for this state (its tests read them): the optimizer found, None
        # when not looked for yet, or _OPTIMIZER_FAILED; whether the loss can be parsed
        self._temp_optimizer = None
        self._has_saved_graph = False
        self._has_saved_custom_data = False
        self._is_parse_loss_success = True
        self._first_step = True
        self._dataset_sink_mode = False
        self._tensor_collect_range = range(0)

    # -- argument checks (MindSpore's) ---------------------------------------------------
    @staticmethod
    def _process_summary_dir(summary_dir):
        if not isinstance(summary_dir, str):
            raise TypeError("The summary_dir is invalid, the type should be string.")
        if not summary_dir.strip():
            raise ValueError("The summary_dir is invalid, it should be non-blank.")
        return make_directory(summary_dir.strip(), "summary_dir", "SummaryCollector")

    @staticmethod
    def _check_positive(name, value, allow_none=False):
        if allow_none and value is None:
            return
        check_value_type(name, value, [int])
        check_positive(name, value, "SummaryCollector")

    def _process_specified_data(self, specified, keep_default_action):
        defaults = self._DEFAULT_SPECIFIED_DATA
        if specified is None:
            return dict(defaults) if keep_default_action else {}
        check_value_type("collect_specified_data", specified, [dict, type(None)])
        for key in specified:
            check_value_type(str(key), key, [str])
        unexpected = set(specified) - set(defaults)
        if unexpected:
            raise ValueError(f"For \"SummaryCollector\", the keys {unexpected} of "
                             f"`collect_specified_data` are unsupported, expect the follow "
                             f"keys: {list(defaults)}")
        if "histogram_regular" in specified:
            regular = check_value_type("histogram_regular", specified["histogram_regular"],
                                       [str, type(None)])
            if isinstance(regular, str):
                try:
                    re.compile(regular)
                except re.error as exc:
                    raise ValueError(f"For `collect_specified_data`, the value of "
                                     f"`histogram_regular` is not a valid regular expression. "
                                     f"Detail: {exc}.") from exc
        for key, value in specified.items():
            if key not in ("histogram_regular", "collect_landscape"):
                check_value_type(key, value, [bool])
        if keep_default_action:
            result = dict(defaults)
            result.update(specified)
            return result
        return dict(specified)

    @staticmethod
    def _check_custom_lineage_data(data):
        if data is None:
            return None
        check_value_type("custom_lineage_data", data, [dict, type(None)])
        for key, value in data.items():
            check_value_type(f"custom_lineage_data -> {key}", key, [str])
            check_value_type(f"the value of custom_lineage_data -> {key}", value,
                             [int, str, float])
        return dict(data)

    # -- life cycle ------------------------------------------------------------------------
    @property
    def summary_record(self):
        """The :class:`SummaryRecord` of the current run (None outside a run)."""
        return self._record

    def __enter__(self):
        self._open()
        self._entered += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        self._entered -= 1
        if self._entered:
            return              # an inner block (Model.train's): the outer one closes
        if exc_type is None:
            self._close()
            return
        try:  # do not hide the exception already on its way out of the run
            self._close()
        except SummaryWriteError as err:
            warnings.warn(str(err), RuntimeWarning)

    def _open(self):
        if self._record is None:
            self._record = SummaryRecord(self._summary_dir, max_file_size=self._max_file_size,
                                         export_options=self._export_options)
        self._reset_run_state()

    def _close(self):
        if self._record is not None:
            record, self._record = self._record, None
            record.close()

    # -- callback methods ----------------------------------------------------------------
    def begin(self, run_context):
        """Check the callback list and open the summary files (train or eval mode); the
        base class's ``on_train_begin`` / ``on_eval_begin`` call it."""
        cb_params = run_context.original_args()
        self._check_callbacks(cb_params)
        mode = _arg(cb_params, "mode", "train")
        if mode not in ("train", "eval"):
            raise ValueError(f"For 'SummaryCollector', only 'train' (model.train) and 'eval' "
                             f"(model.eval) modes are supported, got {mode!r}")
        if self._record is None:
            self._open()
        self._record.set_mode(mode)
        self._dataset_sink_mode = bool(_arg(cb_params, "dataset_sink_mode", False))

    def step_end(self, run_context):
        """Collect when the training step is due (called by ``on_train_step_end``)."""
        cb_params = run_context.original_args()
        if _arg(cb_params, "mode", "train") != "train":
            return
        if self._record is None:
            self._open()
        self._record.set_mode("train")      # an evaluation inside Model.fit switched it
        step = int(_arg(cb_params, "cur_step_num", 0))
        if not self._has_saved_graph:
            self._collect_graph(cb_params)
            self._collect_dataset_graph(cb_params)
            self._has_saved_graph = True
        if self._custom_lineage_data and not self._has_saved_custom_data:
            self._record.add_value("custom_lineage_data", "custom_lineage_data",
                                   dict(self._custom_lineage_data))
            self._has_saved_custom_data = True
        if self._first_step:
            batch_num = _arg(cb_params, "batch_num") or 0
            self._dataset_sink_mode = bool(batch_num) and step == batch_num and \
                bool(_arg(cb_params, "dataset_sink_mode", False))
            self._tensor_collect_range = self._get_tensor_collect_range(cb_params)
            self._collect_at_step_end(cb_params, step, None)
            self._first_step = False
            self._record.flush()
            return
        current = int(_arg(cb_params, "cur_epoch_num", 0)) if self._dataset_sink_mode else step
        due = current % self._collect_freq == 0
        tensors_due = current in self._tensor_collect_range
        if due and tensors_due:
            self._collect_at_step_end(cb_params, step, None)
        elif tensors_due:
            self._record.record(step, plugin_filter=lambda plugin: plugin == "tensor")
        elif due:
            self._collect_at_step_end(cb_params, step, lambda plugin: plugin != "tensor")

    def epoch_end(self, run_context):
        """In ``Model.fit``, record the metrics of
        this epoch's evaluation as ``eval/<metric>/auto`` scalars; flush the files."""
        if self._record is None:
            return
        cb_params = run_context.original_args()
        metrics = _arg(cb_params, "metrics")
        if (_arg(cb_params, "mode", "train") == "train" and isinstance(metrics, dict)
                and metrics and self._collect_specified_data.get("collect_metric")):
            for name, value in metrics.items():
                try:
                    number = np.asarray(value.asnumpy() if isinstance(value, Tensor) else value,
                                        dtype=np.float64)
                except (TypeError, ValueError):
                    continue
                if number.size == 1:
                    self._add_value("scalar", f"eval/{name}/auto", number.reshape(()))
            self._record.set_mode("eval")   # leave the summary operators' values pending
            self._record.record(int(_arg(cb_params, "cur_step_num", 0) or 0),
                                plugin_filter=lambda plugin: plugin == "scalar")
            self._record.set_mode("train")
        self._record.flush()

    def end(self, run_context):
        """Write the train lineage, or after evaluation the eval lineage (the metrics)."""
        cb_params = run_context.original_args()
        if self._record is None:
            return
        if _arg(cb_params, "mode", "train") == "train":
            if self._collect_specified_data.get("collect_train_lineage"):
                self._record.add_value("train_lineage", "train_lineage",
                                       self._train_lineage(cb_params))
        elif self._collect_specified_data.get("collect_eval_lineage"):
            self._record.add_value("eval_lineage", "eval_lineage",
                                   self._eval_lineage(cb_params))
        # eval mode: this record must not take the summary operators' pending values
        self._record.set_mode("eval")
        self._record.record(int(_arg(cb_params, "cur_step_num", 0) or 0))
        self._record.flush()
        if not self._entered:
            self._close()

    # -- collection ------------------------------------------------------------------------
    def _check_callbacks(self, cb_params):
        callbacks = _arg(cb_params, "list_callback")
        if callbacks is None:
            return
        if not isinstance(callbacks, (list, tuple)):
            callbacks = getattr(callbacks, "callbacks", None) or getattr(
                callbacks, "_callbacks", None) or []
        found = sum(1 for cb in callbacks if isinstance(cb, SummaryCollector))
        if found > 1:
            raise ValueError(f"There are more than one {type(self).__name__} instance in "
                             f"callback list, but expected only one {type(self).__name__} "
                             f"instance.")

    def _get_tensor_collect_range(self, cb_params):
        total = int(_arg(cb_params, "epoch_num", 1) or 1)
        if not self._dataset_sink_mode:
            total *= int(_arg(cb_params, "batch_num", 1) or 1)
        if self._collect_tensor_freq is not None:
            return range(0, total + 1, self._collect_tensor_freq)
        to_collect = len(range(0, total + 1, self._collect_freq))
        if to_collect > _TENSOR_LIMIT:
            freq = total // (_TENSOR_LIMIT - 1)
            if freq > 1:
                return range(0, total + 1, freq)[:_TENSOR_LIMIT]
            return range(0, total + 1)[:_TENSOR_LIMIT + 1]
        return range(0, total + 1, self._collect_freq)

    def _collect_at_step_end(self, cb_params, step, plugin_filter):
        self._collect_input_data(cb_params)
        self._collect_metric(cb_params)
        self._collect_lr(cb_params)
        self._collect_histogram(cb_params)
        self._record.record(step, plugin_filter=plugin_filter)

    def _add_value(self, plugin, tag, value):
        """Queue the collector's own ``value`` (a Tensor, numpy array or number), checked as
        ``SummaryRecord.add_value`` checks a Tensor."""
        if isinstance(value, Tensor):
            arr = np.array(value.asnumpy(), copy=True)
        else:
            arr = np.array(value, copy=True)
        self._record._add_array(plugin, tag, check_summary_value(plugin, arr, "SummaryCollector",
                                                                 tag))

    def _collect_input_data(self, cb_params):
        if not self._collect_specified_data.get("collect_input_data"):
            return
        data = _arg(cb_params, "train_dataset_element")
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        if not isinstance(data, (Tensor, np.ndarray)):
            logger.warning("SummaryCollector: the input data is not a Tensor, so it is not "
                           "collected")
            self._collect_specified_data["collect_input_data"] = False
            return
        shape = tuple(data.shape)
        channels = (1, 3, 4)
        if len(shape) == 4 and shape[1] not in channels and shape[3] in channels:
            data = data.transpose((0, 3, 1, 2))          # NHWC batches are drawn too
        elif len(shape) != 4 or shape[1] not in channels:
            logger.warning("SummaryCollector: the input data is not NCHW/NHWC image data "
                           "(shape %s), so it is not collected", shape)
            self._collect_specified_data["collect_input_data"] = False
            return
        if shape[0] > MAX_INPUT_IMAGES:
            data = data[:MAX_INPUT_IMAGES]
        self._add_value("image", INPUT_TAG, data)

    def _get_loss(self, cb_params):
        if not self._is_parse_loss_success:
            return None
        output = _arg(cb_params, "net_outputs")
        if isinstance(output, (list, tuple)):
            output = output[0] if output else None
        if isinstance(output, Tensor):
            arr = output.asnumpy()
        elif isinstance(output, (np.ndarray, np.generic)) or (
                isinstance(output, numbers.Real) and not isinstance(output, bool)):
            arr = np.asarray(output)
        else:
            logger.warning("SummaryCollector: cannot find the loss in the network outputs "
                           "(%s), so the loss is not collected", type(output).__name__)
            self._is_parse_loss_success = False
            return None
        if arr.dtype.kind not in "biuf" and arr.dtype.name != "bfloat16":
            self._is_parse_loss_success = False
            return None
        return np.asarray(np.mean(arr.astype(np.float64)))

    def _collect_metric(self, cb_params):
        if not self._collect_specified_data.get("collect_metric"):
            return
        loss = self._get_loss(cb_params)
        if loss is not None:
            self._add_value("scalar", LOSS_TAG, loss)

    def _get_optimizer(self, cb_params):
        """The optimizer of ``cb_params`` or the first one found in the train (eval) network;
        None when there is none (looked for once: ``_temp_optimizer`` remembers it)."""
        if self._temp_optimizer == _OPTIMIZER_FAILED:
            return None
        if self._temp_optimizer is not None:
            return self._temp_optimizer
        opt = _arg(cb_params, "optimizer")
        if not _is_optimizer(opt):
            opt = None
            network_key = "eval_network" if _arg(cb_params, "mode", "train") == "eval" \
                else "train_network"
            network = _arg(cb_params, network_key) or _arg(cb_params, "network")
            if network is not None and hasattr(network, "cells_and_names"):
                for _, cell in network.cells_and_names():
                    if _is_optimizer(cell):
                        opt = cell
                        break
        if opt is None:
            logger.warning("SummaryCollector: no optimizer found, so the learning rate "
                           "and parameter histograms are not collected")
        self._temp_optimizer = opt if opt is not None else _OPTIMIZER_FAILED
        return opt

    def _collect_lr(self, cb_params):
        if not self._collect_specified_data.get("collect_metric"):
            return
        opt = self._get_optimizer(cb_params)
        if opt is None:
            return
        lrs = current_learning_rate(opt)
        if lrs is None:
            return
        if len(lrs) == 1:
            self._add_value("scalar", LR_TAG, lrs[0])
        else:
            for i, lr in enumerate(lrs):
                self._add_value("scalar", f"learning_rate/group_{i}/auto", lr)

    def _collect_histogram(self, cb_params):
        if "histogram_regular" not in self._collect_specified_data:
            return
        opt = self._get_optimizer(cb_params)
        if opt is None:
            return
        params = list(opt.parameters)
        regular = self._collect_specified_data.get("histogram_regular")
        if regular is not None:
            chosen = [p for p in params if re.match(regular, p.name)]
        else:
            chosen = params[:5]
        for p in chosen:
            try:
                self._record.add_value("histogram", f"{p.name}/auto", p)
            except ValueError as exc:   # a 0-d Parameter has no histogram
                logger.warning("SummaryCollector: %s is not collected (%s)", p.name, exc)

    def _collect_graph(self, cb_params):
        if not self._collect_specified_data.get("collect_graph"):
            return
        network = _arg(cb_params, "train_network") or _arg(cb_params, "network")
        if network is None or not hasattr(network, "get_parameters"):
            return
        self._record.add_value("graph", "train_network", _describe_network(network))
        self._write_network_graph(cb_params)

    def _collect_dataset_graph(self, cb_params):
        """The training dataset's pipeline (``dataset_graph`` / ``train_dataset``: each node's
        class and its children, source first at the leaves), in train mode."""
        if not self._collect_specified_data.get("collect_dataset_graph"):
            return
        if _arg(cb_params, "mode", "train") != "train":
            return
        dataset = _arg(cb_params, "train_dataset")
        if dataset is None:
            return
        self._record.add_value("dataset_graph", "train_dataset", _pipeline(dataset))

    def _write_network_graph(self, cb_params):
        """The user network's GraphDef for TensorBoard's Graphs tab, traced once on this
        step's batch (without its label when the Model has a loss function). A network the
        tracer cannot follow keeps only the lineage description, with a warning."""
        network = _arg(cb_params, "network")
        element = _arg(cb_params, "train_dataset_element")
        if network is None or not element:
            return
        inputs = tuple(element[:-1]) if _arg(cb_params, "loss_fn") is not None else \
            tuple(element)
        try:
            graph_def = network_graph(network, *inputs)
        except (TypeError, ValueError, NotImplementedError) as exc:
            logger.warning("SummaryCollector: the network's graph was not written for "
                           "TensorBoard (%s)", exc)
            return
        self._record._write_graph(graph_def)

    # -- lineage -------------------------------------------------------------------------
    def _train_lineage(self, cb_params):
        opt = self._get_optimizer(cb_params)
        lrs = current_learning_rate(opt) if opt is not None else None
        network = _arg(cb_params, "network") or _arg(cb_params, "train_network")
        loss_fn = _arg(cb_params, "loss_fn")
        dataset = _arg(cb_params, "train_dataset")
        lineage = {
            "summary_dir": self._summary_dir,
            "epoch": _arg(cb_params, "epoch_num"),
            "batch_num": _arg(cb_params, "batch_num"),
            "steps": _arg(cb_params, "cur_step_num"),
            "dataset_sink_mode": bool(_arg(cb_params, "dataset_sink_mode", False)),
            "optimizer": type(opt).__name__ if opt is not None else None,
            "learning_rate": lrs[0] if lrs else None,
            "loss_function": type(loss_fn).__name__ if loss_fn is not None else None,
            "network": type(network).__name__ if network is not None else None,
            "loss": None,
        }
        loss = self._get_loss(cb_params)
        if loss is not None:
            lineage["loss"] = float(loss)
        if network is not None and hasattr(network, "get_parameters"):
            lineage["parameter_count"] = int(sum(int(np.prod(p.shape)) for p in
                                            network.get_parameters()))
        if dataset is not None:
            size = getattr(dataset, "get_dataset_size", None)
            try:
                lineage["train_dataset_size"] = int(size()) if callable(size) else None
            except Exception:  # a dataset that cannot tell its size
                lineage["train_dataset_size"] = None
        return lineage

    def _eval_lineage(self, cb_params):
        metrics = _arg(cb_params, "metrics") or {}
        clean = {}
        for k, v in dict(metrics).items():
            try:
                clean[str(k)] = float(np.asarray(v.asnumpy() if isinstance(v, Tensor) else v))
            except (TypeError, ValueError):
                clean[str(k)] = str(v)
        dataset = _arg(cb_params, "valid_dataset") or _arg(cb_params, "eval_dataset")
        lineage = {"summary_dir": self._summary_dir, "metrics": clean}
        size = getattr(dataset, "get_dataset_size", None)
        if callable(size):
            try:
                lineage["valid_dataset_size"] = int(size())
            except Exception:  # a dataset that cannot tell its size
                pass
        return lineage


def _pipeline(node, depth=0):
    """``{"op": class name, "children": [...]}`` of a dataset pipeline node (a JSON dict;
    at most 64 levels)."""
    children = getattr(node, "children", None) or []
    out = {"op": type(node).__name__}
    if children and depth < 64:
        out["children"] = [_pipeline(c, depth + 1) for c in children]
    return out


def current_learning_rate(optimizer):
    """The learning rate(s) ``optimizer`` used in its last step, as a list of floats (one per
    parameter group), or None when it cannot tell.

    ``get_lr()`` of a dynamic rate reads ``global_step``, which the step already advanced,
    and advances it again; here it runs one step back inside a :class:`MutationScope` that
    undoes every change, so the training run is left exactly as it was."""
    get_lr = getattr(optimizer, "get_lr", None)
    if not callable(get_lr):
        return None
    step = getattr(optimizer, "global_step", None)
    dynamic = bool(getattr(optimizer, "dynamic_lr", False)
                   or getattr(optimizer, "dynamic_weight_decay", False))
    saved = dict(optimizer.__dict__) if hasattr(optimizer, "__dict__") else None
    with MutationScope() as scope:
        try:
            if dynamic and isinstance(step, Parameter):
                now = int(np.asarray(step.asnumpy()).reshape(-1)[0])
                if now > 0:
                    one = dispatch.call("full", tuple(step.shape), 1, step.dtype)
                    step._assign(dispatch.call("sub", step._data, one))
            lr = get_lr()
        except Exception as exc:  # an optimizer whose get_lr needs more than we know
            logger.warning("SummaryCollector: optimizer.get_lr() failed (%s); the learning "
                           "rate is not collected", exc)
            lr = None
        finally:
            scope.restore()
            if saved is not None:   # plain attributes get_lr may cache
                optimizer.__dict__.clear()
                optimizer.__dict__.update(saved)
    if lr is None:
        return None
    lrs = list(lr) if isinstance(lr, (tuple, list)) else [lr]
    values = []
    for x in lrs:
        arr = x.asnumpy() if isinstance(x, Tensor) else np.asarray(x)
        values.append(float(np.asarray(arr, dtype=np.float64).reshape(-1)[0]))
    if len(values) == 1:
        return values
    # One rate per parameter: keep one per group (parameters sharing a rate object).
    params = list(getattr(optimizer, "parameters", ()))
    lookup = getattr(optimizer, "get_lr_parameter", None)
    if len(params) != len(values) or not callable(lookup):
        return values[:1]
    seen, out = set(), []
    for p, v in zip(params, values):
        key = id(lookup(p))
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out
