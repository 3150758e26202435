"""Cell and container behaviour cases run unchanged on MindSpore 2.10 and on mscore.

Each ``case_*`` function takes the framework's top-level module (``mindspore`` or ``mscore``)
and returns a JSON-able summary of what happened; :func:`attempt` turns a step that raises
into ``"raises:<ExceptionType>"``. ``make_cell_api.py`` records MindSpore's answers into
``mindspore_cell_api.json``; ``tests/test_cell_api.py`` runs the same cases on mscore and
compares. The cases use only the public API both frameworks share.
"""
import numpy as np

# The recorder writes the exception's own type name. The tests set this to True: they write
# every built-in exception type the error is an instance of ("raises:TypeError|AttributeError"),
# and an expected type matches when it is one of them (mscore raises a clear error that is also
# an instance of the type MindSpore happens to raise).
ALL_BUILTIN_BASES = False


def attempt(fn):
    """``fn()``'s value, or ``"raises:<type>"`` when it raises."""
    try:
        return fn()
    except Exception as exc:  # the type is the observation
        if not ALL_BUILTIN_BASES:
            return f"raises:{type(exc).__name__}"
        names = [c.__name__ for c in type(exc).__mro__
                 if c.__module__ == "builtins" and c not in (Exception, BaseException, object)]
        return "raises:" + "|".join(names)


def arr(t):
    """A Tensor's values as nested lists of floats (None stays None)."""
    if t is None:
        return None
    return np.asarray(t.asnumpy(), np.float64).round(5).tolist()


def pnames(cell):
    return [p.name for p in cell.get_parameters()]


def _dense(ms, n_in=2, n_out=2):
    return ms.nn.Dense(n_in, n_out, weight_init="ones", bias_init="zeros")


def _block(ms):
    nn = ms.nn

    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = _dense(ms)
            self.scale = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="custom")
            self.buf = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), requires_grad=False)

        def construct(self, x):
            return self.fc(x) * self.scale + self.buf

    return Block


# -- traversal ---------------------------------------------------------------------------------
def case_traversal(ms):
    nn = ms.nn
    Block = _block(ms)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.act = nn.ReLU()
            self.shared = self.act
            self.empty = None
            self.head = nn.SequentialCell([_dense(ms), nn.ReLU()])

        def construct(self, x):
            return self.head(self.act(self.block(x)))

    net = Net()
    return {
        "cells_and_names": [n for n, _ in net.cells_and_names()],
        "cells_and_names_prefix": [n for n, _ in net.cells_and_names(name_prefix="top")],
        "name_cells": list(net.name_cells()),
        "cells": len(net.cells()),
        "parameters_and_names": [n for n, _ in net.parameters_and_names()],
        "parameters_and_names_prefix": [n for n, _ in net.parameters_and_names("p")],
        "parameters_and_names_noexpand": [n for n, _ in net.block.parameters_and_names(
            expand=False)],
        "parameters_dict": list(net.parameters_dict()),
        "parameters_dict_norecurse": list(net.block.parameters_dict(recurse=False)),
        "param_names": pnames(net),
        "trainable": [p.name for p in net.trainable_params()],
        "untrainable": [p.name for p in net.untrainable_params()],
        "untrainable_norecurse": [p.name for p in net.untrainable_params(recurse=False)],
        "trainable_norecurse": [p.name for p in net.trainable_params(recurse=False)],
        "get_parameters_is_list": isinstance(net.get_parameters(), list),
        "empty_attr": net.empty,
    }


def case_update_parameters_name(ms):
    Block = _block(ms)
    b = Block()
    before = pnames(b)
    b.update_parameters_name("pre.")
    after = pnames(b)
    b.update_parameters_name("again.")
    again = pnames(b)
    b.update_parameters_name("x.", recurse=False)
    norecurse = pnames(b)
    return {"before": before, "after": after, "again": again, "norecurse": norecurse,
            "int_prefix": attempt(lambda: b.update_parameters_name(3)),
            "none_prefix": attempt(lambda: b.update_parameters_name(None) or pnames(b)),
            "bad_chars": attempt(lambda: b.update_parameters_name("a b") or pnames(b))}


