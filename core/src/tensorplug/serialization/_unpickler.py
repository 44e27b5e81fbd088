"""The weights-only unpickler: a pickle interpreter that builds only what it is told to (internal).

Note [Weights-only unpickling]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``pickle.Unpickler`` with a restricted ``find_class`` is not safe: BUILD sets attributes on
whatever object is on the stack, a class or a function included (a 62-byte file set
``Parameter.requires_grad = False`` for the rest of the process), and an allow-listed callable
such as ``frozenset`` applied to an allow-listed ``range`` allocates gigabytes from 49 bytes.
So, as PyTorch's ``_weights_only_unpickler``, this module interprets the opcodes itself:

- only the binary opcodes of protocols 2 to 5 (what ``pickle`` and ``torch.save`` write);
  anything else is refused;
- a global is whatever :class:`Globals` maps its name to: a *reconstructor* (a function that
  checks its arguments before building), an allow-listed constant, or a user type added with
  ``add_safe_globals``; nothing is imported;
- REDUCE calls reconstructors and user-allowed callables only; NEWOBJ builds user-allowed
  classes only;
- BUILD runs only on an ``OrderedDict`` (the ``_metadata`` of a ``state_dict``, nothing else)
  and on instances of user-allowed types, never on a class, a function or a tensor;
- APPEND, SETITEM and ADDITEMS work on exact ``list``, ``dict``/``OrderedDict`` and ``set``
  only, so no method of another object runs;
- every length read from the stream must fit in what is left of it, so what is built is at
  most linear in the file's size; a tensor's bytes come from the archive's records (the
  caller checks their size against the file's, Note [Checkpoint format] in
  serialization/__init__.py).

Any refusal or malformed stream raises :class:`pickle.UnpicklingError`; the loader turns it
into a :class:`CheckpointError` naming the file and the record.
"""

from __future__ import annotations

import collections
import pickle
import struct
from collections.abc import Callable
from typing import Any

__all__ = ["CheckpointError", "Globals", "Refused", "unpickle"]


class CheckpointError(pickle.UnpicklingError):
    """A checkpoint that cannot be loaded: corrupt, truncated, not a checkpoint, or holding
    something ``weights_only=True`` refuses. ``file`` and ``record`` name where."""

    def __init__(self, message: str, *, file: str | None = None, record: str | None = None):
        where = ", ".join(
            p
            for p in (f"file {file!r}" if file else "", f"record {record!r}" if record else "")
            if p
        )
        super().__init__(f"{where}: {message}" if where else message)
        self.file = file
        self.record = record


class Refused(pickle.UnpicklingError):
    """``weights_only=True`` refused to build something the file names."""


class Globals:
    """What the stream's globals may resolve to.

    ``find(module, name)`` returns the object; ``is_reconstructor(obj)``: REDUCE may call it;
    ``is_user_type(obj)``: a user-allowed class (REDUCE, NEWOBJ and BUILD on its instances).
    """

    def find(self, module: str, name: str) -> Any:
        raise NotImplementedError

    def callable(self, obj: Any) -> bool:
        raise NotImplementedError

    def is_user_type(self, obj: Any) -> bool:
        raise NotImplementedError


def _refused(what: str) -> Refused:
    return Refused(
        f"tp.load(weights_only=True) refuses {what}. If you trust the file, load it with "
        "tp.load(f, weights_only=False), which runs any code the file names; or allow a type "
        "with tp.serialization.add_safe_globals([...])."
    )


