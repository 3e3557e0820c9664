"""A test-only buffer-protocol exporter with every Py_buffer field under the test's control.

Python before 3.12 cannot define `__buffer__`, and no library exports '<l' (4 bytes),
'!H' or a lying `len` on demand, so this builds a heap type with `PyType_FromSpec` whose
`bf_getbuffer` / `bf_releasebuffer` slots are ctypes callbacks. An instance serves the same
view (format, itemsize, shape, strides, suboffsets, len, readonly) to every request, over
bytes it owns; it counts `gets` and `releases` so a test can assert no export leaked.
"""
import ctypes
from ctypes import POINTER, Structure, c_char_p, c_int, c_ssize_t, c_uint, c_void_p, py_object

from _producers import Py_buffer

_Py_bf_getbuffer, _Py_bf_releasebuffer = 1, 2
_Py_TPFLAGS_BASETYPE = 1 << 10
_Py_TPFLAGS_DEFAULT = 1 << 18  # Py_TPFLAGS_HAVE_VERSION_TAG


class _PyType_Slot(Structure):
    _fields_ = [("slot", c_int), ("pfunc", c_void_p)]


class _PyType_Spec(Structure):
    _fields_ = [("name", c_char_p), ("basicsize", c_int), ("itemsize", c_int), ("flags", c_uint),
                ("slots", POINTER(_PyType_Slot))]


_GETBUF = ctypes.PYFUNCTYPE(c_int, py_object, POINTER(Py_buffer), c_int)
_RELBUF = ctypes.PYFUNCTYPE(None, py_object, POINTER(Py_buffer))
_IncRef = ctypes.PYFUNCTYPE(None, py_object)(("Py_IncRef", ctypes.pythonapi))
_FromSpec = ctypes.PYFUNCTYPE(py_object, POINTER(_PyType_Spec))(("PyType_FromSpec", ctypes.pythonapi))


@_GETBUF
def _getbuffer(self, view, flags):
    v = view.contents
    v.buf = self._buf_addr
    v.obj = id(self)
    _IncRef(self)  # PyBuffer_Release drops this reference
    v.len = self._len
    v.itemsize = self._itemsize
    v.readonly = int(self._readonly)
    v.ndim = self._ndim
    v.format = self._format  # bytes kept alive by self (None: NULL, meaning 'B')
    v.shape = self._shape_p
    v.strides = self._strides_p
    v.suboffsets = self._suboffsets_p
    v.internal = None
    self.gets += 1
    return 0


@_RELBUF
def _releasebuffer(self, view):
    self.releases += 1


_slots = (_PyType_Slot * 3)(_PyType_Slot(_Py_bf_getbuffer, ctypes.cast(_getbuffer, c_void_p).value),
                            _PyType_Slot(_Py_bf_releasebuffer, ctypes.cast(_releasebuffer, c_void_p).value),
                            _PyType_Slot(0, None))
_spec = _PyType_Spec(b"_buffer_exporter.RawExporter", 0, 0, _Py_TPFLAGS_DEFAULT | _Py_TPFLAGS_BASETYPE, _slots)
_RawExporter = _FromSpec(ctypes.byref(_spec))


def _ssize_array(values):
    if values is None:
        return None, None
    arr = (c_ssize_t * max(len(values), 1))(*values)
    return arr, ctypes.cast(arr, POINTER(c_ssize_t))


class BufferExporter(_RawExporter):
    """Exports `data` (bytes-like; copied into memory this object owns) as a buffer with the
    given format (str, or None for a NULL format), itemsize, shape, strides (bytes; None: NULL),
    suboffsets, len (default: len(data)), readonly and first-element offset `start`."""

    def __init__(self, data, fmt, itemsize, shape, strides=None, *, suboffsets=None, length=None, readonly=False,
                 start=0):
        self._nbytes = len(data)
        self._mem = ctypes.create_string_buffer(bytes(data), max(len(data), 1))
        self._buf_addr = ctypes.addressof(self._mem) + start
        self._len = len(data) if length is None else length
        self._itemsize = itemsize
        self._readonly = readonly
        self._ndim = len(shape)
        self._format = None if fmt is None else fmt.encode()
        self._shape, self._shape_p = _ssize_array(tuple(shape))
        self._strides, self._strides_p = _ssize_array(None if strides is None else tuple(strides))
        self._subs, self._suboffsets_p = _ssize_array(None if suboffsets is None else tuple(suboffsets))
        self.gets = 0
        self.releases = 0

    @property
    def address(self):
        return self._buf_addr

    def raw(self):
        """The bytes the exporter owns now."""
        return self._mem.raw[: self._nbytes]
