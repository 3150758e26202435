"""``SummaryRecord``: MindSpore's summary writer, producing files TensorBoard reads."""
from __future__ import annotations

import json
import logging
import os
import re
import time
import warnings

from mscore.common.tensor import Tensor
from mscore.communication.management import rank_subdirectory
from mscore.nn.cell import Cell
from mscore.train.summary import summary_ops as _ops
from mscore.train.summary._checks import check_positive, check_value_type
from mscore.train.summary.writer import EventWriter, SummaryWriteError

logger = logging.getLogger("mscore.summary")

_VALUE_PLUGINS = ("scalar", "image", "histogram", "tensor")
_LINEAGE_PLUGINS = ("train_lineage", "eval_lineage", "custom_lineage_data", "dataset_graph",
                    "graph")
_NAME_RE = r"^\w+[0-9a-zA-Z\_\.]*$"        # MindSpore's check for file_prefix/file_suffix
_MAX_PATH = 4096
# export_options keys and their values; sets, as in MindSpore, whose messages list them in
# set order (its tests build the expected message from the same set)
_EXPORT_FORMATS = {"tensor_format": {"npy", None}}


def _check_affixes(file_prefix, file_suffix):
    for name, value in (("file_prefix", file_prefix), ("file_suffix", file_suffix)):
        if not isinstance(value, str):
            raise TypeError(f"For 'SummaryRecord', {name}: expected a str, got "
                            f"{type(value).__name__}")
    for name, value in (("file_prefix", file_prefix), ("file_suffix", file_suffix)):
        if re.match(_NAME_RE, value, re.ASCII) is None:
            raise ValueError(f"For 'SummaryRecord', {name}: {value!r} is illegal, it must "
                             f"match the regular expression {_NAME_RE!r}")


def _record_max_file_size(value):
    """SummaryRecord's rule: an int (bool too) or None; a negative size is ignored with a
    warning, as is 0 (no limit)."""
    if value is None:
        return None
    if not isinstance(value, int):
        raise TypeError(f"For 'SummaryRecord', the 'max_file_size' should be int type, but got "
                        f"type {type(value)}")
    if value < 0:
        logger.warning("SummaryRecord: max_file_size should be greater than 0, got %d; "
                       "files are not limited", value)
    return int(value) if value > 0 else None


def check_max_file_size(value, owner):
    """None or a positive int (TypeError / ValueError otherwise)."""
    if value is None:
        return
    check_value_type("max_file_size", value, [int])
    check_positive("max_file_size", value, owner)


def check_export_options(export_options):
    """None or a dict of ``{"tensor_format": "npy" | None}`` (MindSpore's rules and words,
    the same from SummaryRecord and SummaryCollector)."""
    if export_options is None:
        return None
    check_value_type("export_options", export_options, [dict, type(None)])
    for key, value in export_options.items():
        check_value_type("export_option", key, [str])
        check_value_type("export_format", value, [str, type(None)])
    unknown = set(export_options) - set(_EXPORT_FORMATS)
    if unknown:
        raise ValueError(f"For \"SummaryRecord\", the keys {unknown} of \"export_options\" are "
                         f"unsupported, expect the follow keys: {list(_EXPORT_FORMATS)}")
    for key, value in export_options.items():
        unexpected = {value} - _EXPORT_FORMATS[key]
        if unexpected:
            raise ValueError(f"For \"SummaryRecord\", the export_format {unexpected} of "
                             f"\"export_options\" are unsupported for {key}, expect the follow "
                             f"values: {list(_EXPORT_FORMATS[key])}")
    return dict(export_options)


