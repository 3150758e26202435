"""Checkpoints: ``save_checkpoint``, ``load_checkpoint``, ``load_param_into_net``.

Two formats, chosen with ``format=``: MindSpore's protobuf ``"ckpt"`` and ``"safetensors"``;
their layouts, the CRC footer and the readers are in :mod:`._ckpt_format`.

Saving is atomic (:mod:`._atomic`): the bytes go to a temporary file in the target's
directory, which is fsynced and renamed over the target, so a process killed mid-write leaves
the old file (or none) under the target name; the next save into that directory removes the
temporaries such a process left. ``async_save=True`` copies the values to host memory at
once and writes in a background thread; the next save or load, and interpreter exit, wait for
it.

Loading never unpickles: a file is parsed as protobuf or safetensors and nothing else, and a
file that is not a valid checkpoint is a ``ValueError`` naming it.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import numbers
import os
import threading
import warnings
from collections import OrderedDict

import numpy as np

from mscore import _state, dispatch
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.plugin.registry import get_registry
from mscore.train.serialization import _crypto
from mscore.train.serialization._args import _check_bool, _check_flag
from mscore.train.serialization._atomic import atomic_write
from mscore.train.serialization._ckpt_format import (
    FORMATS,
    _bad_file,
    _Entry,
    _read_ckpt,
    _read_safetensors,
    _write_ckpt,
    _write_safetensors,
)
from mscore.train.serialization._into_net import load_param_into_net
from mscore.train.serialization._parallel import save_job_strategy
from mscore.train.serialization._reading import read_bounded
from mscore.train.serialization._shard_identity import IDENTITY_KEY, ShardIdentity, identity_entries

logger = logging.getLogger("mscore.serialization")




# -- argument checks -------------------------------------------------------------------------------
def _check_path(value, name):
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes) or not isinstance(value, str):
        raise TypeError(f"{name}: expected a str or os.PathLike file name, got "
                        f"{type(value).__name__}")
    if not value:
        raise ValueError(f"{name}: the file name is empty")
    return value


def _check_format(value):
    if not isinstance(value, str):
        raise TypeError(f"format: expected a str, got {type(value).__name__}")
    if value not in FORMATS:
        raise ValueError(f"format: expected one of {FORMATS}, got {value!r}")
    return value


# -- what gets saved -------------------------------------------------------------------------------

def _host_array(value, what):
    """A numpy copy of a Tensor / Parameter / numpy array and its mscore dtype."""
    if isinstance(value, Tensor):
        arr = np.asarray(value.asnumpy())
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
    else:
        raise TypeError(f"{what}: expected a Parameter, Tensor or numpy array, got "
                        f"{type(value).__name__}")
    try:
        dtype = mdt.from_numpy_dtype(arr.dtype)
    except TypeError:
        raise TypeError(f"{what}: dtype {arr.dtype} cannot be saved; supported: "
                        f"{[d.name for d in mdt.ALL_DTYPES]}") from None
    return arr, dtype


def _entries_from(save_obj, choice_func=None):
    """The entries of ``save_obj`` whose names ``choice_func`` (if given) accepts."""
    entries = []
    chosen = (lambda name: True) if choice_func is None else choice_func
    if isinstance(save_obj, Cell):
        for _, param in save_obj.parameters_and_names():
            if chosen(param.name):
                arr, dtype = _host_array(param, f"save_obj: parameter {param.name!r}")
                entries.append(_Entry(param.name, dtype, arr))
    elif isinstance(save_obj, dict):
        for name, value in save_obj.items():
            if not isinstance(name, str):
                raise TypeError(f"save_obj: dict keys must be parameter names (str), got "
                                f"{type(name).__name__}")
            if chosen(name):
                entries.append(_value_entry(name, value, f"save_obj[{name!r}]"))
    elif isinstance(save_obj, list):
        for i, item in enumerate(save_obj):
            if isinstance(item, Parameter):  # a list of Parameters, keyed by their names
                if chosen(item.name):
                    entries.append(_value_entry(item.name, item, f"save_obj[{i}]"))
                continue
            if not isinstance(item, dict) or "name" not in item or "data" not in item:
                raise TypeError(f"save_obj[{i}]: expected a Parameter or a dict {{'name': str, "
                                f"'data': Parameter or Tensor}}, got {item!r:.80}")
            name = item["name"]
            if not isinstance(name, str):
                raise TypeError(f"save_obj[{i}]['name']: expected a str, got "
                                f"{type(name).__name__}")
            if chosen(name):
                entries.append(_value_entry(name, item["data"], f"save_obj[{i}]['data']"))
    else:
        raise TypeError(f"save_obj: expected a Cell, a list of Parameters or of {{'name': ..., "
                        f"'data': ...}} dicts, or a dict of name -> Tensor, got "
                        f"{type(save_obj).__name__}")
    return entries


def _value_entry(name, value, what):
    if isinstance(value, str):
        return _Entry(name, text=value)
    arr, dtype = _host_array(value, what)
    return _Entry(name, dtype, arr)


def _append_entries(append_dict):
    if append_dict is None:
        return []
    if not isinstance(append_dict, dict):
        raise TypeError(f"append_dict: expected a dict or None, got {type(append_dict).__name__}")
    entries = []
    for key, value in append_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"append_dict: keys must be str, got {type(key).__name__}")
        what = f"append_dict[{key!r}]"
        if isinstance(value, str):
            entries.append(_Entry(key, text=value))
        elif isinstance(value, bool):
            entries.append(_Entry(key, mdt.bool_, np.asarray(value, np.bool_)))
        elif isinstance(value, numbers.Integral):
            entries.append(_Entry(key, mdt.int64, np.asarray(int(value), np.int64)))
        elif isinstance(value, numbers.Real):
            entries.append(_Entry(key, mdt.float32, np.asarray(float(value), np.float32)))
        elif isinstance(value, (Tensor, np.ndarray, np.generic)):
            arr, dtype = _host_array(value, what)
            entries.append(_Entry(key, dtype, arr))
        else:
            raise TypeError(f"{what}: expected an int, float, bool, str, Parameter or Tensor, "
                            f"got {type(value).__name__}")
    return entries


def _check_unique(entries):
    seen = set()
    for e in entries:
        if e.name in seen:
            raise ValueError(f"save_checkpoint: the name {e.name!r} appears twice (two "
                             f"parameters with one name, or an append_dict key equal to a "
                             f"parameter name)")
        seen.add(e.name)


# -- asynchronous saving ---------------------------------------------------------------------------
_pending = _state.process.async_saves
_async_errors = _state.process.async_save_errors
_pending_lock = threading.Lock()


def _wait_async_saves():
    """Wait for every background save; re-raise the first failure as RuntimeError."""
    with _pending_lock:
        threads = list(_pending)
        _pending.clear()
    for t in threads:
        t.join()
    with _pending_lock:
        errors = list(_async_errors)
        _async_errors.clear()
    if errors:
        raise RuntimeError(f"an asynchronous save_checkpoint failed: "
                           f"{type(errors[0]).__name__}: {errors[0]}") from errors[0]


def wait_async_save():
    """Block until every ``save_checkpoint(..., async_save=True)`` has finished writing.

    A background save that failed is reported here as ``RuntimeError`` (otherwise the next
    save or load reports it). mscore extension; MindSpore waits implicitly.
    """
    _wait_async_saves()


def async_ckpt_thread_status():
    """True while a ``save_checkpoint(..., async_save=True)`` is still writing."""
    with _pending_lock:
        return any(t.is_alive() for t in _pending)


@_state.finisher("async_saves")
def _wait_at_exit():
    """Wait for the background saves at exit and in ``mscore._state.reset()``; a failed one
    is reported as a RuntimeWarning (nobody is left to catch it)."""
    try:
        _wait_async_saves()
    except RuntimeError as exc:
        warnings.warn(str(exc), RuntimeWarning, stacklevel=2)


# -- after a file is in place ------------------------------------------------------------------
_after_write = contextvars.ContextVar("mscore_after_checkpoint_write", default=None)


@contextlib.contextmanager
def after_checkpoint_written(callback):
    """Within the block, every :func:`save_checkpoint` call of this thread calls
    ``callback(path)`` once its file is complete under its final name -- in the writer
    thread for an asynchronous save, and never when the save fails. ``ModelCheckpoint``
    rotates old files this way, so a save that dies never costs the previous checkpoint."""
    token = _after_write.set(callback)
    try:
        yield
    finally:
        _after_write.reset(token)


def _write_file(path, writer, entries, crc_check, on_written):
    atomic_write(path, lambda f: writer(f, entries, crc_check))
    if on_written is not None:
        on_written(path)


def _async_job(path, writer, entries, crc_check, on_written):
    try:
        _write_file(path, writer, entries, crc_check, on_written)
    except BaseException as exc:  # reported by the next save/load or at exit
        with _pending_lock:
            _async_errors.append(exc)


def _encrypted_writer(key, mode):
    """A ``writer(f, entries, crc_check)`` that writes the .ckpt bytes encrypted."""
    def write(f, entries, crc_check):
        sink = _crypto.EncryptingWriter(f, key, mode)
        _write_ckpt(sink, entries, crc_check)
        sink.close()
    return write


def _check_async_save(async_save):
    """A bool, ``"thread"`` or ``"process"`` (MindSpore's values) as a bool."""
    if isinstance(async_save, str):
        if async_save not in ("thread", "process"):
            raise ValueError(f"async_save: a str must be 'thread' or 'process', got "
                             f"{async_save!r}")
        return True
    return _check_bool(async_save, "async_save")


# MindSpore keyword arguments of save_checkpoint and the only values that mean something here
_SAVE_KWARGS = {"incremental": (False,), "global_step_num": (None,),
                "remove_redundancy": (None, False)}


def _check_save_kwargs(kwargs):
    for name, value in kwargs.items():
        if name not in _SAVE_KWARGS:
            raise TypeError(f"save_checkpoint() got an unexpected keyword argument {name!r}")
        if name == "remove_redundancy" and value is not None and not isinstance(value, bool):
            raise ValueError(f"remove_redundancy: expected a bool or None, got {value!r}")
        if not any(value is allowed for allowed in _SAVE_KWARGS[name]):
            raise NotImplementedError(f"save_checkpoint: {name}={value!r} is not supported "
                                      f"(MindSpore's default {_SAVE_KWARGS[name][0]!r} is)")


# -- save ------------------------------------------------------------------------------------------
def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False,
                    append_dict=None, enc_key=None, enc_mode="AES-GCM", choice_func=None,
                    crc_check=False, format="ckpt", **kwargs):
    """Save the parameters of ``save_obj`` to ``ckpt_file_name``.

    ``save_obj`` is a Cell (its parameters, keyed by ``Parameter.name``), a list of
    Parameters, a list of ``{"name": str, "data": Parameter | Tensor | str}`` dicts, or a
    dict of name to Parameter/Tensor; ``choice_func(name)`` keeps only the names it accepts.
    ``append_dict`` adds entries (int, float, bool, str, Tensor). The file name gets the
    suffix ``.ckpt`` / ``.safetensors`` of ``format`` when it lacks it. ``integrated_save``
    only matters for model-parallel training and is accepted for compatibility;
    ``async_save`` is a bool or MindSpore's ``"thread"`` / ``"process"`` (both write in a
    background thread here). ``enc_key`` (bytes: 16, 24 or 32 for AES, 16 for SM4) encrypts
    a ``.ckpt`` file with ``enc_mode`` ``"AES-GCM"``, ``"AES-CBC"`` or ``"SM4-CBC"`` in
    MindSpore's layout (:mod:`._crypto`), with mscore's integrity check inside (a keyed MAC
    that MindSpore's reader skips); it excludes ``crc_check``. Of MindSpore's keyword
    arguments, ``incremental`` (False), ``global_step_num`` (None) and
    ``remove_redundancy`` (None/False) are accepted at those values. See the module
    docstring for the format, the CRC footer, atomicity and ``async_save``.
    """
    path = _check_path(ckpt_file_name, "ckpt_file_name")
    _check_bool(integrated_save, "integrated_save")
    async_save = _check_async_save(async_save)
    _check_flag(crc_check, "crc_check", "save_checkpoint")
    fmt = _check_format(format)
    _check_save_kwargs(kwargs)
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"choice_func: expected a callable or None, got "
                        f"{type(choice_func).__name__}")
    enc_key = _crypto.check_key(enc_key, "enc_key", "save_checkpoint")
    enc_mode = _crypto.check_mode(enc_mode, "enc_mode", "save_checkpoint")
    if fmt == "safetensors" and (enc_key is not None or enc_mode != "AES-GCM"):
        raise ValueError("For 'save_checkpoint', when format is 'safetensors', 'enc_key' and "
                         "'enc_mode' must keep their defaults (None, 'AES-GCM'): safetensors "
                         "files are not encrypted")
    if enc_key is not None:
        _crypto.check_key_and_mode(enc_key, enc_mode, "enc_key", "enc_mode", "save_checkpoint")
        if crc_check:
            raise ValueError("For 'save_checkpoint', 'enc_key' and 'crc_check' cannot be used "
                             "together (an encrypted file always carries mscore's integrity "
                             "check instead)")
    entries = _entries_from(save_obj, choice_func) + _append_entries(append_dict)
    if entries and not any(e.name == IDENTITY_KEY for e in entries):
        # who this rank's file is, when it holds sliced or rank-local state of a job
        entries += _append_entries(identity_entries(save_obj))
    if not entries:
        raise ValueError("save_obj: there is nothing to save (no parameters and no "
                         "append_dict entries)")
    _check_unique(entries)
    save_job_strategy(save_obj)   # the layouts of a sharded optimizer's slices, if asked
    if not path.endswith("." + fmt):
        path += "." + fmt
    if os.path.isdir(path):
        raise ValueError(f"ckpt_file_name: {path!r} is a directory")
    writer = _write_ckpt if fmt == "ckpt" else _write_safetensors
    if enc_key is not None:
        writer = _encrypted_writer(enc_key, enc_mode)
    on_written = _after_write.get()
    _wait_async_saves()  # a later save waits for an earlier asynchronous one
    if async_save:
        for e in entries:  # own the bytes: the caller may keep training
            if e.array is not None and not e.array.flags.owndata:
                e.array = e.array.copy()
        thread = threading.Thread(target=_async_job,
                                  args=(path, writer, entries, crc_check, on_written),
                                  name="mscore-async-save", daemon=False)
        with _pending_lock:
            _pending.append(thread)
        thread.start()
        return
    _write_file(path, writer, entries, crc_check, on_written)


