"""Argument checks of the summary API, run unchanged on MindSpore 2.10 and on mscore.

Each ``case_*`` function takes the framework's top-level module and a fresh empty directory
and returns ``{step: outcome}``, where an outcome is a short value or
``"raises:<ExceptionType>"``. ``make_summary_api.py`` records MindSpore's answers into
``mindspore_summary_api.json``; ``tests/test_summary_api.py`` compares mscore's.
"""
import os

import numpy as np
from cell_api_cases import attempt


def _record(ms, directory, **kwargs):
    def make():
        with ms.train.summary.SummaryRecord(directory, **kwargs):
            return "ok"
    return attempt(make)


def case_summary_record_init(ms, tmp):
    afile = os.path.join(tmp, "a_file")
    with open(afile, "w") as f:
        f.write("x")
    return {
        "defaults": _record(ms, tmp),
        "positional_num_process": attempt(
            lambda: _close(ms.train.summary.SummaryRecord(tmp, "events", "_MS", 4, None, None, False, None))),
        "log_dir_int": _record(ms, 3),
        "log_dir_blank": _record(ms, "  "),
        "log_dir_file": _record(ms, afile),
        "prefix_int": _record(ms, tmp, file_prefix=1),
        "prefix_space": _record(ms, tmp, file_prefix="a b"),
        "prefix_empty": _record(ms, tmp, file_prefix=""),
        "prefix_dash": _record(ms, tmp, file_prefix="a-b"),
        "prefix_dot": _record(ms, tmp, file_prefix="a.b"),
        "suffix_int": _record(ms, tmp, file_suffix=None),
        "suffix_slash": _record(ms, tmp, file_suffix="_a/b"),
        "max_file_size_str": _record(ms, tmp, max_file_size="1"),
        "max_file_size_float": _record(ms, tmp, max_file_size=1.5),
        "max_file_size_negative": _record(ms, tmp, max_file_size=-1),
        "max_file_size_zero": _record(ms, tmp, max_file_size=0),
        "max_file_size_bool": _record(ms, tmp, max_file_size=True),
        "raise_exception_str": _record(ms, tmp, raise_exception="yes"),
        "raise_exception_true": _record(ms, tmp, raise_exception=True),
        "network_not_cell": _record(ms, tmp, network=3),
    }


def _close(record):
    record.close()
    return "ok"


def case_export_options(ms, tmp):
    out = {}
    for label, options in (("none", None), ("npy", {"tensor_format": "npy"}),
                           ("format_none", {"tensor_format": None}),
                           ("list", ["tensor_format"]), ("bad_key", {"image_format": "npy"}),
                           ("bad_format", {"tensor_format": "csv"}),
                           ("int_key", {1: "npy"}), ("int_format", {"tensor_format": 1}),
                           ("empty", {})):
        out[label] = _record(ms, tmp, export_options=options)
        out["collector_" + label] = attempt(
            lambda options=options: ms.train.SummaryCollector(tmp, export_options=options)
            and "ok")
    return out


def case_export_npy_files(ms, tmp):
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    with ms.train.summary.SummaryRecord(tmp, export_options={"tensor_format": "npy"}) as record:
        record.add_value("tensor", "w/a b", ms.Tensor(value))
        record.add_value("histogram", "h", ms.Tensor(value))
        record.record(3)
        record.add_value("tensor", "w/a b", ms.Tensor(value * 2))
        record.record(4)
    found = {}
    for root, _, files in os.walk(tmp):
        for name in files:
            if name.endswith(".npy"):
                rel = os.path.relpath(os.path.join(root, name), tmp).split(os.sep)
                rel[0] = rel[0].split("_")[0]     # export_<seconds>
                found["/".join(rel)] = np.load(os.path.join(root, name)).tolist()
    return found


def case_add_value(ms, tmp):
    t1 = ms.Tensor(np.ones(1, np.float32))
    out = {}
    with ms.train.summary.SummaryRecord(tmp) as record:
        cases = {
            "bad_plugin": ("text", "n", t1), "name_empty": ("scalar", "", t1),
            "name_int": ("scalar", 3, t1), "name_none": ("scalar", None, t1),
            "value_numpy": ("scalar", "n", np.ones(1, np.float32)),
            "value_float": ("scalar", "n", 1.0),
            "scalar_0d": ("scalar", "n", ms.Tensor(1.0)),
            "scalar_1x1": ("scalar", "n", ms.Tensor(np.ones((1, 1), np.float32))),
            "scalar_two": ("scalar", "n", ms.Tensor(np.ones(2, np.float32))),
            "image_3d": ("image", "n", ms.Tensor(np.ones((3, 2, 2), np.float32))),
            "image_4d": ("image", "n", ms.Tensor(np.ones((1, 3, 2, 2), np.float32))),
            "histogram_0d": ("histogram", "n", ms.Tensor(1.0)),
            "histogram_1d": ("histogram", "n", t1),
            "tensor_0d": ("tensor", "n", ms.Tensor(1.0)),
            "tensor_int": ("tensor", "n", ms.Tensor(np.ones(2, np.int32))),
        }
        for label, (plugin, name, value) in cases.items():
            out[label] = attempt(lambda plugin=plugin, name=name, value=value:
                                 record.add_value(plugin, name, value) or "ok")
        out["set_mode_bad"] = attempt(lambda: record.set_mode("test"))
        out["set_mode_eval"] = attempt(lambda: record.set_mode("eval") or "ok")
        out["record_str"] = attempt(lambda: record.record("1"))
        out["record_float"] = attempt(lambda: record.record(1.0))
        out["record_bool"] = attempt(lambda: record.record(True))
        out["record_net_int"] = attempt(lambda: record.record(1, train_network=3))
        out["record_ok"] = attempt(lambda: record.record(2))
    out["record_closed"] = attempt(lambda: record.record(3))
    out["enter_closed"] = attempt(lambda: record.__enter__() and "ok")
    out["flush_closed"] = attempt(lambda: record.flush() or "ok")
    out["close_again"] = attempt(lambda: record.close() or "ok")
    return out