def make_directory(path, arg_name, owner):
    """The real path of directory ``path``, created if missing (MindSpore's checks)."""
    if not isinstance(path, str):
        raise TypeError(f"For '{owner}', {arg_name}: expected a str, got {type(path).__name__}")
    if not path.strip():
        raise ValueError(f"For '{owner}', {arg_name}: expected a non-blank path, got {path!r}")
    real = os.path.realpath(path)
    if len(real) > _MAX_PATH:
        raise ValueError(f"For '{owner}', {arg_name}: the path is too long ({len(real)} "
                         f"characters)")
    if os.path.exists(real):
        if not os.path.isdir(real):
            raise NotADirectoryError(f"For '{owner}', {arg_name}: {real!r} is a file, "
                                     f"expected a directory")
    else:
        try:
            os.makedirs(real, exist_ok=True)
        except OSError as exc:
            raise RuntimeError(f"For '{owner}', {arg_name}: cannot create directory {real!r}: "
                               f"{exc}") from exc
    if not os.access(real, os.W_OK | os.X_OK):
        raise RuntimeError(f"For '{owner}', {arg_name}: no write permission on {real!r}")
    return real


def _is_cell(obj):
    return isinstance(obj, Cell)


def _to_numpy(plugin, name, value):
    """A private host copy of Tensor ``value`` checked for ``plugin`` (MindSpore's rules)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"For 'SummaryRecord.add_value', value of {plugin} {name!r}: expected "
                        f"a Tensor, got {type(value).__name__}")
    arr = value.asnumpy()
    if not arr.flags.owndata:     # a view of the device buffer (torch CPU, jax): copy
        arr = arr.copy()
    return check_summary_value(plugin, arr, "SummaryRecord.add_value", name)


def check_summary_value(plugin, arr, owner, name):
    """``arr`` (numpy) when it suits ``plugin``: a numeric value; one element for 'scalar',
    4-d NCHW with 1 to 4 channels for 'image', rank > 0 for 'histogram' and 'tensor'
    (ValueError / TypeError otherwise)."""
    if arr.dtype.kind not in "biuf" and arr.dtype.name != "bfloat16":
        raise TypeError(f"For '{owner}', value of {plugin} {name!r}: expected a numeric "
                        f"Tensor, got dtype {arr.dtype}")
    if plugin == "scalar" and arr.size != 1:
        raise ValueError(f"For '{owner}', the value of scalar {name!r} should have one "
                         f"element, but got shape {arr.shape}")
    if plugin == "image":
        if arr.ndim != 4:
            raise ValueError(f"For '{owner}', the value of image {name!r} should be 4-d "
                             f"(NCHW), but got {arr.ndim}-d")
        if arr.shape[1] not in (1, 2, 3, 4) or 0 in arr.shape:
            raise ValueError(f"For '{owner}', the image {name!r} should have 1 to 4 channels "
                             f"on axis 1 and no empty axis, but got shape {arr.shape}")
    if plugin in ("histogram", "tensor") and arr.ndim == 0:
        raise ValueError(f"For '{owner}', the value of {plugin} {name!r} should have a "
                         f"dimension greater than 0, but got shape ()")
    return arr


class SummaryRecord:
    """Records summary data (and lineage data) of a run into ``log_dir``.

    ``SummaryRecord(log_dir, file_prefix='events', file_suffix='_MS', num_process=32,
    network=None, max_file_size=None, raise_exception=False, export_options=None)``. Values
    are queued with :meth:`add_value` (or by the summary operators inside ``construct``) and
    written by :meth:`record`. The event files are named
    ``{file_prefix}.out.tfevents.{seconds}.{host}{file_suffix}`` so that ``tensorboard
    --logdir LOG_DIR`` shows their scalars, histograms and images; ``max_file_size`` starts a
    new file (same name plus ``.0001``, ``.0002``, ...) before one would grow past it (a
    negative or zero size means no limit, as in MindSpore). Lineage data goes to a JSON-lines
    file beside them. In a data-parallel job of several processes each rank writes into
    ``log_dir/rank_R`` (TensorBoard shows one run per rank).
    ``export_options={'tensor_format': 'npy'}`` also saves every TensorSummary value as
    ``export_<seconds>/tensor/<quoted tag>_<step>.npy`` under ``log_dir``. ``num_process``
    is accepted (one writer thread does the work); ``raise_exception`` is checked, and write
    failures are always raised (never dropped).
    Use it as a context manager, or call :meth:`close`.

    Argument checks follow MindSpore: TypeError when ``log_dir`` is not a str,
    ``max_file_size`` not an int, ``file_prefix``/``file_suffix`` not str, ``raise_exception``
    not a bool or ``export_options`` of the wrong types; ValueError for a blank ``log_dir``,
    a malformed prefix/suffix or unsupported export options; NotADirectoryError when
    ``log_dir`` is a file; RuntimeError when it cannot be created or written.
    """

    def __init__(self, log_dir, file_prefix="events", file_suffix="_MS", num_process=32,
                 network=None, max_file_size=None, raise_exception=False,
                 export_options=None):
        if isinstance(log_dir, str) and log_dir.strip():   # each rank of a job: LOG_DIR/rank_R
            log_dir = rank_subdirectory(log_dir)
        log_path = make_directory(log_dir, "log_dir", "SummaryRecord")
        max_file_size = _record_max_file_size(max_file_size)
        _check_affixes(file_prefix, file_suffix)
        if not isinstance(raise_exception, bool):
            raise TypeError(f"For 'SummaryRecord', raise_exception: expected a bool, got "
                            f"{type(raise_exception).__name__}")
        export_options = check_export_options(export_options)
        self.network = network
        self._mode = "train"
        self._data_pool = {}            # (plugin, tag) -> numpy value, newest wins
        self._lineage_pool = []         # (plugin, name, dict, mode when added)
        self._has_graph = False
        self._closed = False
        export_tensors = bool(export_options) and export_options.get("tensor_format") == "npy"
        try:
            self._writer = EventWriter(log_path, file_prefix, file_suffix, max_file_size,
                                       export_tensors=export_tensors)
        except OSError as exc:
            raise RuntimeError(f"For 'SummaryRecord', log_dir: cannot create an event file in "
                               f"{log_path!r}: {exc}") from exc
        self._file_path = self._writer.path

    # -- context manager ------------------------------------------------------------------
    def __enter__(self):
        if self._closed:
            raise ValueError("For 'SummaryRecord', the SummaryRecord has been closed")
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
            return
        try:  # do not hide the exception already on its way out
            self.close()
        except SummaryWriteError as err:
            warnings.warn(str(err), RuntimeWarning)

    # -- properties -----------------------------------------------------------------------
    @property
    def log_dir(self):
        """The full path of the (first) event file, as MindSpore returns it."""
        return self._file_path

    @property
    def event_files(self):
        """Every event file written so far, in order (more than one after rotation)."""
        return list(self._writer.paths)

    @property
    def lineage_file(self):
        """The JSON-lines file that lineage records go to. It is created (never opened if
        it exists, never through a symlink) when the first record is written, under the next
        free name if this one is taken; after that this is the name actually used."""
        return self._writer.lineage_path

    # -- API ---------------------------------------------------------------------------
    def set_mode(self, mode):
        """Set the mode, ``'train'`` (default) or ``'eval'``; the summary operators' values
        are recorded in train mode only."""
        if mode not in ("train", "eval"):
            raise ValueError(f"For 'SummaryRecord', mode: expected 'train' or 'eval', got "
                             f"{mode!r}")
        self._mode = mode

    def add_value(self, plugin, name, value):
        """Queue ``value`` under tag ``name`` for the next :meth:`record`.

        ``plugin`` 'scalar' (one element), 'image' (NCHW, 1 to 4 channels; uint8, or floats
        in [0, 1]; a float batch outside [0, 1] is min-max rescaled), 'histogram' and
        'tensor' (rank > 0) take a Tensor (or numpy array).
        'train_lineage', 'eval_lineage', 'custom_lineage_data', 'dataset_graph' and 'graph'
        take a JSON-serialisable dict, written to the lineage file. A second value of one
        tag before :meth:`record` replaces the first (with a warning)."""
        if plugin in _VALUE_PLUGINS:
            if not isinstance(name, str) or not name:
                raise ValueError(f"For \"SummaryRecord\", the parameter \"name\" type should "
                                 f"be str, but got {type(name)}.")
            self._add_array(plugin, name, _to_numpy(plugin, name, value))
        elif plugin in _LINEAGE_PLUGINS:
            if not isinstance(value, dict):
                raise TypeError(f"For 'SummaryRecord.add_value', value of {plugin}: expected "
                                f"a dict, got {type(value).__name__}")
            try:
                json.dumps(value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"For 'SummaryRecord.add_value', value of {plugin}: must "
                                 f"be JSON-serialisable: {exc}") from exc
            self._lineage_pool.append((plugin, name, value, self._mode))
        else:
            raise ValueError(f"For 'SummaryRecord.add_value', plugin: expected one of "
                             f"{_VALUE_PLUGINS + _LINEAGE_PLUGINS}, got {plugin!r}")

    def _add_array(self, plugin, name, arr):
        """Queue the checked host array ``arr`` (the collector's own values come here)."""
        key = (plugin, name)
        if key in self._data_pool:
            logger.warning("%r has duplicate values; only the newest is written",
                           f"{name}/{plugin}")
        self._data_pool[key] = arr

    def record(self, step, train_network=None, plugin_filter=None):
        """Write everything queued as one event at ``step``; returns True, or False when the
        record is closed. ``plugin_filter(plugin) -> bool`` drops the plugins it rejects.
        Raises RuntimeError (:class:`SummaryWriteError`) when earlier data could not be
        written (for example, the disk is full)."""
        if not isinstance(step, int) or isinstance(step, bool):
            raise TypeError(f"For 'SummaryRecord.record', step: expected an int, got "
                            f"{type(step).__name__}")
        if train_network is not None and not _is_cell(train_network):
            raise TypeError(f"For 'SummaryRecord.record', train_network: expected a Cell or "
                            f"None, got {type(train_network).__name__}")
        if plugin_filter is not None and not callable(plugin_filter):
            raise TypeError(f"For 'SummaryRecord.record', plugin_filter: expected a callable "
                            f"or None, got {type(plugin_filter).__name__}")
        if self._closed:
            logger.error("SummaryRecord.record: the record writer is closed")
            return False
        self._writer.raise_if_failed()
        wall_time = time.time()
        if self.network is not None and not self._has_graph:
            if _is_cell(self.network):
                self._lineage_pool.append(("graph", "network",
                                           _describe_network(self.network), self._mode))
            else:
                logger.warning("SummaryRecord: network is not a Cell (%s); no graph is "
                               "recorded", type(self.network).__name__)
            self._has_graph = True
        if self._mode == "train":
            for plugin, tag, native in _ops.consume_pending():
                self.add_value(plugin, tag, Tensor._wrap(native))
        pool, lineage = self._data_pool, self._lineage_pool
        self._data_pool, self._lineage_pool = {}, []
        keep = plugin_filter or (lambda plugin: True)
        items = [(plugin, tag, value) for (plugin, tag), value in pool.items() if keep(plugin)]
        for plugin, name, value, mode in lineage:
            if keep(plugin):
                self._writer.write_lineage({"plugin": plugin, "name": name, "step": step,
                                            "mode": mode, "wall_time": wall_time,
                                            "value": value})
        if items:
            self._writer.write_summary(step, wall_time, items)
        return True

    def _write_graph(self, graph_def):
        """Write the serialized GraphDef ``graph_def`` (TensorBoard's Graphs tab; see
        :func:`mscore.train.summary.graph.network_graph`) as its own event."""
        self._writer.raise_if_failed()
        self._writer.write_graph(time.time(), graph_def)

    def flush(self):
        """Block until every recorded event is on disk."""
        if self._closed:
            logger.error("SummaryRecord.flush: the record writer is closed")
            return
        self._writer.flush()

    def close(self):
        """Write what is pending and close the files (safe to call twice)."""
        if self._closed:
            return
        self._closed = True
        self._writer.close()


def _describe_network(network):
    params = [{"name": p.name, "shape": list(p.shape), "dtype": str(p.dtype),
               "requires_grad": bool(p.requires_grad)} for p in network.get_parameters()]
    return {"class": type(network).__name__, "repr": repr(network), "parameters": params}