# -- load ------------------------------------------------------------------------------------------
def _check_prefixes(value, name):
    """``filter_prefix`` / ``specify_prefix``: None, a str or a list/tuple of str."""
    if value is None:
        return ()
    prefixes = (value,) if isinstance(value, str) else value
    if not isinstance(prefixes, (list, tuple)):
        raise TypeError(f"{name}: expected a str, a list/tuple of str or None, got "
                        f"{type(value).__name__}")
    for p in prefixes:
        if not isinstance(p, str):
            raise TypeError(f"{name}: expected str elements, got {type(p).__name__}")
        if not p:
            raise ValueError(f"{name}: an empty prefix matches every name")
    return tuple(prefixes)


def _selector(specify, filtered, choice_func):
    """Whether a name is loaded: it starts with a ``specify_prefix`` (when given) and with
    no ``filter_prefix``; ``choice_func`` decides only when neither prefix is given (as in
    MindSpore)."""
    def chosen(name):
        if specify and not name.startswith(specify):
            return False
        if filtered and name.startswith(filtered):
            return False
        if not specify and not filtered and choice_func is not None:
            return bool(choice_func(name))
        return True
    return chosen


def _call_selector(chosen, name, path, fmt):
    """``chosen(name)``; an exception a user's ``choice_func`` raises while a .ckpt file is
    read becomes a ValueError naming the file, worded as MindSpore words it (it reads
    .safetensors files without that wrapping)."""
    if fmt != "ckpt":
        return chosen(name)
    try:
        return chosen(name)
    except Exception as exc:
        raise ValueError(f"{exc}\nFor 'load_checkpoint', failed to load the checkpoint file "
                         f"{path}.") from exc


