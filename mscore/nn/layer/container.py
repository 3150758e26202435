"""Cell containers with MindSpore 2.10's behaviour: ``SequentialCell``, ``CellList``,
``CellDict``.

Parameter names follow the container's positions, as MindSpore's do: a cell stored at
position ``i`` of a container whose parameters are named ``body.<i>.…`` gets
``body.<i>.…`` names, and after a deletion or an insertion the cells that moved are renamed
to their new positions (keys given by an ``OrderedDict`` to ``SequentialCell`` stay).
Storing a cell in a container renames its parameters, slices included (a slice is a new
container of the same cells), exactly as in MindSpore.
"""
from __future__ import annotations

from collections import OrderedDict, abc

from mscore.common._errors import TypeAttributeError
from mscore.nn.cell import Cell


def _check_index(n, index, owner, inserting=False):
    """``index`` as a non-negative position among ``n`` cells (``n`` allowed when
    ``inserting``)."""
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"For '{owner}', the type of 'index' must be int, but got "
                        f"{type(index).__name__}.")
    high = n if inserting else n - 1
    if not -n <= index <= high:
        bound = f"[{-n}, {n}]" if inserting else f"[{-n}, {n})"
        raise IndexError(f"For '{owner}', 'index' must be in range {bound}, but got {index}.")
    if inserting and index == n:
        return index
    return index % n if n else index


def _check_cell(cell, owner):
    if not isinstance(cell, Cell):
        raise TypeError(f"For '{owner}', each cell must be a Cell, but got "
                        f"{type(cell).__name__}.")
    return True


def _name_prefix(cells):
    """``(prefix, position)``: the prefix the container's parameter names carry before the
    cell key (e.g. ``"body."``) and the position of the key among the dotted parts, read
    from the first parameters found (the second confirms an ambiguous match)."""
    found = []
    for key, cell in cells.items():
        if cell is None:
            continue
        param = next(cell.get_parameters(), None)
        if param is not None:
            found.append((key, param.name.split(".")))
            if len(found) == 2:
                break
    if not found:
        return "", 0
    key, parts = found[0]
    prefix, position = "", 0
    for i, part in enumerate(parts):
        if part != key:
            continue
        prefix, position = (".".join(parts[:i]) + ".") if i else "", i
        if len(found) == 2:
            other_key, other_parts = found[1]
            if i < len(other_parts) and other_parts[i] == other_key:
                break
    return prefix, position


def _move(cell, prefix, position, new_key):
    """Rename ``cell``'s parameters for its new key ``new_key``."""
    for _, param in cell.parameters_and_names():
        rest = param.name.split(".")[position + 1:]
        param.name = prefix + new_key + "." + ".".join(rest)


class SequentialCell(Cell):
    """Cells run one after another: ``SequentialCell(c1, c2)``, ``SequentialCell([c1, c2])``
    or ``SequentialCell(OrderedDict(name=cell))``."""

    def __init__(self, *args):
        super().__init__()
        object.__setattr__(self, "_static_keys", set())
        if len(args) == 1 and not isinstance(args[0], Cell):
            cells = args[0]
            if isinstance(cells, OrderedDict):
                items = list(cells.items())
                self._static_keys.update(cells)
            elif isinstance(cells, list):
                items = [(str(i), c) for i, c in enumerate(cells)]
            else:
                raise TypeError(f"For 'SequentialCell', the 'args[0]' must be Cell, list or "
                                f"OrderedDict, but got {type(cells).__name__}")
        else:
            items = [(str(i), c) for i, c in enumerate(args)]
        for name, cell in items:
            _check_cell(cell, "SequentialCell")
            self.insert_child_to_cell(name, cell)
            cell.update_parameters_name(name + ".")

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._cells.items())[index]))
        index = _check_index(len(self), index, type(self).__name__)
        return list(self._cells.values())[index]

    def __setitem__(self, index, cell):
        owner = type(self).__name__
        _check_cell(cell, owner)
        prefix, _ = _name_prefix(self._cells)
        index = _check_index(len(self), index, owner)
        key = list(self._cells)[index]
        self._cells[key] = cell
        cell.update_parameters_name(prefix + key + ".")

    def __delitem__(self, index):
        owner = type(self).__name__
        if isinstance(index, int) and not isinstance(index, bool):
            index = _check_index(len(self), index, owner)
            del self._cells[list(self._cells)[index]]
        elif isinstance(index, slice):
            for key in list(self._cells)[index]:
                del self._cells[key]
        else:
            raise TypeError(f"For '{owner}', the type of index must be int or slice, but "
                            f"got {type(index).__name__}")
        prefix, position = _name_prefix(self._cells)
        renumbered = OrderedDict()
        for i, (key, cell) in enumerate(self._cells.items()):
            if key in self._static_keys:
                renumbered[key] = cell
                continue
            if cell is not None and key != str(i):
                _move(cell, prefix, position, str(i))
            renumbered[str(i)] = cell
        object.__setattr__(self, "_cells", renumbered)

    def __len__(self):
        return len(self._cells)

    def __bool__(self):
        return len(self._cells) != 0

    def __iter__(self):
        return iter(list(self._cells.values()))

    def set_grad(self, flag=True):
        """Mark this cell and its cells as used for gradients."""
        super().set_grad(flag)
        for cell in self._cells.values():
            if cell is not None:
                cell.set_grad(flag)
        return self

    def append(self, cell):
        """Add ``cell`` at the end."""
        _check_cell(cell, type(self).__name__)
        prefix, _ = _name_prefix(self._cells)
        key = str(len(self))
        cell.update_parameters_name(prefix + key + ".")
        self._cells[key] = cell

    def construct(self, x):
        # MindSpore names the argument input_data; x keeps the MINDIR input names of the
        # files mscore already wrote (tests/data/quant).
        for cell in self._cells.values():
            if cell is not None:
                x = cell(x)
        return x


