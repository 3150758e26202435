"""Training: Model, callbacks, metrics, serialization, summaries.

Names load from their submodules on first use, so importing one piece does not import all.
"""
import importlib

_SUBMODULES = {
    "Model": "mscore.train.model",
    "DatasetHelper": "mscore.train.dataset_helper",
    "connect_network_with_dataset": "mscore.train.dataset_helper",
    "save_checkpoint": "mscore.train.serialization",
    "load_checkpoint": "mscore.train.serialization",
    "load_checkpoint_async": "mscore.train.serialization",
    "async_ckpt_thread_status": "mscore.train.serialization",
    "ckpt_to_safetensors": "mscore.train.serialization",
    "safetensors_to_ckpt": "mscore.train.serialization",
    "load_param_into_net": "mscore.train.serialization",
    "merge_sliced_parameter": "mscore.train.serialization",
    "build_searched_strategy": "mscore.train.serialization",
    "parse_print": "mscore.train.serialization",
    "load_distributed_checkpoint": "mscore.train.serialization",
    "transform_checkpoints": "mscore.train.serialization",
    "export": "mscore.train.serialization",
    "load": "mscore.train.serialization",
    "SummaryRecord": "mscore.train.summary",
    "SummaryCollector": "mscore.train.summary",
    "LossScaleManager": "mscore.amp",
    "FixedLossScaleManager": "mscore.amp",
    "DynamicLossScaleManager": "mscore.amp",
    "build_train_network": "mscore.amp",
    "data_sink": "mscore.train._data_sink",
}
_CALLBACKS = ("Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint",
              "CheckpointConfig", "EarlyStopping", "ReduceLROnPlateau", "LambdaCallback",
              "History", "ProgressBar", "BackupAndRestore", "OnRequestExit",
              "LearningRateScheduler")
_METRICS = ("Metric", "rearrange_inputs", "Accuracy", "Loss", "Precision", "Recall", "Fbeta",
            "F1", "MAE", "MSE", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy",
            "Top5CategoricalAccuracy", "ConfusionMatrix", "ConfusionMatrixMetric", "ROC", "auc",
            "BleuScore", "CosineSimilarity", "Dice", "HausdorffDistance", "MeanSurfaceDistance",
            "RootMeanSquareDistance", "OcclusionSensitivity", "Perplexity", "get_metric_fn",
            "names")


def __getattr__(name):
    if name in _SUBMODULES:
        return getattr(importlib.import_module(_SUBMODULES[name]), name)
    if name in _CALLBACKS:
        return getattr(importlib.import_module("mscore.train.callback"), name)
    if name in _METRICS:
        return getattr(importlib.import_module("mscore.train.metrics"), name)
    if name in ("callback", "metrics", "serialization", "summary", "model", "amp",
                "loss_scale_manager", "dataset_helper", "quant"):
        return importlib.import_module(f"mscore.train.{name}")
    # Callbacks and metrics added to their packages later are reachable here too.
    for package in ("mscore.train.callback", "mscore.train.metrics"):
        module = importlib.import_module(package)
        if name in getattr(module, "__all__", ()):
            return getattr(module, name)
    raise AttributeError(f"module 'mscore.train' has no attribute {name!r}")