def case_flags(ms):
    nn = ms.nn
    net = nn.SequentialCell([nn.ReLU(), nn.ReLU()])
    first = dict(net.get_flags())
    ret = net.add_flags(foo=True, bar=3)
    flags = dict(net.get_flags())
    net.add_flags_recursive(deep=1)
    return {"first": first, "returns_self": ret is net, "flags": flags,
            "attr": net.foo, "child_flags": dict(net[0].get_flags()),
            "child_attr": net[1].deep}


# -- attribute rules -------------------------------------------------------------------------
def case_setattr_parameter(ms):
    nn = ms.nn
    net = nn.Cell()
    p = ms.Parameter(ms.Tensor(np.ones(2, np.float32)))
    net.w = p
    out = {"auto_name": p.name, "in_dict": list(net.parameters_dict())}
    net.w = ms.Tensor(np.full(2, 3.0, np.float32))
    out["tensor_assign_keeps_param"] = net.w is p
    out["tensor_assign_value"] = arr(net.w)
    out["assign_int"] = attempt(lambda: setattr(net, "w", 5))
    out["assign_ndarray"] = attempt(lambda: setattr(net, "w", np.ones(2, np.float32)))
    net.w = None
    out["after_none"] = net.w
    out["params_after_none"] = list(net.parameters_dict())
    net.w = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="named")
    out["reassign_param"] = pnames(net)
    net.x = 1
    net.x = ms.Parameter(ms.Tensor(np.ones(1, np.float32)))
    out["plain_then_param"] = pnames(net)
    net.sub = nn.ReLU()
    out["param_over_cell"] = attempt(
        lambda: setattr(net, "sub", ms.Parameter(ms.Tensor(np.ones(1, np.float32)))))
    out["named_param_keeps_name"] = attempt(lambda: _named_param(ms))
    return out


def _named_param(ms):
    net = ms.nn.Cell()
    net.w = ms.Parameter(ms.Tensor(np.ones(1, np.float32)), name="given")
    return pnames(net)


def case_setattr_cell(ms):
    nn = ms.nn
    net = nn.Cell()
    net.sub = nn.ReLU()
    out = {"cells": list(net.name_cells())}
    out["assign_int"] = attempt(lambda: setattr(net, "sub", 3))
    out["assign_tensor"] = attempt(lambda: setattr(net, "sub", ms.Tensor(1.0)))
    net.sub = None
    out["after_none"] = net.sub
    out["cells_after_none"] = list(net.name_cells())
    out["walk_after_none"] = [n for n, _ in net.cells_and_names()]
    net.sub = _dense(ms)
    out["param_names_after_cell"] = pnames(net)
    net.p = ms.Parameter(ms.Tensor(np.ones(1, np.float32)))
    out["cell_over_param"] = attempt(lambda: setattr(net, "p", nn.ReLU()))
    net.plain = 3
    net.plain = nn.ReLU()
    out["plain_then_cell"] = list(net.name_cells())
    return out


def case_delattr(ms):
    nn = ms.nn
    net = nn.Cell()
    net.w = ms.Parameter(ms.Tensor(np.ones(1, np.float32)))
    net.sub = _dense(ms)
    net.plain = 1
    del net.w
    del net.sub
    del net.plain
    return {"params": pnames(net), "cells": list(net.name_cells()),
            "get_deleted_param": attempt(lambda: net.w),
            "get_deleted_cell": attempt(lambda: net.sub),
            "get_deleted_plain": attempt(lambda: net.plain),
            "delete_missing": attempt(lambda: delattr(net, "missing"))}


def case_auto_prefix(ms):
    nn = ms.nn
    Block = _block(ms)

    class Outer(nn.Cell):
        def __init__(self, auto_prefix):
            super().__init__(auto_prefix=auto_prefix)
            self.inner = Block()

        def construct(self, x):
            return self.inner(x)

    return {"on": pnames(Outer(True)), "off": pnames(Outer(False))}