class CellList(Cell):
    """A list of Cells registered as sub-cells: ``CellList([c1, c2], auto_prefix=True)``;
    indexing, slicing, assignment, deletion, ``insert``, ``append``, ``extend``, ``+=``."""

    def __init__(self, *args, **kwargs):
        super().__init__(kwargs.get("auto_prefix", True))
        if len(args) == 1:
            self.extend(args[0])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return CellList(list(self._cells.values())[index])
        if isinstance(index, int) and not isinstance(index, bool):
            return self._cells[str(_check_index(len(self), index, "CellList"))]
        raise TypeError(f"For 'CellList', the type of 'index' must be int or slice, but got "
                        f"{type(index).__name__}.")

    def __setitem__(self, index, cell):
        if not isinstance(index, int) and _check_cell(cell, "CellList"):
            raise TypeError(f"For 'CellList', the type of 'index' must be int, but got "
                            f"{type(index).__name__}.")
        index = _check_index(len(self), index, "CellList")
        if not isinstance(cell, Cell):
            # MindSpore fails here renaming the value's parameters: AttributeError.
            raise TypeAttributeError(f"For 'CellList', the value stored at index {index} must "
                                     f"be a Cell, but got {type(cell).__name__}")
        if self._auto_prefix:
            prefix, _ = _name_prefix(self._cells)
            cell.update_parameters_name(prefix + str(index) + ".")
        self._cells[str(index)] = cell

    def __delitem__(self, index):
        if isinstance(index, int) and not isinstance(index, bool):
            del self._cells[str(_check_index(len(self), index, "CellList"))]
        elif isinstance(index, slice):
            for key in list(self._cells)[index]:
                del self._cells[key]
        else:
            raise TypeError(f"For 'CellList', the type of 'index' must be int or slice, but "
                            f"got {type(index).__name__}.")
        prefix, position = _name_prefix(self._cells)
        renumbered = OrderedDict()
        for i, (key, cell) in enumerate(self._cells.items()):
            if self._auto_prefix and key != str(i):
                _move(cell, prefix, position, str(i))
            renumbered[str(i)] = cell
        object.__setattr__(self, "_cells", renumbered)

    def __len__(self):
        return len(self._cells)

    def __bool__(self):
        return len(self._cells) != 0

    def __iter__(self):
        return iter(list(self._cells.values()))

    def __iadd__(self, cells):
        self.extend(cells)
        return self

    def insert(self, index, cell):
        """Insert ``cell`` before position ``index``; the cells after it move up one."""
        index = _check_index(len(self), index, "CellList", inserting=True)
        _check_cell(cell, "CellList")
        prefix, position = _name_prefix(self._cells)
        for i in range(len(self), index, -1):
            moved = self._cells[str(i - 1)]
            if self._auto_prefix:
                _move(moved, prefix, position, str(i))
            self._cells[str(i)] = moved
        self._cells[str(index)] = cell
        if self._auto_prefix:
            cell.update_parameters_name(prefix + str(index) + ".")

    def extend(self, cells):
        """Append every cell of the list ``cells``; returns self."""
        if not isinstance(cells, list):
            raise TypeError(f"For 'CellList', the new cells wanted to append should be "
                            f"instance of list, but got {type(cells).__name__}.")
        prefix, _ = _name_prefix(self._cells)
        for cell in cells:
            if isinstance(cell, CellDict):
                raise TypeError("For 'CellList', the type of cell can not be CellDict.")
            _check_cell(cell, "CellList")
            if self._auto_prefix:
                cell.update_parameters_name(prefix + str(len(self)) + ".")
            self._cells[str(len(self))] = cell
        return self

    def append(self, cell):
        """Add ``cell`` at the end."""
        _check_cell(cell, "CellList")
        if self._auto_prefix:
            prefix, _ = _name_prefix(self._cells)
            cell.update_parameters_name(prefix + str(len(self)) + ".")
        self._cells[str(len(self))] = cell

    def set_grad(self, flag=True):
        """Mark this cell and its cells as used for gradients."""
        super().set_grad(flag)
        for cell in self._cells.values():
            cell.set_grad(flag)
        return self

    def construct(self, *inputs):
        raise NotImplementedError("CellList has no construct; iterate over it instead")


