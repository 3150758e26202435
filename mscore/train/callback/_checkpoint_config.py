"""``CheckpointConfig``: when ``ModelCheckpoint`` saves, how many files it keeps, and how it
writes them (MindSpore 2.10's arguments and checks)."""
from __future__ import annotations

from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.train.callback._utils import check_bool, check_flag, check_non_negative_int
from mscore.train.serialization import _crypto

__all__ = ["CheckpointConfig"]

FORMATS = ("ckpt", "safetensors")
APPEND_NAMES = ("epoch_num", "step_num")
# MindSpore's extra keyword arguments and the only values that mean something here
_KWARGS = {"incremental": False, "enable_redundance": False}


def check_async_save(async_save, cls):
    """A bool or MindSpore's ``"thread"`` / ``"process"``: ``TypeError`` for another type,
    ``ValueError`` for another str."""
    if isinstance(async_save, str):
        if async_save not in ("thread", "process"):
            raise ValueError(f"For '{cls}', the argument 'async_save' can only be 'process' or "
                             f"'thread', but got {async_save!r}.")
        return async_save
    if not isinstance(async_save, bool):
        raise TypeError(f"For '{cls}', the argument 'async_save' must be bool or str, but got "
                        f"{type(async_save).__name__}.")
    return async_save


def _append_value_ok(value):
    return isinstance(value, (int, float, bool, str, Tensor))


def check_append_info(append_info):
    """MindSpore's ``append_info``: a list of ``'epoch_num'``, ``'step_num'`` and at most one
    dict of str -> int/float/bool/str/Tensor; returns the dict of initial values (the two
    counters start at 0, or at the dict's value for that name), or None."""
    cls = "CheckpointConfig"
    if append_info is None or (isinstance(append_info, list) and not append_info):
        return None
    if not isinstance(append_info, list):
        raise TypeError(f"For '{cls}', the type of 'append_info' must be list, but got "
                        f"{type(append_info).__name__}.")
    out = {name: 0 for name in APPEND_NAMES if name in append_info}
    dicts = 0
    for element in append_info:
        if isinstance(element, str):
            if element not in APPEND_NAMES:
                raise ValueError(f"For '{cls}', the value of element in the argument "
                                 f"'append_info' must be in {list(APPEND_NAMES)}, but got "
                                 f"{element!r}.")
        elif isinstance(element, dict):
            dicts += 1
            if dicts > 1:
                raise TypeError(f"For '{cls}', the element of 'append_info' must has only one "
                                f"dict, but got {dicts}.")
            for key, value in element.items():
                if not isinstance(key, str) or not _append_value_ok(value):
                    raise TypeError(f"For '{cls}', the key type of the dict 'append_info' must "
                                    f"be string, the value type must be int, float, bool, str "
                                    f"or Tensor, but got key type {type(key).__name__}, value "
                                    f"type {type(value).__name__}.")
                out[key] = value
        else:
            raise TypeError(f"For '{cls}', the type of 'append_info' element must be str or "
                            f"dict, but got {type(element).__name__}.")
    return out