def case_insert_child(ms):
    nn = ms.nn

    def fresh():
        net = nn.Cell()
        net.plain = 1
        net.sub = nn.ReLU()
        return net

    net = fresh()
    net.insert_child_to_cell("new", _dense(ms))
    return {
        "ok": list(net.name_cells()),
        "param_names": pnames(net),
        "replace": attempt(lambda: fresh().insert_child_to_cell("sub", nn.Tanh()) or "ok"),
        "none_cell": attempt(lambda: fresh().insert_child_to_cell("n", None) or "ok"),
        "int_name": attempt(lambda: fresh().insert_child_to_cell(1, nn.ReLU())),
        "empty_name": attempt(lambda: fresh().insert_child_to_cell("", nn.ReLU())),
        "dot_name": attempt(lambda: fresh().insert_child_to_cell("a.b", nn.ReLU())),
        "existing_attr": attempt(lambda: fresh().insert_child_to_cell("plain", nn.ReLU())),
        "not_cell": attempt(lambda: fresh().insert_child_to_cell("c", object())),
    }


def case_insert_param(ms):
    nn = ms.nn

    def p():
        return ms.Parameter(ms.Tensor(np.ones(1, np.float32)))

    def fresh():
        net = nn.Cell()
        net.plain = 1
        return net

    net = fresh()
    net.insert_param_to_cell("w", p())
    return {
        "ok": pnames(net),
        "none_param": attempt(lambda: fresh().insert_param_to_cell("n", None) or "ok"),
        "empty_name": attempt(lambda: fresh().insert_param_to_cell("", p())),
        "dot_name": attempt(lambda: fresh().insert_param_to_cell("a.b", p())),
        "dot_name_allowed": attempt(lambda: _insert_dot(fresh(), p())),
        "existing_attr": attempt(lambda: fresh().insert_param_to_cell("plain", p())),
        "not_param": attempt(lambda: fresh().insert_param_to_cell("t", ms.Tensor(1.0))),
    }


def _insert_dot(net, param):
    net.insert_param_to_cell("a.b", param, check_name_contain_dot=False)
    return pnames(net)


def case_no_super_init(ms):
    nn = ms.nn
    x = ms.Tensor(np.ones((1, 2), np.float32))

    class AssignsCell(nn.Cell):
        def __init__(self):  # pylint: disable=super-init-not-called
            self.fc = _dense(ms)

    class AssignsParam(nn.Cell):
        def __init__(self):  # pylint: disable=super-init-not-called
            self.w = ms.Parameter(ms.Tensor(np.ones(2, np.float32)))

    class AssignsPlain(nn.Cell):
        def __init__(self):  # pylint: disable=super-init-not-called
            self.k = 2

        def construct(self, x):
            return x * self.k

    class NoInit(nn.Cell):
        def __init__(self):  # pylint: disable=super-init-not-called
            pass

        def construct(self, x):
            return x

    return {
        "assign_cell": attempt(lambda: AssignsCell() and "built"),
        "assign_param": attempt(lambda: AssignsParam() and "built"),
        "assign_plain": attempt(lambda: AssignsPlain() and "built"),
        "call_plain": attempt(lambda: arr(AssignsPlain()(x))),
        "call_noinit": attempt(lambda: arr(NoInit()(x))),
        "params_noinit": attempt(lambda: NoInit().trainable_params()),
        "cells_noinit": attempt(lambda: list(NoInit().cells_and_names())),
        "set_train_noinit": attempt(lambda: NoInit().set_train() and "ok"),
        "missing_attr_noinit": attempt(lambda: NoInit().something),
    }


def case_init_parameters_data(ms):
    Block = _block(ms)
    b = Block()
    before = list(b.get_parameters())
    replaced = b.init_parameters_data()
    return {"type": type(replaced).__name__, "count": len(replaced),
            "same_objects": [replaced[p] is p for p in before],
            "params_after": [p is q for p, q in zip(before, b.get_parameters())]}


def case_recompute(ms):
    nn = ms.nn
    net = _dense(ms)
    x = ms.Tensor(np.ones((1, 2), np.float32))
    return {"plain": attempt(lambda: net.recompute()),
            "output_recompute": attempt(lambda: _dense(ms).recompute(output_recompute=True)),
            "known_kwarg": attempt(lambda: _dense(ms).recompute(mp_comm_recompute=True)),
            "unknown_kwarg": attempt(lambda: _dense(ms).recompute(bogus=True)),
            "positional": attempt(lambda: _dense(ms).recompute(True)),
            "runs": arr(net(x)),
            "grads": [arr(g) for g in ms.grad(net, grad_position=None,
                                              weights=net.trainable_params())(x)],
            "seq": attempt(lambda: nn.SequentialCell([_dense(ms)]).recompute())}