def _decrypted(path, data, dec_key, dec_mode, crc_check):
    """``(plain bytes, unchecked)`` of a .ckpt file (decrypted with ``dec_key``), or a
    ValueError naming the file: an encrypted file without a key, a plain file with one, a
    wrong key or mode, a tampered or truncated file. ``unchecked`` says why the plain bytes
    are unauthenticated (a CBC file without mscore's integrity check, :mod:`._crypto`), else
    None. With ``dec_key``, ``crc_check=True`` requires the integrity check, which a file
    encrypted by MindSpore does not carry."""
    found = _crypto.cipher_mode(data)
    if dec_key is None:
        if found is not None:
            raise _bad_file(path, f"it is encrypted ({found}); pass dec_key (and "
                                  f"dec_mode={found!r})")
        return data, None
    unchecked = []
    plain = _crypto.decrypt(data, dec_key, dec_mode, lambda why: _bad_file(path, why),
                            require_mac=crc_check, warn_unchecked=unchecked.append)
    return plain, (unchecked[0] if unchecked else None)


def _entries(path, reader, data, crc_check):
    """The ``(name, value)`` entries ``reader`` finds in ``data``; a ValueError naming the file
    for anything it cannot read or a file without entries."""
    try:
        entries = reader(path, data, crc_check)
    except ValueError as exc:
        if repr(path) in str(exc):
            raise
        raise _bad_file(path, f"{type(exc).__name__}: {exc}") from None
    except (TypeError, KeyError, IndexError, OverflowError) as exc:
        raise _bad_file(path, f"{type(exc).__name__}: {exc}") from None
    if not entries:
        raise _bad_file(path, "it holds no parameter entries")
    return entries