class CellDict(Cell):
    """Cells by name: ``CellDict({"fc": Dense(...)})`` or ``CellDict([("fc", cell)])``;
    ``keys``/``values``/``items``, ``[key]``, ``pop``, ``update``, ``clear``, ``in``."""

    def __init__(self, *args, **kwargs):
        super().__init__(kwargs.get("auto_prefix", True))
        if len(args) == 1:
            self.update(args[0])

    def __getitem__(self, key):
        return self._cells[key]

    def __setitem__(self, key, cell):
        self._check_key(key)
        self._check_value(cell)
        if self._auto_prefix:
            prefix, _ = _name_prefix(self._cells)
            cell.update_parameters_name(prefix + key + ".")
        self._cells[key] = cell

    def __delitem__(self, key):
        del self._cells[key]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(list(self._cells))

    def __contains__(self, key):
        return key in self._cells

    def _check_key(self, key):
        if not isinstance(key, str):
            raise TypeError(f"For 'CellDict', the type of key should be str, but got "
                            f"{type(key).__name__}.")
        if hasattr(self, key) and key not in self._cells:
            raise KeyError(f"For 'CellDict', the key can not be an attribute of the Cell, "
                           f"but got key {key!r}.")
        if "." in key:
            raise KeyError(f"For 'CellDict', key can not contain '.', but got key {key!r}.")
        if key == "":
            raise KeyError("For 'CellDict', key can not be the empty string.")

    @staticmethod
    def _check_value(cell):
        if cell is None:
            raise TypeError("For 'CellDict', cell can not be None.")
        if not isinstance(cell, Cell):
            raise TypeError(f"For 'CellDict', the type of cell should be Cell, but got "
                            f"{type(cell).__name__}.")
        if isinstance(cell, (CellDict, CellList, SequentialCell)):
            raise TypeError(f"For 'CellDict', the type of cell can not be CellDict, CellList "
                            f"or SequentialCell, but got {type(cell).__name__}.")

    def clear(self):
        """Remove every cell."""
        self._cells.clear()

    def pop(self, key):
        """Remove the cell ``key`` and return it."""
        value = self[key]
        del self[key]
        return value

    def keys(self):
        """The keys, in insertion order."""
        return self._cells.keys()

    def values(self):
        """The cells, in insertion order."""
        return self._cells.values()

    def items(self):
        """``(key, cell)`` pairs, in insertion order."""
        return self._cells.items()

    def update(self, cells):
        """Add the cells of a mapping or of an iterable of ``(key, cell)`` pairs."""
        if not isinstance(cells, abc.Iterable):
            raise TypeError(f"CellDict.update() should be called with an iterable of "
                            f"key-value pairs, but got {type(cells).__name__}")
        if isinstance(cells, (abc.Mapping, CellDict)):
            for key, cell in cells.items():
                self[key] = cell
            return
        for i, pair in enumerate(cells):
            if not isinstance(pair, abc.Iterable):
                raise TypeError(f"CellDict update sequence element #{i} should be Iterable, "
                                f"but got {type(pair).__name__}")
            if len(pair) != 2:
                raise ValueError(f"CellDict update sequence element #{i} should have length "
                                 f"2, but has length {len(pair)}")
            self[pair[0]] = pair[1]

    def construct(self, *inputs):
        raise NotImplementedError("CellDict has no construct; index it instead")