# -- containers ----------------------------------------------------------------------------------
def _seq(ms, n=3):
    return ms.nn.SequentialCell([_dense(ms) for _ in range(n)])


def case_sequential(ms):
    nn = ms.nn
    from collections import OrderedDict
    x = ms.Tensor(np.array([[1.0, -2.0]], np.float32))
    s = _seq(ms)
    out = {"len": len(s), "names": pnames(s), "keys": list(s.name_cells())}
    out["neg_index"] = s[-1] is list(s.name_cells().values())[2]
    out["slice_type"] = type(s[1:]).__name__
    out["slice_names"] = pnames(s[1:])
    out["slice_keys"] = list(s[1:].name_cells())
    out["out_of_range"] = attempt(lambda: s[3])
    out["neg_out_of_range"] = attempt(lambda: s[-4])
    out["str_index"] = attempt(lambda: s["0"])
    out["float_index"] = attempt(lambda: s[1.0])
    s[1] = nn.ReLU()
    out["set_keys"] = list(s.name_cells())
    out["set_type"] = type(s[1]).__name__
    out["set_run"] = arr(s(x))
    out["set_not_cell"] = attempt(lambda: s.__setitem__(0, 3))
    out["set_out_of_range"] = attempt(lambda: s.__setitem__(5, nn.ReLU()))
    out["set_str_index"] = attempt(lambda: s.__setitem__("0", nn.ReLU()))
    s2 = _seq(ms)
    s2[1] = _dense(ms)
    out["set_param_names"] = pnames(s2)
    s3 = _seq(ms, 4)
    del s3[1]
    out["del_keys"] = list(s3.name_cells())
    out["del_names"] = pnames(s3)
    del s3[0:2]
    out["del_slice_keys"] = list(s3.name_cells())
    out["del_slice_names"] = pnames(s3)
    out["del_str"] = attempt(lambda: s3.__delitem__("0"))
    out["del_out_of_range"] = attempt(lambda: s3.__delitem__(7))
    s4 = _seq(ms, 2)
    s4.append(_dense(ms))
    out["append_keys"] = list(s4.name_cells())
    out["append_names"] = pnames(s4)
    out["append_not_cell"] = attempt(lambda: s4.append(1))
    out["bool_empty"] = bool(nn.SequentialCell([]))
    out["bool_full"] = bool(s4)
    out["iter"] = attempt(lambda: [type(c).__name__ for c in s4])
    od = nn.SequentialCell(OrderedDict([("first", _dense(ms)), ("act", nn.ReLU())]))
    out["od_keys"] = list(od.name_cells())
    out["od_names"] = pnames(od)
    out["od_slice_keys"] = list(od[0:1].name_cells())
    del od[0]
    out["od_del_keys"] = list(od.name_cells())
    one = nn.SequentialCell(_dense(ms))
    out["single_cell_keys"] = list(one.name_cells())
    out["ctor_int"] = attempt(lambda: nn.SequentialCell(3))
    out["ctor_list_of_int"] = attempt(lambda: nn.SequentialCell([1, 2]))
    out["ctor_dict"] = attempt(lambda: nn.SequentialCell({"a": nn.ReLU()}))
    out["ctor_tuple"] = attempt(lambda: nn.SequentialCell((nn.ReLU(),)))
    out["ctor_varargs_int"] = attempt(lambda: nn.SequentialCell(nn.ReLU(), 1))
    out["run"] = arr(_seq(ms)(x))
    return out


def case_sequential_nested_names(ms):
    nn = ms.nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.body = nn.SequentialCell([_dense(ms), nn.ReLU(), _dense(ms)])

        def construct(self, x):
            return self.body(x)

    net = Net()
    out = {"names": pnames(net)}
    del net.body[0]
    out["after_del"] = pnames(net)
    net.body.append(_dense(ms))
    out["after_append"] = pnames(net)
    net.body[0] = _dense(ms)
    out["after_set"] = pnames(net)
    return out