def unpickle(
    data: bytes | memoryview, globals_: Globals, persistent_load: Callable[[Any], Any]
) -> Any:
    """The object the pickle ``data`` describes, built under Note [Weights-only unpickling]."""
    buf = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    end = len(buf)
    pos = 0
    stack: list[Any] = []
    metastack: list[list[Any]] = []
    memo: dict[int, Any] = {}

    def take(n: int) -> bytes:
        nonlocal pos
        if n < 0 or pos + n > end:
            raise pickle.UnpicklingError(
                f"the pickle is truncated: {n} bytes wanted at offset {pos}, {end - pos} left"
            )
        out = bytes(buf[pos : pos + n])
        pos += n
        return out

    def pop_mark() -> list[Any]:
        nonlocal stack
        if not metastack:
            raise pickle.UnpicklingError("the pickle pops a mark it never set")
        items = stack
        stack = metastack.pop()
        return items

    def pop() -> Any:
        if not stack:
            raise pickle.UnpicklingError("the pickle pops an empty stack")
        return stack.pop()

    def top() -> Any:
        if not stack:
            raise pickle.UnpicklingError("the pickle reads an empty stack")
        return stack[-1]

    def text(raw: bytes) -> str:
        try:
            return raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as e:
            raise pickle.UnpicklingError(f"a string of the pickle is not UTF-8: {e}") from None

    def find(module: Any, name: Any) -> Any:
        if type(module) is not str or type(name) is not str:
            raise pickle.UnpicklingError("a global of the pickle is not named by strings")
        return globals_.find(module, name)

    def set_items(target: Any, items: list[Any]) -> None:
        if type(target) not in (dict, collections.OrderedDict) or len(items) % 2:
            raise _refused(f"setting items on a {type(target).__name__}")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    while True:
        if pos >= end:
            raise pickle.UnpicklingError("the pickle ends before its STOP opcode")
        op = buf[pos]
        pos += 1
        if op == 0x80:  # PROTO
            (proto,) = take(1)
            if not 2 <= proto <= 5:
                raise pickle.UnpicklingError(f"pickle protocol {proto} is not supported")
        elif op == 0x95:  # FRAME: a hint only
            take(8)
        elif op == 0x2E:  # STOP
            value = pop()
            if stack or metastack:
                raise pickle.UnpicklingError("the pickle stops with items left on its stack")
            return value
        elif op == 0x28:  # MARK
            metastack.append(stack)
            stack = []
        elif op == 0x30:  # POP
            if stack:
                stack.pop()
            else:
                pop_mark()
        elif op == 0x31:  # POP_MARK
            pop_mark()
        elif op == 0x32:  # DUP
            stack.append(top())
        elif op == 0x4E:  # NONE
            stack.append(None)
        elif op == 0x88:  # NEWTRUE
            stack.append(True)
        elif op == 0x89:  # NEWFALSE
            stack.append(False)
        elif op == 0x4A:  # BININT
            stack.append(struct.unpack("<i", take(4))[0])
        elif op == 0x4B:  # BININT1
            stack.append(take(1)[0])
        elif op == 0x4D:  # BININT2
            stack.append(struct.unpack("<H", take(2))[0])
        elif op == 0x8A:  # LONG1
            stack.append(int.from_bytes(take(take(1)[0]), "little", signed=True))
        elif op == 0x8B:  # LONG4
            (n,) = struct.unpack("<i", take(4))
            stack.append(int.from_bytes(take(n), "little", signed=True))
        elif op == 0x47:  # BINFLOAT
            stack.append(struct.unpack(">d", take(8))[0])
        elif op == 0x58:  # BINUNICODE
            stack.append(text(take(struct.unpack("<I", take(4))[0])))
        elif op == 0x8C:  # SHORT_BINUNICODE
            stack.append(text(take(take(1)[0])))
        elif op == 0x8D:  # BINUNICODE8
            stack.append(text(take(struct.unpack("<Q", take(8))[0])))
        elif op == 0x42:  # BINBYTES
            stack.append(take(struct.unpack("<I", take(4))[0]))
        elif op == 0x43:  # SHORT_BINBYTES
            stack.append(take(take(1)[0]))
        elif op == 0x8E:  # BINBYTES8
            stack.append(take(struct.unpack("<Q", take(8))[0]))
        elif op == 0x96:  # BYTEARRAY8
            stack.append(bytearray(take(struct.unpack("<Q", take(8))[0])))
        elif op == 0x29:  # EMPTY_TUPLE
            stack.append(())
        elif op == 0x74:  # TUPLE
            items = pop_mark()  # (it rebinds ``stack``: not inside ``stack.append(...)``)
            stack.append(tuple(items))
        elif op == 0x85:  # TUPLE1
            stack.append((pop(),))
        elif op == 0x86:  # TUPLE2
            b = pop()
            stack.append((pop(), b))
        elif op == 0x87:  # TUPLE3
            c = pop()
            b = pop()
            stack.append((pop(), b, c))
        elif op == 0x5D:  # EMPTY_LIST
            stack.append([])
        elif op == 0x61:  # APPEND
            value = pop()
            target = top()
            if type(target) is not list:
                raise _refused(f"appending to a {type(target).__name__}")
            target.append(value)
        elif op == 0x65:  # APPENDS
            items = pop_mark()
            target = top()
            if type(target) is not list:
                raise _refused(f"appending to a {type(target).__name__}")
            target.extend(items)
        elif op == 0x7D:  # EMPTY_DICT
            stack.append({})
        elif op == 0x73:  # SETITEM
            value = pop()
            key = pop()
            set_items(top(), [key, value])
        elif op == 0x75:  # SETITEMS
            items = pop_mark()
            set_items(top(), items)
        elif op == 0x8F:  # EMPTY_SET
            stack.append(set())
        elif op == 0x90:  # ADDITEMS
            items = pop_mark()
            target = top()
            if type(target) is not set:
                raise _refused(f"adding items to a {type(target).__name__}")
            target.update(items)
        elif op == 0x91:  # FROZENSET
            items = pop_mark()
            stack.append(frozenset(items))
        elif op == 0x63:  # GLOBAL: "module\nname\n"
            module = _line(buf, pos, end)
            pos += len(module) + 1
            name = _line(buf, pos, end)
            pos += len(name) + 1
            stack.append(find(text(module), text(name)))
        elif op == 0x93:  # STACK_GLOBAL
            name = pop()
            stack.append(find(pop(), name))
        elif op == 0x52:  # REDUCE
            args = pop()
            func = pop()
            if type(args) is not tuple:
                raise pickle.UnpicklingError("REDUCE with arguments that are not a tuple")
            if not globals_.callable(func):
                raise _refused(f"calling {_name(func)}")
            stack.append(func(*args))
        elif op == 0x81:  # NEWOBJ
            args = pop()
            cls = pop()
            if type(args) is not tuple or not globals_.is_user_type(cls):
                raise _refused(f"creating a {_name(cls)} with NEWOBJ")
            stack.append(cls.__new__(cls, *args))
        elif op == 0x62:  # BUILD
            state = pop()
            _build(top(), state, globals_)
        elif op == 0x68:  # BINGET
            stack.append(_memo_get(memo, take(1)[0]))
        elif op == 0x6A:  # LONG_BINGET
            stack.append(_memo_get(memo, struct.unpack("<I", take(4))[0]))
        elif op == 0x71:  # BINPUT
            memo[take(1)[0]] = top()
        elif op == 0x72:  # LONG_BINPUT
            memo[struct.unpack("<I", take(4))[0]] = top()
        elif op == 0x94:  # MEMOIZE
            memo[len(memo)] = top()
        elif op == 0x51:  # BINPERSID
            stack.append(persistent_load(pop()))
        else:
            raise pickle.UnpicklingError(
                f"unsupported pickle opcode {bytes([op])!r} at offset {pos - 1} (tp.load reads "
                "the binary protocols 2 to 5)"
            )


