"""MindSpore's behaviour at the edges of the training API, as cases run unchanged on
MindSpore 2.10 and on mscore.

Each ``case_*`` takes the framework's top-level module and returns a JSON-able answer;
``attempt`` turns an exception into ``{"raises": type name, "message": text}`` so the
wording is compared too. The private helpers MindSpore's own tests import are in
``private_helper_cases.py`` and join ``CASES`` here. ``make_edge_cases.py`` records MindSpore's answers into
``mindspore_edge_cases.json``; ``tests/test_edge_cases.py`` runs the cases on mscore.
"""
import copy
import tempfile

import numpy as np
import private_helper_cases


def attempt(fn):
    """``fn()``'s value, or the type and message of what it raised."""
    try:
        return fn()
    except Exception as exc:  # the type and message are the observation
        return {"raises": type(exc).__name__, "message": str(exc)}


def _summary_dir():
    return tempfile.mkdtemp(prefix="edge_summary_")


def _collector(ms, **kwargs):
    kwargs.setdefault("summary_dir", _summary_dir())
    ms.train.SummaryCollector(**kwargs)
    return "ok"


# -- SummaryCollector argument checks -------------------------------------------------------
_COLLECTOR_ARGS = {
    "summary_dir_int": {"summary_dir": 1},
    "summary_dir_empty": {"summary_dir": ""},
    "collect_freq_str": {"collect_freq": "1"},
    "collect_freq_zero": {"collect_freq": 0},
    "collect_freq_negative": {"collect_freq": -2},
    "collect_freq_bool": {"collect_freq": True},
    "collect_freq_float": {"collect_freq": 1.5},
    "specified_list": {"collect_specified_data": ["collect_metric"]},
    "specified_unknown_key": {"collect_specified_data": {"unknown_key": True}},
    "specified_int_key": {"collect_specified_data": {1: True}},
    "specified_value_int": {"collect_specified_data": {"collect_metric": 1}},
    "specified_value_none": {"collect_specified_data": {"collect_graph": None}},
    "specified_empty": {"collect_specified_data": {}},
    "histogram_regular_int": {"collect_specified_data": {"histogram_regular": 1}},
    "histogram_regular_ok": {"collect_specified_data": {"histogram_regular": "conv.*"}},
    "keep_default_int": {"keep_default_action": 1},
    "keep_default_none": {"keep_default_action": None},
    "lineage_list": {"custom_lineage_data": ["a"]},
    "lineage_int_key": {"custom_lineage_data": {1: "a"}},
    "lineage_list_value": {"custom_lineage_data": {"a": [1]}},
    "lineage_bool_value": {"custom_lineage_data": {"a": True}},
    "lineage_ok": {"custom_lineage_data": {"a": 1, "b": "x", "c": 1.5}},
    "tensor_freq_str": {"collect_tensor_freq": "1"},
    "tensor_freq_zero": {"collect_tensor_freq": 0},
    "tensor_freq_bool": {"collect_tensor_freq": True},
    "max_file_size_str": {"max_file_size": "1"},
    "max_file_size_negative": {"max_file_size": -1},
    "max_file_size_float": {"max_file_size": 1.5},
    "export_options_list": {"export_options": ["npy"]},
    "export_options_unknown_key": {"export_options": {"bad": "npy"}},
    "export_options_bad_format": {"export_options": {"tensor_format": "png"}},
    "export_options_int_key": {"export_options": {1: "npy"}},
    "export_options_int_value": {"export_options": {"tensor_format": 1}},
}


def _collector_case(kwargs):
    return lambda ms: _collector(ms, **kwargs)


# -- Accuracy.set_indexes -------------------------------------------------------------------
def _set_indexes(indexes):
    def case(ms):
        metric = ms.train.Accuracy()
        result = metric.set_indexes(indexes)
        return {"returns_self": result is metric}
    return case


# -- empty summary tags ---------------------------------------------------------------------
def _add_value(plugin, name):
    def case(ms):
        with ms.train.SummaryRecord(_summary_dir()) as record:
            record.add_value(plugin, name, ms.Tensor(np.array(1.0, np.float32)))
        return "ok"
    return case


def _record_with(**kwargs):
    def case(ms):
        ms.train.SummaryRecord(_summary_dir(), **kwargs).close()
        return "ok"
    return case


