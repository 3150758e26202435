"""The SummaryCollector argument cases recorded by ``make_training_api_oracle.py`` and checked
by ``tests/test_training_api_oracle.py`` (one table for both)."""

LANDSCAPE = {"landscape_size": 40, "unit": "step", "num_samples": 2048,
              "create_landscape": {"train": True, "result": True}, "intervals": [[1, 2, 3]]}
COLLECTOR_CASES = {
    "landscape_list": {"collect_landscape": [1]},
    "landscape_bad_key": {"collect_landscape": {"size": 3}},
    "landscape_size_small": {"collect_landscape": dict(LANDSCAPE, landscape_size=2)},
    "landscape_size_str": {"collect_landscape": dict(LANDSCAPE, landscape_size="2")},
    "landscape_unit_bad": {"collect_landscape": dict(LANDSCAPE, unit="day")},
    "landscape_unit_int": {"collect_landscape": dict(LANDSCAPE, unit=1)},
    "landscape_samples_str": {"collect_landscape": dict(LANDSCAPE, num_samples="1")},
    "landscape_create_list": {"collect_landscape": dict(LANDSCAPE, create_landscape=[1])},
    "landscape_create_bad": {"collect_landscape": dict(LANDSCAPE,
                                                       create_landscape={"eval": True})},
    "landscape_create_int": {"collect_landscape": dict(LANDSCAPE,
                                                       create_landscape={"train": 1})},
    "landscape_intervals_dict": {"collect_landscape": dict(LANDSCAPE, intervals={})},
    "landscape_intervals_inner": {"collect_landscape": dict(LANDSCAPE, intervals=[(1, 2, 3)])},
    "landscape_intervals_short": {"collect_landscape": dict(LANDSCAPE, intervals=[[1, 2]])},
    "landscape_intervals_float": {"collect_landscape": dict(LANDSCAPE,
                                                            intervals=[[1, 2, 3.0]])},
    "regular_star": {"histogram_regular": "*"},
    "regular_paren": {"histogram_regular": "("},
    "regular_int": {"histogram_regular": 1},
    "metric_none": {"collect_metric": None},
}
