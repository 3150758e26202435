"""The argument checks of the summary API, worded as MindSpore words them (its tests
compare the messages)."""

__all__ = ["check_value_type", "check_positive", "check_landscape"]


def _type_name(cls):
    return "NoneType" if cls is type(None) else cls.__name__


def check_value_type(arg_name, value, valid_types):
    """TypeError unless ``value`` is an instance of one of ``valid_types`` (a bool passes
    only where ``bool`` is listed, not as an int)."""
    valid_types = tuple(valid_types)
    if isinstance(value, bool) and bool not in valid_types:
        ok = False
    else:
        ok = isinstance(value, valid_types)
    if not ok:
        names = [_type_name(t) for t in valid_types]
        raise TypeError(f"For `{arg_name}` the type should be a valid type of {names}, but "
                        f"got {type(value).__name__}.")
    return value


def check_positive(arg_name, value, owner):
    """ValueError unless ``value`` (a number) is greater than 0."""
    if value <= 0:
        raise ValueError(f"For \"{owner}\", the value of `{arg_name}` should be greater than "
                         f"0, but got `{value}`.")
    return value


def check_landscape(owner, landscape, defaults):
    """MindSpore's checks of ``collect_specified_data['collect_landscape']``, in its words
    (None or a dict of landscape_size 3..256, unit 'step'/'epoch', num_samples,
    create_landscape, intervals). mscore does not compute loss landscapes
    (docs/differences.md); ``defaults``: the landscape settings, whose keys are the allowed
    ones."""
    check_value_type("collect_landscape", landscape, [dict, type(None)])
    if not landscape:
        return
    unexpected = set(landscape) - set(defaults)
    if unexpected:
        raise ValueError(f'For "{owner}", the keys {unexpected} of `collect_landscape` are '
                         f'unsupported, expect the follow keys: {list(defaults.keys())}')
    size = landscape.get("landscape_size", 40)
    check_value_type("landscape_size", size, [int])
    if size < 3 or size > 256:
        raise ValueError(f'For "{owner}", the "landscape_size" in collect_specified_data should '
                         f'be less than 256 and more than 3, but got the: {size}')
    unit = landscape.get("unit", "step")
    check_value_type("unit", unit, [str])
    if unit not in ("step", "epoch"):
        raise ValueError(f'For "{owner}", unit in collect_specified_data should be step or '
                         f'epoch, but got the: {unit}.')
    check_value_type("num_samples", landscape.get("num_samples", 2048), [int])
    create = landscape.get("create_landscape", {"train": True, "result": True})
    check_value_type("create_landscape", create, [dict])
    for key, value in create.items():
        if key not in ("train", "result"):
            raise ValueError(f'For "{owner}", the key to create landscape should be in '
                             f'["train", "result"], but got the: {key}.')
        check_value_type(key, value, [bool])
    intervals = landscape.get("intervals")
    check_value_type("intervals", intervals, [list])
    for interval in intervals:
        check_value_type("each interval inintervals", interval, [list])
        if len(interval) < 3:
            raise ValueError(f'For "{owner}", the length of each list in "intervals" should not '
                             f'be less than three, but got the: {interval}')
        for epoch in interval:
            if not isinstance(epoch, int):
                raise TypeError(f'For "{owner}", the value of each list in "intervals" should '
                                f'be int, but got the: {type(epoch)}')