class CheckpointConfig:
    """When to save checkpoints, how many to keep and how to write them.

    Args:
        save_checkpoint_steps (int): save every this many steps (default 1). It takes
            precedence: ``save_checkpoint_seconds`` only counts when this is 0 or None.
        save_checkpoint_seconds (int): save every this many seconds (default 0: off).
        keep_checkpoint_max (int): keep at most this many files, removing the oldest
            (default 5).
        keep_checkpoint_per_n_minutes (int): instead of a maximum, keep one file per this
            many minutes (only when ``keep_checkpoint_max`` is 0 or None).
        integrated_save (bool): MindSpore's parallel option; passed to ``save_checkpoint``.
        async_save (Union[bool, str]): write the file in a background thread (``True``,
            ``"thread"`` or ``"process"``).
        saved_network (Cell): save this network instead of the train network.
        append_info (list): ``"epoch_num"`` / ``"step_num"`` (the run's epoch and step,
            added to a start value of 0) and at most one dict of str -> int/float/bool/str/
            Tensor saved with the parameters (a dict entry ``"epoch_num"`` / ``"step_num"``
            sets that counter's start value).
        enc_key (bytes): encrypt the files with this key (see ``save_checkpoint``).
        enc_mode (str): ``"AES-GCM"`` (default), ``"AES-CBC"`` or ``"SM4-CBC"``.
        exception_save (bool): when training raises, save the train network as
            ``{prefix}-{epoch}_{step}_breakpoint.ckpt`` before the exception propagates.
        crc_check (bool): add MindSpore's CRC footer.
        remove_redundancy (bool): MindSpore's parallel deduplication; only False.
        format (str): ``"ckpt"`` (MindSpore's protobuf, default) or ``"safetensors"``; the
            latter takes no encryption, CRC or ``exception_save``.

    At least one of the four counts must be non-zero, else ``ValueError``. Type errors are
    MindSpore's (``ValueError`` for ``enc_key``, ``enc_mode``, ``crc_check``,
    ``remove_redundancy`` and ``format``).
    """

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False,
                 saved_network=None, append_info=None, enc_key=None, enc_mode="AES-GCM",
                 exception_save=False, crc_check=False, remove_redundancy=False, format="ckpt",
                 **kwargs):
        cls = "CheckpointConfig"
        for name, value in (("save_checkpoint_steps", save_checkpoint_steps),
                            ("save_checkpoint_seconds", save_checkpoint_seconds),
                            ("keep_checkpoint_max", keep_checkpoint_max),
                            ("keep_checkpoint_per_n_minutes", keep_checkpoint_per_n_minutes)):
            if value is not None:
                check_non_negative_int(value, name, cls)
        if saved_network is not None:
            if not isinstance(saved_network, Cell):
                raise TypeError(f"For '{cls}', the type of 'saved_network' must be None or Cell, "
                                f"but got {type(saved_network).__name__}.")
        if not (save_checkpoint_steps or save_checkpoint_seconds or keep_checkpoint_max or
                keep_checkpoint_per_n_minutes):
            raise ValueError(f"For '{cls}', the input arguments 'save_checkpoint_steps', "
                             f"'save_checkpoint_seconds', 'keep_checkpoint_max' and "
                             f"'keep_checkpoint_per_n_minutes' can't be all None or 0.")
        self.exception_save = check_bool(exception_save, "exception_save", cls)
        self._save_checkpoint_steps = save_checkpoint_steps
        self._save_checkpoint_seconds = save_checkpoint_seconds
        if self._save_checkpoint_steps and self._save_checkpoint_steps > 0:
            self._save_checkpoint_seconds = None
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        if self._keep_checkpoint_max and self._keep_checkpoint_max > 0:
            self._keep_checkpoint_per_n_minutes = None
        elif not self._keep_checkpoint_per_n_minutes:
            self._keep_checkpoint_max = 1
        self._integrated_save = check_bool(integrated_save, "integrated_save", cls)
        self._async_save = check_async_save(async_save, cls)
        self._saved_network = saved_network
        self._append_dict = check_append_info(append_info)
        self._enc_key, self._enc_mode = self._check_encryption(enc_key, enc_mode, crc_check)
        self._crc_check = check_flag(crc_check, "crc_check", cls)
        self.remove_redundancy = check_flag(remove_redundancy, "remove_redundancy", cls)
        if remove_redundancy:
            raise NotImplementedError(f"For '{cls}', remove_redundancy=True (MindSpore's "
                                      f"deduplication of model-parallel slices) is not "
                                      f"supported; use the default False.")
        self._format = self._check_format(format, enc_key, enc_mode, crc_check, exception_save)
        self._map_param_inc = self._check_kwargs(kwargs, "incremental")
        self.enable_redundance = self._check_kwargs(kwargs, "enable_redundance")

    @staticmethod
    def _check_encryption(enc_key, enc_mode, crc_check):
        cls = "CheckpointConfig"
        enc_key = _crypto.check_key(enc_key, "enc_key", cls)
        enc_mode = _crypto.check_mode(enc_mode, "enc_mode", cls)
        if enc_key is not None:
            _crypto.check_key_and_mode(enc_key, enc_mode, "enc_key", "enc_mode", cls)
            if crc_check is True:
                raise ValueError(f"For '{cls}', 'enc_key' and 'crc_check' cannot be used "
                                 f"together (an encrypted file is authenticated by its cipher).")
        return enc_key, enc_mode

    @staticmethod
    def _check_format(format, enc_key, enc_mode, crc_check, exception_save):
        cls = "CheckpointConfig"
        if not isinstance(format, str):
            raise ValueError(f"For '{cls}', the argument 'format' must be str, but got "
                             f"{format!r}.")
        if format not in FORMATS:
            raise ValueError(f"For '{cls}', the argument 'format' must be one of {FORMATS}, but "
                             f"got {format!r}.")
        if format == "safetensors" and (enc_key is not None or enc_mode != "AES-GCM" or
                                        crc_check or exception_save):
            raise ValueError("For 'save_checkpoint', when format is 'safetensors', other param "
                             "must be default (enc_key, enc_mode, crc_check, exception_save).")
        return format

    @staticmethod
    def _check_kwargs(kwargs, name):
        unknown = sorted(set(kwargs) - set(_KWARGS))
        if unknown:
            raise TypeError(f"CheckpointConfig() got unexpected keyword argument(s) {unknown}")
        value = kwargs.get(name, _KWARGS[name])
        if value is not _KWARGS[name]:
            raise NotImplementedError(f"For 'CheckpointConfig', {name}={value!r} is not "
                                      f"supported (MindSpore's default {_KWARGS[name]!r} is).")
        return value

    @property
    def save_checkpoint_steps(self):
        """Steps between saves (None/0: not step based)."""
        return self._save_checkpoint_steps

    @property
    def save_checkpoint_seconds(self):
        """Seconds between saves (None when step based)."""
        return self._save_checkpoint_seconds

    @property
    def keep_checkpoint_max(self):
        """Files kept at most."""
        return self._keep_checkpoint_max

    @property
    def keep_checkpoint_per_n_minutes(self):
        """Keep one file per this many minutes (None when a maximum is used)."""
        return self._keep_checkpoint_per_n_minutes

    @property
    def integrated_save(self):
        """MindSpore's parallel-save flag."""
        return self._integrated_save

    @property
    def async_save(self):
        """Whether files are written in a background thread (as given: bool or str)."""
        return self._async_save

    @property
    def saved_network(self):
        """The network saved instead of the train network, or None."""
        return self._saved_network

    @property
    def append_dict(self):
        """The extra entries saved with the parameters (their start values), or None."""
        return self._append_dict

    @property
    def append_info(self):
        """Alias of :attr:`append_dict`."""
        return self._append_dict

    @property
    def enc_key(self):
        """The encryption key, or None."""
        return self._enc_key

    @property
    def enc_mode(self):
        """The encryption mode."""
        return self._enc_mode

    @property
    def crc_check(self):
        """Whether files get MindSpore's CRC footer."""
        return self._crc_check

    @property
    def format(self):
        """``"ckpt"`` or ``"safetensors"``."""
        return self._format

    @property
    def map_param_inc(self):
        """MindSpore's incremental MapParameter saving (always False here)."""
        return self._map_param_inc

    def get_checkpoint_policy(self):
        """The policy as a dict."""
        return {"save_checkpoint_steps": self.save_checkpoint_steps,
                "save_checkpoint_seconds": self.save_checkpoint_seconds,
                "keep_checkpoint_max": self.keep_checkpoint_max,
                "keep_checkpoint_per_n_minutes": self.keep_checkpoint_per_n_minutes,
                "saved_network": self.saved_network}