# -- load_param_into_net mismatches ---------------------------------------------------------
def _net(ms):
    return ms.nn.Dense(3, 2, weight_init="zeros", bias_init="zeros")


def _load(values, strict_load=False):
    def case(ms):
        net = _net(ms)
        params = {name: ms.Parameter(ms.Tensor(value), name=name)
                  for name, value in values.items()}
        not_loaded = ms.load_param_into_net(net, params, strict_load=strict_load)
        return {"not_loaded": sorted(not_loaded[0]) if isinstance(not_loaded, tuple)
                else sorted(not_loaded),
                "weight": np.asarray(net.weight.asnumpy(), np.float64).tolist()}
    return case


_ONES_WEIGHT = np.ones((2, 3), np.float32)


# -- copy.deepcopy of a Cell ----------------------------------------------------------------
def case_deepcopy_cell(ms):
    net = ms.nn.Dense(3, 2, weight_init="ones", bias_init="zeros")
    twin = copy.deepcopy(net)
    twin.weight.set_data(ms.Tensor(np.full((2, 3), 5.0, np.float32)))
    x = ms.Tensor(np.ones((1, 3), np.float32))
    return {"same_type": type(twin) is type(net),
            "names": [p.name for p in twin.get_parameters()],
            "original_weight_after_change": np.asarray(net.weight.asnumpy(),
                                                       np.float64).tolist(),
            "twin_output": np.asarray(twin(x).asnumpy(), np.float64).tolist(),
            "parameter_shared": twin.weight is net.weight}


# -- Model(metrics=...) ---------------------------------------------------------------------
def _model_metrics(metrics):
    def case(ms):
        net = ms.nn.Dense(3, 1)
        ms.train.Model(net, ms.nn.MSELoss(), ms.nn.SGD(net.trainable_params()),
                       metrics=metrics)
        return "ok"
    return case


# -- auto_mixed_precision on something that is not a Cell -----------------------------------
def _amp_on(level, target_kind):
    def case(ms):
        target = {"function": lambda x: x, "int": 3, "none": None}[target_kind]
        ms.amp.auto_mixed_precision(target, level)
        return "ok"
    return case


CASES = {f"summary_collector_{name}": _collector_case(kwargs)
         for name, kwargs in _COLLECTOR_ARGS.items()}
CASES.update({
    "accuracy_set_indexes_int": _set_indexes(1),
    "accuracy_set_indexes_tuple": _set_indexes((0, 1)),
    "accuracy_set_indexes_str_element": _set_indexes([0, "1"]),
    "accuracy_set_indexes_ok": _set_indexes([0, 2]),
    "summary_add_value_empty_scalar": _add_value("scalar", ""),
    "summary_add_value_empty_tensor": _add_value("tensor", ""),
    "summary_add_value_blank_scalar": _add_value("scalar", " "),
    "summary_record_export_list": _record_with(export_options=["npy"]),
    "summary_record_export_unknown_key": _record_with(export_options={"bad": "npy"}),
    "summary_record_export_bad_format": _record_with(export_options={"tensor_format": "png"}),
    "summary_record_max_file_size_str": _record_with(max_file_size="1"),
    "load_shape_mismatch": _load({"weight": np.ones((2, 4), np.float32)}),
    "load_dtype_mismatch": _load({"weight": np.ones((2, 3), np.float16)}),
    "load_dtype_int_mismatch": _load({"weight": np.ones((2, 3), np.int32)}),
    "load_ok": _load({"weight": _ONES_WEIGHT}),
    "load_strict_dtype_mismatch": _load({"weight": np.ones((2, 3), np.float16)},
                                        strict_load=True),
    "load_strict_missing": _load({"weight": _ONES_WEIGHT}, strict_load=True),
    "deepcopy_cell": case_deepcopy_cell,
    "model_metrics_empty_tuple": _model_metrics(()),
    "model_metrics_empty_list": _model_metrics([]),
    "model_metrics_list": _model_metrics(["accuracy"]),
    "model_metrics_str": _model_metrics("accuracy"),
    "model_metrics_empty_set": _model_metrics(set()),
    "amp_on_function_o2": _amp_on("O2", "function"),
    "amp_on_function_o0": _amp_on("O0", "function"),
    "amp_on_int_o2": _amp_on("O2", "int"),
    "amp_on_none_o1": _amp_on("O1", "none"),
})
CASES.update({f"private_{name}": fn for name, fn in private_helper_cases.CASES.items()})