def case_celllist(ms):
    nn = ms.nn
    cl = nn.CellList([_dense(ms), nn.ReLU()])
    out = {"len": len(cl), "keys": list(cl.name_cells()), "names": pnames(cl)}
    out["index"] = type(cl[1]).__name__
    out["neg_index"] = type(cl[-2]).__name__
    out["slice_type"] = type(cl[0:1]).__name__
    out["out_of_range"] = attempt(lambda: cl[2])
    out["str_index"] = attempt(lambda: cl["0"])
    cl.append(_dense(ms))
    out["append_keys"] = list(cl.name_cells())
    out["append_names"] = pnames(cl)
    out["append_not_cell"] = attempt(lambda: cl.append(3))
    cl.insert(0, _dense(ms))
    out["insert_keys"] = [type(c).__name__ for c in cl]
    out["insert_names"] = pnames(cl)
    cl.insert(-1, nn.Tanh())
    out["insert_neg"] = [type(c).__name__ for c in cl]
    cl.insert(len(cl), nn.Sigmoid())
    out["insert_end"] = [type(c).__name__ for c in cl]
    out["insert_out_of_range"] = attempt(lambda: cl.insert(99, nn.ReLU()))
    out["insert_not_cell"] = attempt(lambda: cl.insert(0, 3))
    out["insert_str_index"] = attempt(lambda: cl.insert("0", nn.ReLU()))
    ret = cl.extend([nn.ReLU(), _dense(ms)])
    out["extend_returns_self"] = ret is cl
    out["extend_len"] = len(cl)
    out["extend_names"] = pnames(cl)
    out["extend_tuple"] = attempt(lambda: cl.extend((nn.ReLU(),)))
    out["extend_not_cell"] = attempt(lambda: cl.extend([3]))
    out["extend_celldict"] = attempt(lambda: cl.extend([nn.CellDict()]))
    cl2 = nn.CellList([_dense(ms), _dense(ms), _dense(ms)])
    cl2[1] = nn.ReLU()
    out["set_types"] = [type(c).__name__ for c in cl2]
    out["set_not_cell"] = attempt(lambda: cl2.__setitem__(0, 3))
    out["set_str_index"] = attempt(lambda: cl2.__setitem__("0", nn.ReLU()))
    out["set_out_of_range"] = attempt(lambda: cl2.__setitem__(3, nn.ReLU()))
    cl2[2] = _dense(ms)
    out["set_names"] = pnames(cl2)
    del cl2[0]
    out["del_keys"] = list(cl2.name_cells())
    out["del_names"] = pnames(cl2)
    cl3 = nn.CellList([_dense(ms) for _ in range(4)])
    del cl3[1:3]
    out["del_slice_keys"] = list(cl3.name_cells())
    out["del_slice_names"] = pnames(cl3)
    out["del_str"] = attempt(lambda: cl3.__delitem__("0"))
    cl3 += [nn.ReLU()]
    out["iadd_len"] = len(cl3)
    out["bool_empty"] = bool(nn.CellList())
    out["ctor_not_list"] = attempt(lambda: nn.CellList(nn.ReLU()))
    out["ctor_tuple"] = attempt(lambda: nn.CellList((nn.ReLU(),)))
    out["ctor_bad_item"] = attempt(lambda: nn.CellList([nn.ReLU(), 1]))
    out["noprefix"] = pnames(nn.CellList([_dense(ms)], auto_prefix=False))
    out["construct"] = attempt(lambda: cl3(ms.Tensor(1.0)))
    return out