def _op_net(ms, op, name, value):
    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.op = op

        def construct(self, x):
            self.op(name, value)
            return x

    return Net()


def case_summary_operators(ms, tmp):
    x = ms.Tensor(np.ones(2, np.float32))
    values = {"empty_name": ("", ms.Tensor(1.0)), "int_name": (1, ms.Tensor(1.0)),
              "float_value": ("t", 1.0), "numpy_value": ("t", np.ones(2)),
              "scalar": ("t", ms.Tensor(1.0)), "vector": ("t", ms.Tensor(np.ones(2, np.float32))),
              "one_by_one": ("t", ms.Tensor(np.ones((1, 1), np.float32))),
              "image": ("t", ms.Tensor(np.ones((1, 3, 2, 2), np.float32)))}
    out = {}
    for op_name in ("ScalarSummary", "ImageSummary", "HistogramSummary", "TensorSummary"):
        for label, (name, value) in values.items():
            op = getattr(ms.ops, op_name)()
            net = _op_net(ms, op, name, value)

            def run(net=net):
                with ms.train.summary.SummaryRecord(tmp) as record:
                    net(x)
                    return record.record(1)
            out[f"{op_name}/{label}"] = attempt(run)
    return out


def case_summary_collector_init(ms, tmp):
    def make(**kwargs):
        return attempt(lambda: ms.train.SummaryCollector(kwargs.pop("summary_dir", tmp), **kwargs)
                       and "ok")

    landscape = {"landscape_size": 40, "unit": "step", "num_samples": 2048,
                 "create_landscape": {"train": True, "result": True},
                 "intervals": [[1, 2, 3]]}
    return {
        "defaults": make(),
        "positional": attempt(lambda: ms.train.SummaryCollector(tmp, 2, 4, None, True) and "ok"),
        "dir_int": make(summary_dir=1),
        "dir_blank": make(summary_dir=" "),
        "freq_str": make(collect_freq="1"),
        "freq_zero": make(collect_freq=0),
        "freq_bool": make(collect_freq=True),
        "freq_float": make(collect_freq=2.0),
        "tensor_freq_zero": make(collect_tensor_freq=0),
        "tensor_freq_str": make(collect_tensor_freq="2"),
        "tensor_freq_ok": make(collect_tensor_freq=3),
        "max_size_zero": make(max_file_size=0),
        "max_size_negative": make(max_file_size=-5),
        "max_size_str": make(max_file_size="5"),
        "max_size_ok": make(max_file_size=1024),
        "keep_default_int": make(keep_default_action=1),
        "keep_default_none": make(keep_default_action=None),
        "specified_list": make(collect_specified_data=["collect_metric"]),
        "specified_int_key": make(collect_specified_data={1: True}),
        "specified_bad_key": make(collect_specified_data={"collect_loss": True}),
        "specified_int_value": make(collect_specified_data={"collect_metric": 1}),
        "specified_regular_int": make(collect_specified_data={"histogram_regular": 1}),
        "specified_regular_bad": make(collect_specified_data={"histogram_regular": "("}),
        "specified_regular_ok": make(collect_specified_data={"histogram_regular": "^conv"}),
        "specified_no_default": make(collect_specified_data={"collect_metric": False},
                                     keep_default_action=False),
        "landscape_none": make(collect_specified_data={"collect_landscape": None}),
        "landscape_empty": make(collect_specified_data={"collect_landscape": {}}),
        "landscape_list": make(collect_specified_data={"collect_landscape": [1]}),
        "landscape_bad_key": make(collect_specified_data={"collect_landscape": {"size": 3}}),
        "landscape_size_small": make(collect_specified_data={
            "collect_landscape": dict(landscape, landscape_size=2)}),
        "landscape_unit_bad": make(collect_specified_data={
            "collect_landscape": dict(landscape, unit="day")}),
        "landscape_samples_str": make(collect_specified_data={
            "collect_landscape": dict(landscape, num_samples="1")}),
        "landscape_create_bad": make(collect_specified_data={
            "collect_landscape": dict(landscape, create_landscape={"eval": True})}),
        "landscape_intervals_short": make(collect_specified_data={
            "collect_landscape": dict(landscape, intervals=[[1, 2]])}),
        "landscape_intervals_float": make(collect_specified_data={
            "collect_landscape": dict(landscape, intervals=[[1, 2, 3.0]])}),
        "lineage_list": make(custom_lineage_data=[1]),
        "lineage_int_key": make(custom_lineage_data={1: 1}),
        "lineage_list_value": make(custom_lineage_data={"a": [1]}),
        "lineage_bool_value": make(custom_lineage_data={"a": True}),
        "lineage_none_value": make(custom_lineage_data={"a": None}),
        "lineage_ok": make(custom_lineage_data={"a": 1, "b": "x", "c": 0.5}),
    }


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}
