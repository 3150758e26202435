"""The argument checks of the summary API, worded as MindSpore words them (its tests
compare the messages)."""

__all__ = ["check_value_type", "check_positive"]


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