def case_celldict(ms):
    nn = ms.nn
    from collections import OrderedDict
    cd = nn.CellDict({"fc": _dense(ms), "act": nn.ReLU()})
    out = {"len": len(cd), "keys": list(cd.keys()), "names": pnames(cd),
           "iter": list(cd), "contains": "fc" in cd, "missing": "zz" in cd}
    out["values"] = [type(c).__name__ for c in cd.values()]
    out["items"] = [k for k, _ in cd.items()]
    out["getitem"] = type(cd["act"]).__name__
    out["getitem_missing"] = attempt(lambda: cd["zz"])
    cd["new"] = _dense(ms)
    out["set_names"] = pnames(cd)
    out["set_int_key"] = attempt(lambda: cd.__setitem__(1, nn.ReLU()))
    out["set_dot_key"] = attempt(lambda: cd.__setitem__("a.b", nn.ReLU()))
    out["set_empty_key"] = attempt(lambda: cd.__setitem__("", nn.ReLU()))
    out["set_attr_key"] = attempt(lambda: cd.__setitem__("training", nn.ReLU()))
    out["set_none"] = attempt(lambda: cd.__setitem__("n", None))
    out["set_not_cell"] = attempt(lambda: cd.__setitem__("n", 3))
    out["set_celllist"] = attempt(lambda: cd.__setitem__("n", nn.CellList()))
    out["set_sequential"] = attempt(lambda: cd.__setitem__("n", nn.SequentialCell([])))
    popped = cd.pop("act")
    out["pop"] = type(popped).__name__
    out["pop_missing"] = attempt(lambda: cd.pop("act"))
    del cd["new"]
    out["after_del"] = list(cd.keys())
    out["del_missing"] = attempt(lambda: cd.__delitem__("new"))
    cd.update([("a", nn.ReLU()), ("b", nn.Tanh())])
    out["update_pairs"] = list(cd.keys())
    cd.update(OrderedDict([("c", nn.ReLU())]))
    out["update_od"] = list(cd.keys())
    out["update_int"] = attempt(lambda: cd.update(3))
    out["update_bad_elem"] = attempt(lambda: cd.update([3]))
    out["update_bad_len"] = attempt(lambda: cd.update([("a", nn.ReLU(), 1)]))
    cd.clear()
    out["clear"] = len(cd)
    out["ctor_list"] = list(nn.CellDict([("x", nn.ReLU())]).keys())
    out["ctor_int"] = attempt(lambda: nn.CellDict(3))
    out["noprefix"] = pnames(nn.CellDict({"fc": _dense(ms)}, auto_prefix=False))
    out["construct"] = attempt(lambda: nn.CellDict()(ms.Tensor(1.0)))
    return out


# -- hooks -------------------------------------------------------------------------------------
def _two_io(ms):
    nn = ms.nn

    class Lin(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.array([2.0, 3.0], np.float32)), name="w")

        def construct(self, x, y):
            return x * self.w * 3, y * 5 + x

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lin = Lin()

        def construct(self, x, y):
            a, b = self.lin(x * 2, y)
            return (a * a).sum() + b.sum() * 7

    return Net()


def _xy(ms):
    return (ms.Tensor(np.array([1.0, 1.0], np.float32)),
            ms.Tensor(np.array([1.0, 2.0], np.float32)))


def case_forward_hooks(ms):
    nn = ms.nn
    log = []
    net = _two_io(ms)
    x, y = _xy(ms)

    def pre(cell, args):
        log.append(["pre", type(cell).__name__, [arr(a) for a in args]])
        return (args[0] + 1, args[1])

    def pre_first(cell, args):
        log.append(["pre_first"])

    def post(cell, args, output):
        log.append(["post", [arr(a) for a in args], [arr(o) for o in output]])
        return (output[0] * 0 + 1, output[1])

    def post_kw(cell, args, kwargs, output):
        log.append(["post_kw", sorted(kwargs)])

    h1 = net.lin.register_forward_pre_hook(pre)
    h2 = net.lin.register_forward_pre_hook(pre_first, prepend=True)
    h3 = net.lin.register_forward_hook(post)
    h4 = net.lin.register_forward_hook(post_kw, with_kwargs=True)
    first = arr(net(x, y))
    for h in (h1, h2, h3, h4):
        h.remove()
    h1.remove()
    second = arr(net(x, y))
    grads_with_hook = _hooked_grads(ms)
    return {"log": log, "first": first, "second": second, "grads": grads_with_hook,
            "handle_id_type": type(h1.handle_id).__name__,
            "bad_fn": attempt(lambda: nn.ReLU().register_forward_hook(3)),
            "bad_pre_fn": attempt(lambda: nn.ReLU().register_forward_pre_hook(None)),
            "pre_single": _pre_single(ms),
            "pre_kwargs": _pre_kwargs(ms),
            "always_call": _always_call(ms)}


def _hooked_grads(ms):
    net = _two_io(ms)
    net.lin.register_forward_hook(lambda cell, args, out: (out[0] * 2, out[1]))
    x, y = _xy(ms)
    g = ms.grad(net, grad_position=(0, 1), weights=net.trainable_params())(x, y)
    return [[arr(t) for t in g[0]], [arr(t) for t in g[1]]]