def _check_backend_dtype(path, name, dtype):
    backend = dispatch.backend()
    spec = get_registry().specs.get(getattr(backend, "name", None))
    if spec is not None and dtype.name not in spec.dtypes:
        raise ValueError(f"load_checkpoint: {path!r}: entry {name!r} has dtype {dtype.name}, "
                         f"which backend {spec.name!r} does not support (it declares "
                         f"{list(spec.dtypes)})")


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    crc_check=False, remove_redundancy=False, format="ckpt"):
    """Load a checkpoint file; return ``{name: Parameter}`` (appended strings stay ``str``).

    Only entries whose name starts with a ``specify_prefix`` (when given) and with no
    ``filter_prefix`` are loaded (each a str or a list/tuple of str); without either,
    ``choice_func(name)`` chooses (as in MindSpore, it is ignored when a prefix is given). A
    ``.ckpt`` written with ``enc_key`` loads with ``dec_key`` and ``dec_mode`` (MindSpore's
    encrypted layout, :mod:`._crypto`): mscore's integrity check is verified when the file carries
    it (every file mscore encrypts), and ``crc_check=True`` requires it; a CBC file without it
    (written by MindSpore) loads with a warning. With ``net`` the parameters are also loaded into it
    with :func:`load_param_into_net` (``strict_load`` applies). ``remove_redundancy`` only matters
    for model-parallel files and is accepted. The Parameters hold arrays of the active backend,
    whichever backend wrote the file. A missing, empty, truncated or corrupted file, one in another
    format, one without parameter entries, an encrypted file without its key (or with a wrong one)
    is a ``ValueError`` naming the file; so is a selection that leaves nothing to load (as in
    MindSpore).
    """
    path = _check_path(ckpt_file_name, "ckpt_file_name")
    if net is not None and not isinstance(net, Cell):
        raise TypeError(f"net: expected a Cell or None, got {type(net).__name__}")
    _check_bool(strict_load, "strict_load")
    prefixes = _check_prefixes(filter_prefix, "filter_prefix")
    specify = _check_prefixes(specify_prefix, "specify_prefix")
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"choice_func: expected a callable or None, got "
                        f"{type(choice_func).__name__}")
    _check_flag(crc_check, "crc_check", "load_checkpoint")
    _check_flag(remove_redundancy, "remove_redundancy", "load_checkpoint")
    fmt = _check_format(format)
    dec_key = _crypto.check_key(dec_key, "dec_key", "load_checkpoint")
    dec_mode = _crypto.check_mode(dec_mode, "dec_mode", "load_checkpoint")
    if fmt == "safetensors" and (dec_key is not None or dec_mode != "AES-GCM"):
        raise ValueError("For 'load_checkpoint', when format is 'safetensors', 'dec_key' and "
                         "'dec_mode' must keep their defaults (None, 'AES-GCM'): safetensors "
                         "files are not encrypted")
    if dec_key is not None:
        _crypto.check_key_and_mode(dec_key, dec_mode, "dec_key", "dec_mode", "load_checkpoint")
    if not path.endswith("." + fmt):
        raise ValueError(f"ckpt_file_name: a {fmt!r} checkpoint file name must end with "
                         f"'.{fmt}', got {path!r}")
    _wait_async_saves()
    if not os.path.isfile(path):
        raise ValueError(f"ckpt_file_name: the checkpoint file {path!r} does not exist")
    data = read_bounded(path, "load_checkpoint")
    if not data:
        raise _bad_file(path, "the file is empty")
    reader = _read_ckpt if fmt == "ckpt" else _read_safetensors
    unchecked = None
    if fmt == "ckpt":
        data, unchecked = _decrypted(path, data, dec_key, dec_mode, crc_check)
        if dec_key is not None:  # the integrity check was the MAC, not a CRC footer
            crc_check = False
    try:
        entries = _entries(path, reader, data, crc_check)
    except ValueError:
        if unchecked is None:
            raise
        # unauthenticated bytes that are no checkpoint: a wrong key whose padding looked valid
        raise _bad_file(path, _crypto.WRONG_KEY) from None
    if unchecked is not None:
        warnings.warn(f"load_checkpoint: {path!r}: {unchecked}", UserWarning, stacklevel=2)
    result = OrderedDict()
    chosen = _selector(specify, prefixes, choice_func)
    for name, value in entries:
        if not _call_selector(chosen, name, path, fmt):
            continue
        if isinstance(value, str):
            if name == IDENTITY_KEY:   # remembers its file for the checks of later loads
                value = ShardIdentity(value)
                value.source = path
            result[name] = value
            continue
        dtype = mdt.from_numpy_dtype(value.dtype)
        _check_backend_dtype(path, name, dtype)
        result[name] = Parameter(Tensor(value), name=name)
    if not result:
        given = [n for n, v in (("specify_prefix", specify), ("filter_prefix", prefixes),
                                ("choice_func", choice_func)) if v]
        raise ValueError(f"load_checkpoint: {' and '.join(given)} left no entry of {path!r} "
                         f"to load; check {' and '.join(given)}")
    if net is not None:
        load_param_into_net(net, result, strict_load)
    return result


def load_checkpoint_async(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                          dec_key=None, dec_mode="AES-GCM", specify_prefix=None,
                          choice_func=None):
    """:func:`load_checkpoint` in a background thread; returns a
    :class:`concurrent.futures.Future` whose ``result()`` is what ``load_checkpoint`` returns
    (or raises what it raises). The format follows the file name's suffix."""
    from concurrent.futures import ThreadPoolExecutor
    fmt = "safetensors" if isinstance(ckpt_file_name, str) and \
        ckpt_file_name.endswith(".safetensors") else "ckpt"
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mscore-async-load")
    try:
        return executor.submit(load_checkpoint, ckpt_file_name, net, strict_load, filter_prefix,
                               dec_key, dec_mode, specify_prefix, choice_func, format=fmt)
    finally:
        executor.shutdown(wait=False)

