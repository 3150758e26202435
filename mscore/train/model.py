"""``Model``: MindSpore's high-level train / eval / predict API."""
from __future__ import annotations

import numbers

import numpy as np

import mscore.nn as nn
from mscore.amp.build import build_checked
from mscore.amp.convert import check_amp_level
from mscore.boost.boost import boost_model, check_boost_level
from mscore.common._errors import NUMPY_ARRAY_HINT, TypeAttributeError, ValueZeroDivisionError
from mscore.common.tensor import Tensor
from mscore.dataset.engine import as_dataset
from mscore.dataset.engine.map_workers import release_workers
from mscore.dataset.user import UserDataset
from mscore.nn.cell import Cell
from mscore.nn.graph import GraphCell
from mscore.parallel import _context as _parallel
from mscore.train.callback._callback import (
    CallbackList,
    CallbackParam,
    RunContext,
    _flatten_callbacks,
)
from mscore.train.callback._progress import default_progress_bars
from mscore.train.dataset_helper import DatasetHelper
from mscore.train.metrics import Loss, get_metrics

__all__ = ["Model"]

_KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict", "acc_level")
_BOOST_KWARGS = ("boost_config_dict", "acc_level")
# what Model.predict takes as an input (MindSpore's check; a numpy array is refused)
_PREDICT_INPUT_TYPES = (Tensor, int, float, str, tuple, list, dict)


def _check_int(value, name, minimum):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {value}")
    return int(value)


def _check_bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")
    return value


def _check_sink_size(sink_size):
    if not isinstance(sink_size, numbers.Integral) or isinstance(sink_size, bool):
        raise TypeError(f"sink_size: expected an int, got {type(sink_size).__name__}")
    if sink_size != -1 and sink_size <= 0:
        raise ValueError(f"sink_size: expected -1 or a positive int, got {sink_size}")
    return int(sink_size)


def _dataset(obj, arg_name):
    """``obj`` as a Dataset (see ``as_dataset``). Arrays given as Keras' ``fit(x, y)`` takes
    them, ``(x, y)`` or a bare array, are refused with how to make a Dataset of them
    (MindSpore raises an AttributeError there, so this is both a TypeError and an
    AttributeError)."""
    if isinstance(obj, (np.ndarray, Tensor)):
        raise TypeAttributeError(
            f"{arg_name}: expected a Dataset, got a {_array_kind(obj)} of shape "
            f"{tuple(obj.shape)}; Model batches a Dataset, it does not take arrays "
            f"themselves: wrap the data and the labels with mscore.dataset."
            f"NumpySlicesDataset((x, y), column_names=['data', 'label']).batch(32)")
    if isinstance(obj, (tuple, list)) and 0 < len(obj) <= 3 and all(
            isinstance(item, (np.ndarray, Tensor)) for item in obj):
        raise TypeAttributeError(
            f"{arg_name}: expected a Dataset, got a {type(obj).__name__} of "
            f"{len(obj)} array(s); Model batches a Dataset, it does not take the arrays "
            f"themselves: wrap them with mscore.dataset.NumpySlicesDataset((x, y), "
            f"column_names=['data', 'label']).batch(32)")
    return as_dataset(obj, arg_name)


def _array_kind(obj):
    return "Tensor" if isinstance(obj, Tensor) else "numpy array"


def _as_tuple(outputs):
    if isinstance(outputs, Tensor):
        return (outputs,)
    if isinstance(outputs, list):
        return tuple(outputs)
    return outputs


def _boost(network, optimizer, eval_network, boost_level, boost_kwargs):
    """``(network, optimizer, eval_network, boost_level)`` after mscore.boost's rewrite for
    ``boost_level`` (and the ``boost_config_dict`` / ``acc_level`` keywords)."""
    if "acc_level" in boost_kwargs:
        import warnings
        warnings.warn("Model: 'acc_level' is MindSpore's old name of 'boost_level'; use "
                      "boost_level", DeprecationWarning, stacklevel=3)
        boost_level = check_boost_level(boost_kwargs["acc_level"])
    if boost_level == "O0" and "boost_config_dict" not in boost_kwargs:
        return network, optimizer, eval_network, boost_level
    network, optimizer, eval_network = boost_model(
        network, optimizer, eval_network, boost_level, boost_kwargs.get("boost_config_dict", ""))
    return network, optimizer, eval_network, boost_level