def _pre_single(ms):
    nn = ms.nn
    relu = nn.ReLU()
    relu.register_forward_pre_hook(lambda cell, args: args[0] - 5)
    return arr(relu(ms.Tensor(np.array([1.0, 7.0], np.float32))))


def _pre_kwargs(ms):
    nn = ms.nn

    class KW(nn.Cell):
        def construct(self, x, scale=1.0):
            return x * scale

    c = KW()
    c.register_forward_pre_hook(lambda cell, args, kwargs: (args, {"scale": 10.0}),
                                with_kwargs=True)
    x = ms.Tensor(np.array([1.0], np.float32))
    good = arr(c(x, scale=2.0))
    bad = KW()
    bad.register_forward_pre_hook(lambda cell, args, kwargs: args, with_kwargs=True)
    return {"good": good, "bad_return": attempt(lambda: bad(x, scale=2.0))}


def _always_call(ms):
    nn = ms.nn
    seen = []

    class Boom(nn.Cell):
        def construct(self, x):
            raise ValueError("boom")

    b = Boom()
    b.register_forward_hook(lambda cell, args, out: seen.append(["always", out]),
                            always_call=True)
    b.register_forward_hook(lambda cell, args, out: seen.append(["normal"]))
    return {"raised": attempt(lambda: b(ms.Tensor(1.0))), "seen": seen}


def case_backward_hooks(ms):
    nn = ms.nn
    log = []
    net = _two_io(ms)
    x, y = _xy(ms)

    def pre(cell, grad_output):
        log.append(["pre", type(grad_output).__name__, [arr(g) for g in grad_output]])

    def hook(cell, grad_input, grad_output):
        log.append(["hook", type(cell).__name__, type(grad_input).__name__,
                    [arr(g) for g in grad_input], [arr(g) for g in grad_output]])
        return tuple(g * 10 for g in grad_input)

    h1 = net.lin.register_backward_hook(hook)
    h2 = net.lin.register_backward_pre_hook(pre)
    g = ms.grad(net, grad_position=(0, 1), weights=net.trainable_params())(x, y)
    hooked = [[arr(t) for t in g[0]], [arr(t) for t in g[1]]]
    forward = arr(net(x, y))
    h1.remove()
    h2.remove()
    plain = [arr(t) for t in ms.grad(net, grad_position=(0, 1))(x, y)]
    return {"log": log, "hooked": hooked, "plain": plain, "forward": forward,
            "bad_fn": attempt(lambda: nn.ReLU().register_backward_hook(1)),
            "bad_pre_fn": attempt(lambda: nn.ReLU().register_backward_pre_hook("s")),
            "nested": _nested_backward(ms)}


def _nested_backward(ms):
    nn = ms.nn

    class Lin(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.array([2.0, 3.0], np.float32)), name="w")

        def construct(self, x, k=3):
            return x * self.w * k

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lin = Lin()

        def construct(self, x):
            return self.lin(self.lin(x, 3), 2).sum()

    x = ms.Tensor(np.array([1.0, 1.0], np.float32))

    def run(hook, pos, weights):
        net = Net()
        log = []
        net.lin.register_backward_hook(lambda c, gi, go: hook(log, gi, go))
        w = net.trainable_params() if weights else None
        out = attempt(lambda: ms.grad(net, grad_position=pos, weights=w)(x))
        if isinstance(out, tuple):
            out = [arr(t) for t in out]
        elif not isinstance(out, str):
            out = arr(out)
        return {"grads": out, "log": log}

    def record(log, gi, go):
        log.append([[arr(g) for g in gi], [arr(g) for g in go]])

    def double_single(log, gi, go):
        return gi[0] * 2

    return {"weights_only": run(record, None, True),
            "inputs_only": run(record, 0, False),
            "single_tensor": run(double_single, 0, False),
            "wrong_len": run(lambda log, gi, go: (gi[0], gi[0]), 0, False),
            "int_return": run(lambda log, gi, go: 5, 0, False),
            "list_return": run(lambda log, gi, go: [gi[0]], 0, False)}


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}
