"""The private helpers MindSpore's own tests import, as cases run unchanged on MindSpore 2.10
and on mscore (``_CheckpointManager``, ``_chg_ckpt_file_name_if_same_exist``,
``_InternalCallbackParam``, ``_CallbackManager``, summary enums and adapters,
``initializer._assignment``), and the 1.x callback names of the built-in callbacks.

``make_edge_cases.py`` records MindSpore's answers (with the cases of ``edge_cases.py``)
into ``mindspore_edge_cases.json``; ``tests/test_edge_cases.py`` runs them on mscore.
"""
import contextlib
import importlib
import io
import os
import tempfile

import numpy as np

_CKPT_FILES = ["net-1_1.ckpt", "net-1_2.ckpt", "net-2_1.ckpt", "net_3-2_2.ckpt",
               "network-1_1.ckpt", "net_x-1_1.ckpt", "net-1_1_breakpoint.ckpt",
               "net-best.ckpt", "net-3_1.safetensors", "notes.txt", "net_7-1_1_breakpoint.ckpt"]


def _module(ms, path):
    return importlib.import_module(f"{ms.__name__}.{path}")


def _folder(files, mtimes=None):
    folder = tempfile.mkdtemp(prefix="ckpt_files_")
    for i, name in enumerate(files):
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(b"x")
        stamp = (mtimes or {}).get(name, 1_000_000 + i)
        os.utime(path, (stamp, stamp))
    return folder


def case_chg_ckpt_file_name(ms):
    chg = _module(ms, "train.callback._checkpoint")._chg_ckpt_file_name_if_same_exist
    folder = _folder(_CKPT_FILES)
    return {f"{prefix}|{exception}": chg(folder, prefix, exception)
            for prefix in ("net", "network", "net_3", "net_x", "other", "ne")
            for exception in (False, True)}


def case_chg_ckpt_file_name_callable(ms):
    chg = _module(ms, "train.callback._checkpoint")._chg_ckpt_file_name_if_same_exist
    folder = _folder(_CKPT_FILES)
    return [chg(folder, "net") == "net_4", chg(lambda p: folder, "net"),
            callable(chg(folder, lambda p: "net"))]


def case_checkpoint_manager(ms):
    manager_cls = ms.train.callback._CheckpointManager
    mtimes = {"net-1_1.ckpt": 2_000_000, "net-1_2.ckpt": 1_000_000, "net-2_1.ckpt": 3_000_000}
    folder = _folder(_CKPT_FILES, mtimes)
    manager = manager_cls()
    out = {"empty": manager.ckpoint_num}
    manager.update_ckpoint_filelist(folder, "net")
    out["found"] = sorted(os.path.basename(p) for p in manager.ckpoint_filelist)
    out["num"] = manager.ckpoint_num
    manager.remove_oldest_ckpoint_file()
    out["after_remove_oldest"] = sorted(os.path.basename(p) for p in manager.ckpoint_filelist)
    out["on_disk"] = sorted(os.listdir(folder))
    manager.remove_ckpoint_file(os.path.join(folder, "missing.ckpt"))   # logged, not raised
    manager.update_ckpoint_filelist(folder, "net_3")
    out["found_net_3"] = sorted(os.path.basename(p) for p in manager.ckpoint_filelist)
    safetensors = manager_cls(format="safetensors")
    safetensors.update_ckpoint_filelist(folder, "net")
    out["found_safetensors"] = sorted(os.path.basename(p) for p in safetensors.ckpoint_filelist)
    return out


def case_checkpoint_manager_per_minutes(ms):
    manager = ms.train.callback._CheckpointManager()
    now = 5_000_000
    mtimes = {"net-1_1.ckpt": now - 600, "net-1_2.ckpt": now - 100, "net-2_1.ckpt": now - 50,
              "net-3_1.ckpt": now - 10}
    folder = _folder(list(mtimes), mtimes)
    manager.update_ckpoint_filelist(folder, "net")
    manager.keep_one_ckpoint_per_minutes(3, now)
    return {"kept": sorted(os.listdir(folder)),
            "list": sorted(os.path.basename(p) for p in manager.ckpoint_filelist)}


def case_internal_callback_param(ms):
    params = ms.train.callback._InternalCallbackParam()
    params.cur_step_num = 3
    params["epoch_num"] = 2
    return {"attr": params["cur_step_num"], "item": params.epoch_num,
            "is_dict": isinstance(params, dict), "keys": sorted(params)}


class _Recorder:
    """Builds a Callback subclass of ``ms`` that logs the names it is called by."""

    @staticmethod
    def make(ms, tag, log):
        class Recorder(ms.train.Callback):
            def begin(self, run_context):
                log.append(f"{tag}.begin")

            def step_end(self, run_context):
                log.append(f"{tag}.step_end:{run_context.original_args().cur_step_num}")

            def on_train_epoch_end(self, run_context):
                log.append(f"{tag}.on_train_epoch_end")
        return Recorder()


def case_callback_manager(ms):
    manager_cls = ms.train.callback._CallbackManager
    log = []
    manager = manager_cls([_Recorder.make(ms, "a", log), _Recorder.make(ms, "b", log)])
    run = ms.train.RunContext(ms.train.callback._InternalCallbackParam(cur_step_num=4))
    with manager:
        manager.on_train_begin(run)
        manager.step_end(run)
        manager.on_train_step_end(run)
        manager.on_train_epoch_end(run)
        manager.epoch_end(run)
    return log


