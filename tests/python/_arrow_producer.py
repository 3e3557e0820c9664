"""Test-only Arrow C Data Interface producers (ctypes), for what no real library hands out on
demand: hand-made (arrow_schema, arrow_array) capsules with any field set to any value, and a
wrapper that counts the release calls of another producer's structs (e.g. pyarrow's).

Ownership as the spec says: a capsule owns its struct's memory; its destructor calls `release`
only if the struct is still live (a consumer that moved the struct out marked it released).
Each release callback counts its calls, so a test asserts "exactly once" by reading a counter.
"""
import ctypes
import itertools
from ctypes import CFUNCTYPE, POINTER, PYFUNCTYPE, Structure, c_char_p, c_int64, c_void_p, py_object

import numpy as np


class ArrowSchema(Structure):
    pass


class ArrowArray(Structure):
    pass


RELEASE_SCHEMA = CFUNCTYPE(None, POINTER(ArrowSchema))
RELEASE_ARRAY = CFUNCTYPE(None, POINTER(ArrowArray))
ArrowSchema._fields_ = [("format", c_void_p), ("name", c_void_p), ("metadata", c_void_p), ("flags", c_int64),
                        ("n_children", c_int64), ("children", c_void_p), ("dictionary", c_void_p),
                        ("release", RELEASE_SCHEMA), ("private_data", c_void_p)]
ArrowArray._fields_ = [("length", c_int64), ("null_count", c_int64), ("offset", c_int64), ("n_buffers", c_int64),
                       ("n_children", c_int64), ("buffers", c_void_p), ("children", c_void_p), ("dictionary", c_void_p),
                       ("release", RELEASE_ARRAY), ("private_data", c_void_p)]
assert ctypes.sizeof(ArrowSchema) == 72 and ctypes.sizeof(ArrowArray) == 80

SCHEMA_NAME = b"arrow_schema"  # module-level: capsule names must outlive the capsules
ARRAY_NAME = b"arrow_array"

