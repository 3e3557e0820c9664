"""Test-only Arrow C Data Interface producers (ctypes), for what no real library hands out on
demand: hand-made (arrow_schema, arrow_array) capsules with any field set to any value, hand-made
arrow_array_stream capsules whose callbacks fail on request, and wrappers that count the release
calls of another producer's structs (e.g. pyarrow's).

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


def _capsule_dtor(name):
    """The destructor of capsules `name`: releases the struct it owns if still live."""
    @_CAPSULE_DTOR
    def dtor(cap):
        st = _capsule_structs.pop(_capsule_ptr_raw(cap, name), None)
        if st is not None and st.release:
            st.release(ctypes.pointer(st))
    return dtor


_schema_capsule_dtor = _capsule_dtor(SCHEMA_NAME)  # module-level: they must outlive the capsules
_array_capsule_dtor = _capsule_dtor(ARRAY_NAME)


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
        return make_capsule(self.schema_struct(), SCHEMA_NAME), make_capsule(self.array_struct(), ARRAY_NAME)

    def schema_struct(self):
        """A live ArrowSchema (ctypes) whose release counts on this producer."""
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
        return s

    def array_struct(self):
        """A live ArrowArray (ctypes) over `values` whose release counts on this producer."""
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
        return a

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


def _counting_release(release_type, table, counter):
    """A release callback of `release_type` that counts its calls on the wrapper of the
    struct's entry in `table` ([wrapper, the producer's release, ...]), then runs the
    producer's own release (only the first time)."""
    @release_type
    def release(p):
        entry = table.get(p.contents.private_data)
        if entry is None:
            return
        setattr(entry[0], counter, getattr(entry[0], counter) + 1)
        if entry[1] is not None:
            orig, entry[1] = entry[1], None
            orig(p)  # the producer's own release (sets release to NULL)
        p.contents.release = _null_release(release_type)
    return release


_counting_release_schema = _counting_release(RELEASE_SCHEMA, _wrapped_schemas, "schema_releases")
_counting_release_array = _counting_release(RELEASE_ARRAY, _wrapped_arrays, "array_releases")


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


# --------------------------------------------------------------------------- streams


class ArrowArrayStream(Structure):
    pass


GET_SCHEMA = CFUNCTYPE(ctypes.c_int, POINTER(ArrowArrayStream), POINTER(ArrowSchema))
GET_NEXT = CFUNCTYPE(ctypes.c_int, POINTER(ArrowArrayStream), POINTER(ArrowArray))
GET_LAST_ERROR = CFUNCTYPE(c_void_p, POINTER(ArrowArrayStream))  # const char*, as an address
RELEASE_STREAM = CFUNCTYPE(None, POINTER(ArrowArrayStream))
ArrowArrayStream._fields_ = [("get_schema", GET_SCHEMA), ("get_next", GET_NEXT), ("get_last_error", GET_LAST_ERROR),
                             ("release", RELEASE_STREAM), ("private_data", c_void_p)]
assert ctypes.sizeof(ArrowArrayStream) == 40

STREAM_NAME = b"arrow_array_stream"
_streams = {}  # private_data key -> producer


def _move_into(dst_ptr, src):
    ctypes.memmove(ctypes.cast(dst_ptr, c_void_p).value, ctypes.addressof(src), ctypes.sizeof(src))


@GET_SCHEMA
def _stream_get_schema(p, out):
    producer = _streams[p.contents.private_data]
    producer.get_schema_calls += 1
    if producer.schema_error:
        return producer.schema_error
    _move_into(out, producer.schema.schema_struct())
    return 0


@GET_NEXT
def _stream_get_next(p, out):
    producer = _streams[p.contents.private_data]
    i = producer.handed_out
    if producer.next_error is not None and i == producer.next_error[0]:
        return producer.next_error[1]
    if i == len(producer.chunks):
        out.contents.release = _null_release(RELEASE_ARRAY)  # the end of the stream
        return 0
    producer.handed_out += 1
    _move_into(out, producer.chunks[i].array_struct())
    return 0


@GET_LAST_ERROR
def _stream_get_last_error(p):
    return ctypes.addressof(_streams[p.contents.private_data].message)


@RELEASE_STREAM
def _stream_release(p):
    producer = _streams.get(p.contents.private_data)
    if producer is not None:
        producer.stream_releases += 1
    p.contents.release = _null_release(RELEASE_STREAM)


_stream_capsule_dtor = _capsule_dtor(STREAM_NAME)


class ArrowStreamProducer:
    """Hands out arrow_array_stream capsules whose arrays are `chunks` (ArrowProducers, each
    counting its own releases) under the schema of `schema` (an ArrowProducer; default the
    first chunk). `schema_error=code` makes get_schema fail; `next_error=(i, code)` makes the
    i-th get_next fail; get_last_error returns `message`. `null_get_next=True` exports a NULL
    get_next. Counters: stream_releases, get_schema_calls, handed_out."""

    def __init__(self, chunks, schema=None, *, schema_error=0, next_error=None, message=b"producer says no",
                 null_get_next=False):
        self.chunks = list(chunks)
        self.schema = schema if schema is not None else self.chunks[0]
        self.schema_error = schema_error
        self.next_error = next_error
        self.message = ctypes.create_string_buffer(message)
        self.null_get_next = null_get_next
        self.stream_releases = 0
        self.get_schema_calls = 0
        self.handed_out = 0

    def __arrow_c_stream__(self, requested_schema=None):
        st = ArrowArrayStream()
        st.get_schema = _stream_get_schema
        st.get_next = GET_NEXT() if self.null_get_next else _stream_get_next
        st.get_last_error = _stream_get_last_error
        st.release = _stream_release
        key = next(_keys)
        st.private_data = key
        _streams[key] = self
        addr = ctypes.addressof(st)
        _capsule_structs[addr] = st
        return _capsule_new(addr, STREAM_NAME, ctypes.cast(_stream_capsule_dtor, c_void_p))


_wrapped_streams = {}  # stream private_data -> [wrapper, original release, original get_next]


@GET_NEXT
def _counting_get_next(p, out):
    entry = _wrapped_streams[p.contents.private_data]
    rc = entry[2](p, out)
    a = out.contents
    if rc == 0 and a.release:
        _wrapped_arrays[a.private_data] = [entry[0], RELEASE_ARRAY(ctypes.cast(a.release, c_void_p).value)]
        a.release = _counting_release_array
        entry[0].arrays_out += 1
    return rc


_counting_release_stream = _counting_release(RELEASE_STREAM, _wrapped_streams, "stream_releases")


class CountingStream:
    """Wraps a real stream producer (pyarrow's ChunkedArray): its stream's release and the
    release of every array its get_next hands out count their calls, then run the producer's
    own (only the first time). Counters: stream_releases, arrays_out, array_releases."""

    def __init__(self, inner):
        self.inner = inner
        self.stream_releases = 0
        self.arrays_out = 0
        self.array_releases = 0

    def __arrow_c_stream__(self, requested_schema=None):
        cap = self.inner.__arrow_c_stream__(requested_schema)
        assert _capsule_is_valid(cap, STREAM_NAME)
        st = ArrowArrayStream.from_address(_capsule_ptr(cap, STREAM_NAME))
        _wrapped_streams[st.private_data] = [self, RELEASE_STREAM(ctypes.cast(st.release, c_void_p).value),
                                             GET_NEXT(ctypes.cast(st.get_next, c_void_p).value)]
        st.get_next = _counting_get_next
        st.release = _counting_release_stream
        return cap