def case_callback_manager_bad_element(ms):
    ms.train.callback._CallbackManager([1])
    return "ok"


def case_callback_manager_bad_type(ms):
    ms.train.callback._CallbackManager(1)
    return "ok"


def case_callback_manager_none(ms):
    manager = ms.train.callback._CallbackManager(None)
    with manager:
        manager.on_train_begin(ms.train.RunContext({}))
    return "ok"


def _train(ms, callbacks, epochs=2, steps=3):
    net = ms.nn.Dense(3, 1, weight_init="ones", bias_init="zeros")
    model = ms.train.Model(net, ms.nn.MSELoss(), ms.nn.SGD(net.trainable_params(), 0.01))
    x = np.arange(steps * 2 * 3, dtype=np.float32).reshape(steps * 2, 3) / 10
    y = np.ones((steps * 2, 1), np.float32)
    data = ms.dataset.NumpySlicesDataset((x, y), column_names=["x", "y"],
                                         shuffle=False).batch(2)
    model.train(epochs, data, callbacks=callbacks, dataset_sink_mode=False)


def case_legacy_names_of_builtin_callbacks(ms):
    log = []

    class CountingCheckpoint(ms.train.ModelCheckpoint):
        def step_end(self, run_context):
            log.append(f"ckpt.step_end:{run_context.original_args().cur_step_num}")
            super().step_end(run_context)

        def end(self, run_context):
            log.append("ckpt.end")
            super().end(run_context)

    class QuietLossMonitor(ms.train.LossMonitor):
        def step_end(self, run_context):
            log.append(f"loss.step_end:{run_context.original_args().cur_step_num}")
            super().step_end(run_context)

    folder = tempfile.mkdtemp(prefix="legacy_names_")
    config = ms.train.CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=2)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        _train(ms, [CountingCheckpoint(prefix="net", directory=folder, config=config),
                    QuietLossMonitor(per_print_times=2)])
    lines = [line.split(",")[0] for line in printed.getvalue().splitlines()
             if line.startswith("epoch")]
    return {"log": log, "files": sorted(os.listdir(folder)), "loss_lines": lines}


def case_legacy_method_names_defined(ms):
    names = ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end")
    out = {}
    for cls_name in ("ModelCheckpoint", "LossMonitor", "TimeMonitor", "History",
                     "LearningRateScheduler", "SummaryCollector"):
        cls = getattr(ms.train, cls_name)
        out[cls_name] = [n for n in names if getattr(cls, n) is not getattr(ms.train.Callback, n)]
    return out


def case_cache_summary_tensor_data(ms):
    cache = _module(ms, "train.summary.summary_record")._cache_summary_tensor_data
    return cache([{"name": "loss[:Scalar]", "data": ms.Tensor(np.array(2.5, np.float32))}])


def case_default_export_options(ms):
    options = _module(ms, "train.summary.summary_record")._DEFAULT_EXPORT_OPTIONS
    return {key: sorted(map(str, values)) for key, values in options.items()}


def case_summary_enums(ms):
    enums = _module(ms, "train.summary.enums")
    return {"plugins": enums.PluginEnum.to_list(), "modes": enums.ModeEnum.to_list(),
            "writers": [m.value for m in enums.WriterPluginEnum],
            "scalar": enums.PluginEnum.SCALAR.value,
            "base": issubclass(enums.PluginEnum, enums.BaseEnum)}


def case_histogram_bins(ms):
    bins = _module(ms, "train.summary._summary_adapter")._calc_histogram_bins
    return [bins(n) for n in (0, 1, 5, 6, 10, 11, 99, 100, 879, 880, 881, 100000)]


def case_initializer_assignment(ms):
    assign = _module(ms, "common.initializer")._assignment
    scalar = assign(np.zeros((), np.float32), 3)
    matrix = assign(np.zeros((2, 2), np.float32), np.array([[1, 2], [3, 4]]))
    filled = assign(np.zeros((3,), np.int32), 7)
    return {"scalar": [scalar.shape == (), float(scalar)], "matrix": matrix.tolist(),
            "filled": filled.tolist(), "dtype": str(matrix.dtype)}




def case_initializers_follow_numpy_seed(ms):
    init = _module(ms, "common.initializer")

    def draw():
        return init.initializer(init.Normal(), [4], ms.float32).init_data().asnumpy()

    def dense_weight():
        return ms.nn.Dense(3, 2).weight.asnumpy()

    np.random.seed(5)
    first = draw()
    after = np.random.rand()
    np.random.seed(5)
    again = draw()
    np.random.seed(6)
    other = draw()
    np.random.seed(5)
    fresh = np.random.rand()
    np.random.seed(9)
    weight = dense_weight()
    np.random.seed(9)
    weight_again = dense_weight()
    ms.set_seed(3)
    seeded = np.random.rand()
    np.random.seed(3)
    return {"same_seed_same_values": bool(np.array_equal(first, again)),
            "other_seed_other_values": not np.array_equal(first, other),
            "draw_consumes_numpy_state": after != fresh,
            "layer_weights_repeat": bool(np.array_equal(weight, weight_again)),
            "set_seed_seeds_numpy": seeded == np.random.rand()}


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}