_CAPSULE_DTOR = CFUNCTYPE(None, c_void_p)
_capsule_new = PYFUNCTYPE(py_object, c_void_p, c_char_p, c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_capsule_ptr_raw = PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_ptr = PYFUNCTYPE(c_void_p, py_object, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_is_valid = PYFUNCTYPE(ctypes.c_int, py_object, c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))

_keys = itertools.count(1)
_live = {}              # private_data key -> (producer, objects kept alive until release)
_capsule_structs = {}   # struct address -> ctypes struct owned by a capsule


def _null_release(kind):
    return kind()  # a NULL function pointer


# --------------------------------------------------------------------------- release callbacks


@RELEASE_SCHEMA
def _release_schema(p):
    key = p.contents.private_data
    producer, _keep = _live.get(key, (None, None))
    if producer is not None:
        producer.schema_releases += 1
        _live[key] = (producer, None)  # the memory may go now; a second call still counts
    p.contents.release = _null_release(RELEASE_SCHEMA)


@RELEASE_ARRAY
def _release_array(p):
    key = p.contents.private_data
    producer, _keep = _live.get(key, (None, None))
    if producer is not None:
        producer.array_releases += 1
        _live[key] = (producer, None)  # the memory may go now; a second call still counts
    p.contents.release = _null_release(RELEASE_ARRAY)


@_CAPSULE_DTOR
def _schema_capsule_dtor(cap):
    addr = _capsule_ptr_raw(cap, SCHEMA_NAME)
    s = _capsule_structs.pop(addr, None)
    if s is not None and s.release:
        s.release(ctypes.pointer(s))


@_CAPSULE_DTOR
def _array_capsule_dtor(cap):
    addr = _capsule_ptr_raw(cap, ARRAY_NAME)
    a = _capsule_structs.pop(addr, None)
    if a is not None and a.release:
        a.release(ctypes.pointer(a))


def make_capsule(struct, name):
    """A capsule owning `struct` (a ctypes ArrowSchema/ArrowArray) under `name`."""
    addr = ctypes.addressof(struct)
    _capsule_structs[addr] = struct
    dtor = _schema_capsule_dtor if name == SCHEMA_NAME else _array_capsule_dtor
    return _capsule_new(addr, name, ctypes.cast(dtor, c_void_p))


def capsule_struct(capsule, kind):
    """The ctypes view of the struct inside an unconsumed capsule (the capsule keeps it)."""
    name = SCHEMA_NAME if kind is ArrowSchema else ARRAY_NAME
    assert _capsule_is_valid(capsule, name)
    return kind.from_address(_capsule_ptr(capsule, name))


# --------------------------------------------------------------------------- a hand-made producer

_UNSET = object()


class ArrowProducer:
    """Hands out (arrow_schema, arrow_array) capsules over a NumPy array's memory.

    `values` is the values buffer (any NumPy array; its bytes are used as they are), `fmt` the
    format string (None: a NULL format). Every ArrowArray field can be overridden; `validity`
    is an optional bitmap (uint8 array), `null_values=True` exports a NULL values buffer,
    `null_buffers=True` a NULL buffers array, `schema_dictionary`/`array_dictionary`/
    `children` put non-NULL pointers where a primitive column has none. `schema_released` /
    `array_released` hand out an already released struct. Counters: `schema_releases`,
    `array_releases`; `calls` counts __arrow_c_array__ calls.
    """

    def __init__(self, values, fmt=b"i", *, length=_UNSET, offset=0, null_count=0, validity=None, n_buffers=2,
                 null_values=False, null_buffers=False, children=0, schema_children=0, schema_dictionary=False,
                 array_dictionary=False, schema_released=False, array_released=False):
        self.values = values
        self.fmt = fmt
        self.length = (len(values) - offset) if length is _UNSET else length
        self.offset = offset
        self.null_count = null_count
        self.validity = validity
        self.n_buffers = n_buffers
        self.null_values = null_values
        self.null_buffers = null_buffers
        self.children = children
        self.schema_children = schema_children
        self.schema_dictionary = schema_dictionary
        self.array_dictionary = array_dictionary
        self.schema_released = schema_released
        self.array_released = array_released
        self.schema_releases = 0
        self.array_releases = 0
        self.calls = 0

    def capsules(self):
        keep = []
        s = ArrowSchema()
        if self.fmt is not None:
            fmt = ctypes.create_string_buffer(self.fmt)
            keep.append(fmt)
            s.format = ctypes.addressof(fmt)
        s.n_children = self.schema_children
        dummy = ArrowSchema()
        keep.append(dummy)
        if self.schema_dictionary:
            s.dictionary = ctypes.addressof(dummy)
        skey = next(_keys)
        s.private_data = skey
        s.release = _null_release(RELEASE_SCHEMA) if self.schema_released else _release_schema
        _live[skey] = (self, keep)

        keep = [self.values, self.validity]
        a = ArrowArray()
        a.length = self.length
        a.null_count = self.null_count
        a.offset = self.offset
        a.n_buffers = self.n_buffers
        a.n_children = self.children
        bufs = (c_void_p * max(self.n_buffers, 2))()
        bufs[0] = None if self.validity is None else self.validity.ctypes.data
        bufs[1] = None if self.null_values else self.values.ctypes.data
        keep.append(bufs)
        a.buffers = None if self.null_buffers else ctypes.addressof(bufs)
        dummy_a = ArrowArray()
        keep.append(dummy_a)
        if self.array_dictionary:
            a.dictionary = ctypes.addressof(dummy_a)
        akey = next(_keys)
        a.private_data = akey
        a.release = _null_release(RELEASE_ARRAY) if self.array_released else _release_array
        _live[akey] = (self, keep)
        return make_capsule(s, SCHEMA_NAME), make_capsule(a, ARRAY_NAME)

    def __arrow_c_array__(self, requested_schema=None):
        self.calls += 1
        return self.capsules()


class FixedReturn:
    """Has an `__arrow_c_array__` that returns `value` as it is (for malformed returns)."""

    def __init__(self, value):
        self.value = value

    def __arrow_c_array__(self, requested_schema=None):
        return self.value


class ArrowOnly:
    """Wraps any Arrow producer, exposing only `__arrow_c_array__` (so uma.asarray takes its
    Arrow branch even for objects that also have __dlpack__ / __array__, such as pyarrow's)."""

    def __init__(self, inner):
        self.inner = inner

    def __arrow_c_array__(self, requested_schema=None):
        return self.inner.__arrow_c_array__(requested_schema)


# --------------------------------------------------------------------------- counting wrapper

_wrapped_schemas = {}  # private_data -> [wrapper, original release function]
_wrapped_arrays = {}


@RELEASE_SCHEMA
def _counting_release_schema(p):
    entry = _wrapped_schemas.get(p.contents.private_data)
    if entry is None:
        return
    entry[0].schema_releases += 1
    if entry[1] is not None:
        orig, entry[1] = entry[1], None
        orig(p)  # the producer's own release (sets release to NULL)
    p.contents.release = _null_release(RELEASE_SCHEMA)


@RELEASE_ARRAY
def _counting_release_array(p):
    entry = _wrapped_arrays.get(p.contents.private_data)
    if entry is None:
        return
    entry[0].array_releases += 1
    if entry[1] is not None:
        orig, entry[1] = entry[1], None
        orig(p)
    p.contents.release = _null_release(RELEASE_ARRAY)


class CountingArrow:
    """Wraps a real producer (pyarrow, uma): each struct it hands out gets a release callback
    that counts its calls and then runs the producer's own release (only the first time)."""

    def __init__(self, inner):
        self.inner = inner
        self.schema_releases = 0
        self.array_releases = 0

    def __arrow_c_array__(self, requested_schema=None):
        sc, ac = self.inner.__arrow_c_array__(requested_schema)
        s = capsule_struct(sc, ArrowSchema)
        a = capsule_struct(ac, ArrowArray)
        _wrapped_schemas[s.private_data] = [self, RELEASE_SCHEMA(ctypes.cast(s.release, c_void_p).value)]
        _wrapped_arrays[a.private_data] = [self, RELEASE_ARRAY(ctypes.cast(a.release, c_void_p).value)]
        s.release = _counting_release_schema
        a.release = _counting_release_array
        return sc, ac


def consume(capsules):
    """A minimal consumer: moves both structs out of the capsules (bitwise copy, source marked
    released) and returns the ctypes copies; call release(struct) on them yourself."""
    sc, ac = capsules
    s_src = capsule_struct(sc, ArrowSchema)
    a_src = capsule_struct(ac, ArrowArray)
    s, a = ArrowSchema(), ArrowArray()
    ctypes.memmove(ctypes.addressof(s), ctypes.addressof(s_src), ctypes.sizeof(s))
    ctypes.memmove(ctypes.addressof(a), ctypes.addressof(a_src), ctypes.sizeof(a))
    s_src.release = _null_release(RELEASE_SCHEMA)
    a_src.release = _null_release(RELEASE_ARRAY)
    return s, a


def release(struct):
    """Calls a moved-out struct's release once."""
    struct.release(ctypes.pointer(struct))


def read_buffers(a):
    """The buffer addresses of an ArrowArray (ctypes), as ints (0 for NULL)."""
    bufs = ctypes.cast(a.buffers, POINTER(c_void_p))
    return [bufs[i] or 0 for i in range(a.n_buffers)]


def bitmap(valid):
    """An LSB-first validity bitmap (uint8 array, 64-byte padded) of a sequence of bools."""
    bits = np.packbits(np.asarray(valid, dtype=bool), bitorder="little")
    out = np.zeros(max(64, len(bits)), dtype=np.uint8)
    out[:len(bits)] = bits
    return out