def _line(buf: bytes | memoryview, pos: int, end: int) -> bytes:
    """The bytes up to the next newline (GLOBAL's names), at most 512 of them."""
    stop = min(end, pos + 512)
    chunk = bytes(buf[pos:stop])
    i = chunk.find(b"\n")
    if i < 0:
        raise pickle.UnpicklingError("a GLOBAL name of the pickle has no end")
    return chunk[:i]


def _memo_get(memo: dict[int, Any], i: int) -> Any:
    try:
        return memo[i]
    except KeyError:
        raise pickle.UnpicklingError(f"the pickle reads memo entry {i}, never stored") from None


def _name(obj: Any) -> str:
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None)
    if type(module) is str and type(name) is str:
        return f"'{module}.{name}'"
    return f"a {type(obj).__name__}"


def _build(inst: Any, state: Any, globals_: Globals) -> None:
    """BUILD: an ``OrderedDict``'s ``_metadata`` (a ``state_dict``), or the state of an instance
    of a user-allowed type; nothing else (Note [Weights-only unpickling])."""
    if type(inst) is collections.OrderedDict:
        if type(state) is not dict or set(state) - {"_metadata"}:
            raise _refused("setting attributes other than '_metadata' on an OrderedDict")
        inst.__dict__.update(state)
        return
    if isinstance(inst, type) or not globals_.is_user_type(type(inst)):
        raise _refused(f"BUILD (setting attributes) on {_name(inst)}")
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if type(state) is tuple and len(state) == 2:
        state, slots = state
    if state:
        if type(state) is not dict or not all(type(k) is str for k in state):
            raise pickle.UnpicklingError(f"BUILD of {_name(type(inst))} with a malformed state")
        inst.__dict__.update(state)
    if slots:
        if type(slots) is not dict or not all(
            type(k) is str and not k.startswith("__") for k in slots
        ):
            raise pickle.UnpicklingError(f"BUILD of {_name(type(inst))} with malformed slots")
        for k, v in slots.items():
            setattr(inst, k, v)