def _make_eval_cell(network, loss_fn, add_cast_fp32):
    """``(loss, outputs, label)`` for ``(data, label)``: MindSpore's ``WithEvalCell``."""
    return nn.WithEvalCell(network, loss_fn, add_cast_fp32)


# MindSpore's own callbacks (``mindspore.train.callback.__all__``) other than TimeMonitor
# see no evaluation hooks inside Model.fit; a user's callback class sees them all.
_TRAIN_ONLY_IN_FIT = frozenset((
    "Callback", "LossMonitor", "ModelCheckpoint", "FlopsUtilizationCollector",
    "SummaryCollector", "CheckpointConfig", "RunContext", "LearningRateScheduler",
    "SummaryLandscape", "History", "LambdaCallback", "ReduceLROnPlateau", "EarlyStopping",
    "OnRequestExit", "BackupAndRestore", "TrainFaultTolerance"))


def _eval_callbacks_in_fit(list_callback):
    return [cb for cb in list_callback.callbacks
            if type(cb).__name__ not in _TRAIN_ONLY_IN_FIT]


class Model:
    """Groups a network, its loss and optimizer into train / eval / predict.

    Args:
        network (Cell): the network.
        loss_fn (Cell): the loss; without it ``network`` must return the loss itself.
        optimizer (Cell): the optimizer; without it ``train`` only runs forward passes.
        metrics (set|dict): metric names (``{'accuracy', 'loss'}``) or ``{name: Metric}``.
        eval_network (Cell): the network ``eval`` runs; default ``network`` + ``loss_fn``
            returning ``(loss, outputs, label)``.
        eval_indexes (list): with ``eval_network``, the positions of loss, prediction and
            label in its outputs (None: every output goes to every metric).
        amp_level (str): 'O0', 'O1', 'O2', 'O3' or 'auto', passed to
            :func:`mscore.amp.build_train_network`; anything but 'O0' needs an optimizer.
        boost_level (str): 'O0', 'O1' or 'O2': ``mscore.boost.AutoBoost`` rewrites the
            network and optimizer (less BN, gradient freezing, AdaSum) when an optimizer is
            given, and ``eval_network`` for evaluation.
        boost_config_dict (dict): keyword only; AutoBoost's configuration (``acc_level``,
            MindSpore's old name of ``boost_level``, is accepted with a warning).
        loss_scale_manager (LossScaleManager): keyword only; overrides the level's default.
        keep_batchnorm_fp32 (bool): keyword only; overrides the level's default.
    """

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None,
                 eval_indexes=None, amp_level="O0", boost_level="O0", **kwargs):
        if not isinstance(network, Cell):
            raise TypeError(f"network: expected a Cell, got {type(network).__name__}")
        if loss_fn is not None and not isinstance(loss_fn, Cell):
            raise TypeAttributeError(f"loss_fn: expected a Cell or None, got "
                                     f"{type(loss_fn).__name__}")
        if optimizer is not None and not isinstance(optimizer, Cell):
            raise TypeError(f"optimizer: expected an Optimizer (Cell) or None, got "
                            f"{type(optimizer).__name__}")
        if eval_network is not None and not isinstance(eval_network, Cell):
            raise TypeError(f"eval_network: expected a Cell or None, got "
                            f"{type(eval_network).__name__}")
        if not isinstance(amp_level, str):
            raise TypeError(f"amp_level: expected a str, got {type(amp_level).__name__}")
        check_amp_level(amp_level)
        check_boost_level(boost_level)
        unknown = sorted(set(kwargs) - set(_KWARGS))
        if unknown:
            raise ValueError(f"Model: unsupported keyword argument(s) {unknown}; supported: "
                             f"{list(_KWARGS)}")
        if optimizer is None and amp_level != "O0":
            raise ValueError(f"amp_level: mixed precision ({amp_level!r}) needs an optimizer; "
                             f"'optimizer' is None, so use amp_level='O0'")
        if optimizer is None and kwargs.get("loss_scale_manager") is not None:
            raise ValueError("loss_scale_manager: a loss scale manager needs an optimizer; "
                             "'optimizer' is None")
        if "keep_batchnorm_fp32" in kwargs and not isinstance(kwargs["keep_batchnorm_fp32"],
                                                              bool):
            raise TypeError(f"keep_batchnorm_fp32: expected a bool, got "
                            f"{type(kwargs['keep_batchnorm_fp32']).__name__}")
        boost_kwargs = {k: kwargs.pop(k) for k in _BOOST_KWARGS if k in kwargs}
        network, optimizer, eval_network, boost_level = _boost(
            network, optimizer, eval_network, boost_level, boost_kwargs)
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._amp_level = amp_level
        self._boost_level = boost_level
        self._amp_kwargs = dict(kwargs)
        self._loss_scale_manager = kwargs.get("loss_scale_manager")
        self._metric_fns = get_metrics(metrics)
        # As in MindSpore, eval_indexes are read only with an eval_network and metrics.
        self._eval_indexes = None
        if eval_network is not None and self._metric_fns and eval_indexes is not None:
            self._eval_indexes = self._check_eval_indexes(eval_indexes)
        self._check_graph_cell(network, loss_fn, optimizer, kwargs)
        self._train_network = self._build_train_network()
        self._eval_network = self._build_eval_network(eval_network)
        self._predict_network = network

    # -- construction -----------------------------------------------------------------------
    @staticmethod
    def _check_graph_cell(network, loss_fn, optimizer, kwargs):
        if not isinstance(network, GraphCell):
            return
        if loss_fn is not None or optimizer is not None:
            raise ValueError("Model: loss_fn and optimizer must be None when network is a "
                             "GraphCell (a loaded MINDIR graph is for inference)")
        if kwargs:
            raise ValueError(f"Model: no keyword arguments are taken when network is a "
                             f"GraphCell, got {sorted(kwargs)}")

    @staticmethod
    def _check_eval_indexes(eval_indexes):
        if not isinstance(eval_indexes, list) or len(eval_indexes) != 3 or not all(
                isinstance(i, int) and not isinstance(i, bool) and i >= 0
                for i in eval_indexes):
            raise ValueError(f"eval_indexes: expected a list of 3 non-negative ints (positions "
                             f"of loss, prediction and label), got {eval_indexes!r}")
        return list(eval_indexes)

    def _build_train_network(self):
        if self._optimizer is not None:
            return build_checked(self._network, self._optimizer, self._loss_fn,
                                 self._amp_level, self._boost_level, **self._amp_kwargs)
        if self._loss_fn is not None:
            return nn.WithLossCell(self._network, self._loss_fn)
        return self._network

    def _build_eval_network(self, eval_network):
        if eval_network is not None:
            return eval_network
        if not self._metric_fns:
            return None
        if self._loss_fn is None:
            raise ValueError("metrics: evaluation needs 'loss_fn' or 'eval_network'; if "
                             "'metrics' is set, give one of them (or do not set 'metrics')")
        self._eval_indexes = [0, 1, 2]
        return _make_eval_cell(self._network, self._loss_fn,
                               self._amp_level in ("O2", "O3", "auto"))

    # -- properties -------------------------------------------------------------------------
    @property
    def train_network(self):
        """The cell ``train`` runs each step (``TrainOneStepCell`` and friends)."""
        return self._train_network

    @property
    def eval_network(self):
        """The cell ``eval`` runs (None without metrics)."""
        return self._eval_network

    @property
    def predict_network(self):
        """The cell ``predict`` runs."""
        return self._predict_network

    # -- helpers ----------------------------------------------------------------------------
    @staticmethod
    def _set_mode(network, training):
        if network is not None and network.training != training:
            network.set_train(training)

    def _clear_metrics(self):
        for metric in self._metric_fns.values():
            metric.clear()

    def _update_metrics(self, outputs):
        outputs = _as_tuple(outputs)
        if not isinstance(outputs, tuple):
            raise ValueError(f"the eval network must return a Tensor or a tuple of Tensors, got "
                             f"{type(outputs).__name__}")
        if self._eval_indexes is not None and len(outputs) < 3:
            raise ValueError(f"the eval network returned {len(outputs)} output(s); with "
                             f"eval_indexes it must return at least 3")
        for metric in self._metric_fns.values():
            if self._eval_indexes is None:
                metric.update(*outputs)
            elif isinstance(metric, Loss):
                metric.update(outputs[self._eval_indexes[0]])
            else:
                metric.update(outputs[self._eval_indexes[1]], outputs[self._eval_indexes[2]])

    def _get_metrics(self):
        return {name: metric.eval() for name, metric in self._metric_fns.items()}

    def _update_loss_scale(self, outputs):
        manager = self._loss_scale_manager
        if manager is None or not manager.get_drop_overflow_update():
            return
        if isinstance(outputs, (tuple, list)) and len(outputs) >= 2:
            flag = outputs[1]
            value = flag.asnumpy() if hasattr(flag, "asnumpy") else np.asarray(flag)
            manager.update_loss_scale(bool(np.all(value)))

    # -- train ------------------------------------------------------------------------------
    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1,
              initial_epoch=0):
        """Train for epochs ``initial_epoch + 1 .. epoch`` on ``train_dataset``.

        ``train_dataset`` yields ``(data, label)`` (or the network's inputs when there is no
        ``loss_fn``): an ``mscore.dataset`` pipeline or any iterable of numpy batches.
        ``dataset_sink_mode=True`` prefetches batches onto the device in a background
        thread; ``sink_size > 0`` then makes every epoch ``sink_size`` steps, continuing
        through the dataset across epochs.
        """
        self._check_train_args(epoch, dataset_sink_mode, sink_size, initial_epoch)
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size,
                    initial_epoch, None)

    def _check_train_args(self, epoch, dataset_sink_mode, sink_size, initial_epoch):
        _check_int(epoch, "epoch", 1)
        _check_bool(dataset_sink_mode, "dataset_sink_mode")
        _check_sink_size(sink_size)
        _check_int(initial_epoch, "initial_epoch", 0)
        if initial_epoch >= epoch:
            raise ValueError(f"initial_epoch: expected a value below epoch ({epoch}), got "
                             f"{initial_epoch}")

    def _train(self, epoch, train_dataset, callbacks, sink, sink_size, initial_epoch,
               valid_infos):
        dataset = _dataset(train_dataset, "train_dataset")
        if isinstance(dataset, UserDataset):
            dataset.plan_epochs(epoch - initial_epoch)
        if not (sink and sink_size > 0):
            # a resumed run reads the same epoch (same shuffle) as an uninterrupted one
            dataset._advance_epoch_to(initial_epoch)
        cb_list = _flatten_callbacks(callbacks)
        helper = DatasetHelper(dataset, sink, sink_size if sink else -1,
                               epoch_num=epoch - initial_epoch)
        batch_num = helper.sink_size()
        cb_params = CallbackParam(
            train_network=self._train_network, network=self._network,
            eval_network=self._eval_network, epoch_num=epoch - initial_epoch,
            initial_epoch=initial_epoch, batch_num=batch_num, mode="train",
            loss_fn=self._loss_fn, optimizer=self._optimizer,
            parallel_mode=_parallel.parallel_mode(),
            device_number=_parallel.effective_device_num(), train_dataset=train_dataset,
            list_callback=cb_list,
            train_dataset_element=None, net_outputs=None, last_save_ckpt_step=None,
            latest_ckpt_file=None, loss_scale_manager=self._loss_scale_manager,
            dataset_sink_mode=sink, cur_epoch_num=initial_epoch,
            cur_step_num=initial_epoch * max(batch_num, 0), initial_step=None)
        cb_params.loss_scale_mananger = self._loss_scale_manager  # MindSpore's spelling
        run_context = RunContext(cb_params)
        try:
            # A progress bar on a terminal unless one was given (not in list_callback).
            with CallbackList(cb_list + default_progress_bars(cb_list)) as list_callback:
                list_callback.on_train_begin(run_context)
                for i in range(initial_epoch, epoch):
                    cb_params.cur_epoch_num = i + 1
                    list_callback.on_train_epoch_begin(run_context)
                    for inputs in helper:
                        if self._loss_fn is not None and len(inputs) != 2:
                            raise ValueError(f"train_dataset: with a loss_fn each batch must be "
                                             f"(data, label), got {len(inputs)} element(s)")
                        cb_params.cur_step_num += 1
                        cb_params.train_dataset_element = inputs
                        list_callback.on_train_step_begin(run_context)
                        self._set_mode(self._train_network, True)
                        outputs = self._train_network(*inputs)
                        cb_params.net_outputs = outputs
                        self._update_loss_scale(outputs)
                        list_callback.on_train_step_end(run_context)
                        if run_context.get_stop_requested():
                            break
                    if valid_infos is not None:
                        self._eval_during_train(valid_infos, cb_params, list_callback)
                    dataset.reset()   # a user's dataset object rewinds here, as in MindSpore
                    list_callback.on_train_epoch_end(run_context)
                    cb_params.pop("metrics", None)
                    cb_params.pop("eval_results", None)
                    if run_context.get_stop_requested():
                        break
                helper.stop_send()
                list_callback.on_train_end(run_context)
        finally:
            helper.release()
            # the pipelines' idle worker processes end with the run, not at garbage collection
            release_workers(dataset)
            if valid_infos is not None:
                release_workers(valid_infos[0])

    # -- eval -------------------------------------------------------------------------------
    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False):
        """Evaluate the metrics on ``valid_dataset``; returns ``{metric name: value}``."""
        _check_bool(dataset_sink_mode, "dataset_sink_mode")
        if not self._metric_fns:
            raise ValueError("metrics: Model.eval needs 'metrics'; set them when building the "
                             "Model, e.g. metrics={'accuracy'}")
        dataset = _dataset(valid_dataset, "valid_dataset")
        cb_list = _flatten_callbacks(callbacks)
        cb_params = CallbackParam(
            eval_network=self._eval_network, network=self._network, valid_dataset=valid_dataset,
            batch_num=None, mode="eval", cur_epoch_num=1, epoch_num=1, cur_step_num=0,
            list_callback=cb_list, net_outputs=None, dataset_sink_mode=dataset_sink_mode)
        try:
            with CallbackList(cb_list) as list_callback:
                return self._eval_process(dataset, list_callback, cb_params, dataset_sink_mode)
        finally:
            release_workers(dataset)

    def _eval_process(self, dataset, list_callback, cb_params, sink, add_eval_loss=False):
        if isinstance(dataset, UserDataset):
            dataset.plan_epochs(1)
        helper = DatasetHelper(dataset, sink, -1, 1)
        cb_params.batch_num = helper.sink_size()
        run_context = RunContext(cb_params)
        try:
            list_callback.on_eval_begin(run_context)
            self._clear_metrics()
            loss_metric = Loss() if add_eval_loss and self._eval_indexes is not None else None
            self._set_mode(self._eval_network, False)
            list_callback.on_eval_epoch_begin(run_context)
            for inputs in helper:
                cb_params.cur_step_num += 1
                cb_params.eval_dataset_element = inputs
                list_callback.on_eval_step_begin(run_context)
                outputs = self._eval_network(*inputs)
                cb_params.net_outputs = outputs
                list_callback.on_eval_step_end(run_context)
                self._update_metrics(outputs)
                if loss_metric is not None:
                    loss_metric.update(_as_tuple(outputs)[self._eval_indexes[0]])
                if run_context.get_stop_requested():
                    break
            dataset.reset()
            list_callback.on_eval_epoch_end(run_context)
            metrics = self._get_metrics()
            cb_params.metrics = metrics
            if add_eval_loss:
                results = dict(metrics)
                if loss_metric is not None:
                    results["eval_loss"] = loss_metric.eval()
                cb_params.eval_results = results
            list_callback.on_eval_end(run_context)
        finally:
            helper.release()
        return metrics

    # -- fit --------------------------------------------------------------------------------
    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None,
            dataset_sink_mode=False, valid_dataset_sink_mode=False, sink_size=-1,
            initial_epoch=0):
        """Train like :meth:`train` and evaluate on ``valid_dataset`` every
        ``valid_frequency`` epochs (an int, or a list of epoch numbers). The results reach
        the callbacks' ``on_train_epoch_end`` as ``cb_params.metrics`` and
        ``cb_params.eval_results`` (the metrics plus ``eval_loss``)."""
        self._check_train_args(epoch, dataset_sink_mode, sink_size, initial_epoch)
        _check_bool(valid_dataset_sink_mode, "valid_dataset_sink_mode")
        if isinstance(valid_frequency, bool) or not isinstance(valid_frequency, (int, list)):
            raise TypeError(f"valid_frequency: expected an int or a list of ints, got "
                            f"{type(valid_frequency).__name__}")
        if isinstance(valid_frequency, int) and valid_frequency == 0:
            raise ValueZeroDivisionError("valid_frequency: expected a positive int, got 0")
        if isinstance(valid_frequency, int) and valid_frequency < 0:
            raise ValueError(f"valid_frequency: expected a positive int, got {valid_frequency}")
        if isinstance(valid_frequency, list) and not all(
                isinstance(v, int) and not isinstance(v, bool) for v in valid_frequency):
            raise TypeError(f"valid_frequency: expected a list of epoch numbers (ints), got "
                            f"{valid_frequency}")
        if valid_dataset is not None and not self._metric_fns:
            raise ValueError("metrics: Model.fit with valid_dataset needs 'metrics'; set them "
                             "when building the Model")
        train_dataset = _dataset(train_dataset, "train_dataset")   # first, as MindSpore
        valid_infos = None if valid_dataset is None else (
            _dataset(valid_dataset, "valid_dataset"), valid_frequency,
            valid_dataset_sink_mode)
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size,
                    initial_epoch, valid_infos)

    @staticmethod
    def _should_eval(epoch, frequency):
        if isinstance(frequency, int):
            return epoch % frequency == 0
        return epoch in frequency

    def _eval_during_train(self, valid_infos, cb_params, list_callback):
        dataset, frequency, sink = valid_infos
        if not self._should_eval(cb_params.cur_epoch_num, frequency):
            return
        saved = {k: cb_params.get(k) for k in ("mode", "cur_step_num", "batch_num",
                                               "net_outputs", "dataset_sink_mode")}
        cb_params.update(mode="eval", cur_step_num=0, valid_dataset=dataset,
                         dataset_sink_mode=sink)
        try:
            self._eval_process(dataset, CallbackList(_eval_callbacks_in_fit(list_callback)),
                               cb_params, sink, add_eval_loss=True)
        finally:
            cb_params.update(saved)
        self._set_mode(self._train_network, True)

    # -- predict ----------------------------------------------------------------------------
    def predict(self, *predict_data, backend=None, config=None):
        """The network's output for ``predict_data`` (Tensors), in inference mode. A numpy
        array is a TypeError, as in MindSpore (wrap it in ``mscore.Tensor``)."""
        if backend not in ("lite", None):
            raise ValueError(f"backend: expected 'lite' or None, got {backend!r} (mscore "
                             f"predicts on the active backend; 'lite' runs the same way, as "
                             f"MindSpore does when MindSpore Lite is not installed)")
        if not predict_data:
            raise TypeError("predict_data: expected at least one input")
        inputs = []
        for x in predict_data:
            if x is not None and not isinstance(x, _PREDICT_INPUT_TYPES):
                raise TypeError(f"The types of input data must be in the Union(Tensor, None, "
                                f"int, float, str, tuple[Tensor, None, int, float, str], "
                                f"list[Tensor, None, int, float, str], dict[Tensor, None, int, "
                                f"float, str]), but got type {type(x).__name__}."
                                + (NUMPY_ARRAY_HINT if isinstance(x, np.ndarray) else ""))
            inputs.append(x)
        self._set_mode(self._predict_network, False)
        return self._predict_network(*inputs)

    def build(self, train_dataset=None, valid_dataset=None, sink_size=-1, epoch=1,
              sink_mode=True):
        """MindSpore compiles the graphs ahead here (on Ascend); mscore builds (and in
        GRAPH_MODE compiles) on the first step, so this only checks the arguments."""
        _check_sink_size(sink_size)
        _check_int(epoch, "epoch", 1)
        _check_bool(sink_mode, "sink_mode")
        if train_dataset is not None:
            _dataset(train_dataset, "train_dataset")
        if valid_dataset is not None:
            _dataset(valid_dataset, "valid_dataset")

    def infer_train_layout(self, train_dataset, dataset_sink_mode=True, sink_size=-1):
        """The parameter layouts of a semi-auto/auto parallel training graph: RuntimeError in
        the other modes (as MindSpore), NotImplementedError in those two (mscore's
        semi-auto parallelism lays out what the shard strategies name and leaves the rest
        to the compiler, which reports no layouts)."""
        _check_layout_mode("infer_train_layout")

    def infer_predict_layout(self, *predict_data, skip_backend_compile=False):
        """The parameter layouts of a semi-auto/auto parallel inference graph; see
        :meth:`infer_train_layout`."""
        _check_layout_mode("infer_predict_layout")


def _check_layout_mode(name):
    mode = _parallel.parallel_mode()
    if mode not in ("semi_auto_parallel", "auto_parallel"):
        raise RuntimeError(f"Model.{name} only supports the 'semi_auto_parallel' and "
                           f"'auto_parallel' modes, but got {mode}")
    raise NotImplementedError(f"Model.{name}: mscore does not infer {mode} layouts (the "
                              f"shard strategies place what they name; the compiler "
                              f"partitions the rest without reporting it)")
