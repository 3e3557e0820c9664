"""Test-only producers and consumers for inputs no mainstream library hands out on demand:
hand-made DLPack capsules (ctypes, dlpack.h 1.x layouts), objects that expose only
`__array_interface__` or only `__array__`, a legacy-only DLPack wrapper, and a raw
`PyObject_GetBuffer` call with explicit request flags."""
import contextlib
import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int32, c_int64, c_ssize_t,
                    c_uint8, c_uint16, c_uint32, c_uint64, c_void_p, py_object)

import numpy as np

# --------------------------------------------------------------------------- DLPack ABI (dlpack.h 1.x)


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    pass


class DLManagedTensor(Structure):
    pass


DELETER_V = CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DELETER = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", DELETER_V),
                                     ("flags", c_uint64), ("dl_tensor", DLTensor)]
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", DELETER)]

assert ctypes.sizeof(DLTensor) == 48
assert ctypes.sizeof(DLManagedTensorVersioned) == 8 + 8 + 8 + 8 + 48
assert ctypes.sizeof(DLManagedTensor) == 48 + 8 + 8

FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1

KDL_CPU = 1
# dlpack dtype codes
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_COMPLEX, KDL_BOOL = 0, 1, 2, 4, 5, 6

DL_DTYPES = {  # dtype name -> (code, bits)
    "bool": (KDL_BOOL, 8), "int8": (KDL_INT, 8), "int16": (KDL_INT, 16), "int32": (KDL_INT, 32),
    "int64": (KDL_INT, 64), "uint8": (KDL_UINT, 8), "uint16": (KDL_UINT, 16), "uint32": (KDL_UINT, 32),
    "uint64": (KDL_UINT, 64), "float16": (KDL_FLOAT, 16), "bfloat16": (KDL_BFLOAT, 16), "float32": (KDL_FLOAT, 32),
    "float64": (KDL_FLOAT, 64), "complex64": (KDL_COMPLEX, 64), "complex128": (KDL_COMPLEX, 128),
}

_pyapi = ctypes.pythonapi
_pyapi.PyCapsule_New.restype = py_object
_pyapi.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
_pyapi.PyCapsule_GetName.restype = c_char_p
_pyapi.PyCapsule_GetName.argtypes = [py_object]
_pyapi.PyCapsule_GetPointer.restype = c_void_p
_pyapi.PyCapsule_GetPointer.argtypes = [py_object, c_char_p]

# capsule names must outlive every capsule: module-level constants
NAME_VERSIONED = b"dltensor_versioned"
NAME_LEGACY = b"dltensor"


def capsule_name(capsule):
    return _pyapi.PyCapsule_GetName(capsule).decode()


def _tensor_info(t):
    shape = tuple(t.shape[i] for i in range(t.ndim)) if t.ndim else ()
    strides = None if not t.strides else tuple(t.strides[i] for i in range(t.ndim))
    return {"data": t.data or 0, "device": (t.device.device_type, t.device.device_id), "ndim": t.ndim,
            "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes), "shape": shape, "strides": strides,
            "byte_offset": t.byte_offset}


def read_versioned_capsule(capsule):
    """The fields of an unconsumed versioned capsule, copied into a dict (the capsule keeps
    ownership; its destructor frees the struct later)."""
    p = _pyapi.PyCapsule_GetPointer(capsule, NAME_VERSIONED)
    m = DLManagedTensorVersioned.from_address(p)
    info = _tensor_info(m.dl_tensor)
    info.update(version=(m.version.major, m.version.minor), flags=m.flags)
    return info


def read_legacy_capsule(capsule):
    """The fields of an unconsumed legacy capsule, copied into a dict."""
    p = _pyapi.PyCapsule_GetPointer(capsule, NAME_LEGACY)
    return _tensor_info(DLManagedTensor.from_address(p).dl_tensor)


_live = {}  # address of a managed struct -> (producer, objects to keep alive until the deleter runs)


@DELETER_V
def _deleter_versioned(mp):
    addr = ctypes.cast(mp, c_void_p).value
    producer, _keep = _live.pop(addr)
    producer.deleted += 1


@DELETER
def _deleter_legacy(mp):
    addr = ctypes.cast(mp, c_void_p).value
    producer, _keep = _live.pop(addr)
    producer.deleted += 1


class DLPackProducer:
    """Hands out hand-made DLPack capsules over the memory of a NumPy array `base`.

    shape / strides (in elements; strides=None exports a NULL strides pointer) describe the
    view; `byte_offset` is put into DLTensor.byte_offset while `data` points `data_shift`
    bytes before it (so data + byte_offset is the first element). `legacy_only` producers take
    no max_version (TypeError), like PyTorch before ~2.9. `deleted` counts deleter calls.
    """

    def __init__(self, base, shape, strides, dtype, *, first_element_offset=0, byte_offset=0, flags=0,
                 version=(1, 1), legacy_only=False, device=(KDL_CPU, 0), code_bits=None, null_data=False):
        self.base = base
        self.shape = tuple(shape)
        self.strides = None if strides is None else tuple(strides)
        self.code_bits = code_bits or DL_DTYPES[dtype]
        self.first_element_offset = first_element_offset
        self.byte_offset = byte_offset
        self.flags = flags
        self.version = version
        self.legacy_only = legacy_only
        self.device = device
        self.null_data = null_data
        self.deleted = 0
        self.calls = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None, **extra):
        self.calls.append({"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy, **extra})
        if self.legacy_only and (max_version is not None or dl_device is not None or copy is not None):
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        versioned = max_version is not None and tuple(max_version) >= (1, 0) and not self.legacy_only
        ndim = len(self.shape)
        shape = (c_int64 * max(ndim, 1))(*self.shape)
        strides = None if self.strides is None else (c_int64 * max(ndim, 1))(*self.strides)
        base_ptr = self.base.__array_interface__["data"][0]
        first = base_ptr + self.first_element_offset
        data = 0 if self.null_data else first - self.byte_offset
        keep = [shape, strides, self.base]
        if versioned:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(*self.version)
            m.deleter = _deleter_versioned
            m.flags = self.flags
            t = m.dl_tensor
            name = NAME_VERSIONED
        else:
            m = DLManagedTensor()
            m.deleter = _deleter_legacy
            t = m.dl_tensor
            name = NAME_LEGACY
        t.data = data
        t.device = DLDevice(*self.device)
        t.ndim = ndim
        t.dtype = DLDataType(self.code_bits[0], self.code_bits[1], 1)
        t.shape = ctypes.cast(shape, POINTER(c_int64)) if ndim else None
        t.strides = ctypes.cast(strides, POINTER(c_int64)) if strides is not None and ndim else None
        t.byte_offset = self.byte_offset
        keep.append(m)
        addr = ctypes.addressof(m)
        _live[addr] = (self, keep)
        return _pyapi.PyCapsule_New(addr, name, None)


class LegacyDLPack:
    """Wraps any DLPack producer but offers only the legacy protocol (no max_version keyword)."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def __dlpack__(self, stream=None, **kw):
        self.calls.append(dict(kw, stream=stream))
        if kw:
            raise TypeError(f"__dlpack__() got unexpected keyword arguments {sorted(kw)}")
        return self.inner.__dlpack__()

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


class RecordingDLPack:
    """Wraps a producer and records the keywords each __dlpack__ call received."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def __dlpack__(self, **kw):
        self.calls.append(kw)
        return self.inner.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


# --------------------------------------------------------------------------- array interface / __array__


class ArrayInterfaceObject:
    """Exposes only a hand-made `__array_interface__` (version 3) over `owner`'s memory."""

    def __init__(self, owner, *, shape, typestr, strides=None, offset=0, readonly=False, ptr=None):
        self.owner = owner
        base = owner.__array_interface__["data"][0] if ptr is None else ptr
        self.interface = {
            "version": 3, "shape": tuple(shape), "typestr": typestr,
            "data": (base + offset, bool(readonly)), "strides": None if strides is None else tuple(strides),
        }
        self.accessed = 0

    @property
    def __array_interface__(self):
        self.accessed += 1
        return self.interface


class ArrayMethodObject:
    """Exposes only `__array__` (NumPy 2 signature); records its calls."""

    def __init__(self, value):
        self.value = value
        self.calls = []

    def __array__(self, dtype=None, copy=None):
        self.calls.append((dtype, copy))
        v = self.value
        if dtype is not None:
            v = v.astype(dtype)
        if copy:
            v = v.copy()
        return v


class DLPackAndInterface(DLPackProducer):
    """A DLPack producer that also has an `__array_interface__`; records which one is used."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.interface_accessed = 0

    @property
    def __array_interface__(self):
        self.interface_accessed += 1
        return self.base.__array_interface__


# --------------------------------------------------------------------------- buffer consumer

PyBUF_SIMPLE = 0
PyBUF_WRITABLE = 0x0001
PyBUF_FORMAT = 0x0004
PyBUF_ND = 0x0008
PyBUF_STRIDES = 0x0010 | PyBUF_ND
PyBUF_C_CONTIGUOUS = 0x0020 | PyBUF_STRIDES
PyBUF_F_CONTIGUOUS = 0x0040 | PyBUF_STRIDES
PyBUF_ANY_CONTIGUOUS = 0x0080 | PyBUF_STRIDES
PyBUF_INDIRECT = 0x0100 | PyBUF_STRIDES
PyBUF_FULL_RO = PyBUF_INDIRECT | PyBUF_FORMAT
PyBUF_FULL = PyBUF_FULL_RO | PyBUF_WRITABLE
PyBUF_RECORDS_RO = PyBUF_STRIDES | PyBUF_FORMAT


class Py_buffer(Structure):
    _fields_ = [("buf", c_void_p), ("obj", c_void_p), ("len", c_ssize_t), ("itemsize", c_ssize_t),
                ("readonly", c_int), ("ndim", c_int), ("format", c_char_p), ("shape", POINTER(c_ssize_t)),
                ("strides", POINTER(c_ssize_t)), ("suboffsets", POINTER(c_ssize_t)), ("internal", c_void_p)]


_GetBuffer = _pyapi.PyObject_GetBuffer
_GetBuffer.argtypes = [py_object, POINTER(Py_buffer), c_int]
_GetBuffer.restype = c_int
_Release = _pyapi.PyBuffer_Release
_Release.argtypes = [POINTER(Py_buffer)]
_Release.restype = None


@contextlib.contextmanager
def get_buffer(obj, flags):
    """PyObject_GetBuffer(obj, flags); yields a dict view of the Py_buffer, released on exit.
    A refused request raises the exporter's exception (ctypes.pythonapi checks the error)."""
    view = Py_buffer()
    _GetBuffer(obj, ctypes.byref(view), flags)
    try:
        nd = view.ndim
        yield {
            "buf": view.buf, "len": view.len, "itemsize": view.itemsize, "readonly": bool(view.readonly),
            "ndim": nd, "format": None if view.format is None else view.format.decode(),
            "shape": None if not view.shape else tuple(view.shape[i] for i in range(nd)),
            "strides": None if not view.strides else tuple(view.strides[i] for i in range(nd)),
            "suboffsets": None if not view.suboffsets else tuple(view.suboffsets[i] for i in range(nd)),
        }
    finally:
        _Release(ctypes.byref(view))


def read_bytes(address, n):
    return ctypes.string_at(address, n)


def element_at(address, dtype):
    """The value of one element of `dtype` stored at `address`."""
    dt = np.dtype(dtype)
    return np.frombuffer(ctypes.string_at(address, dt.itemsize), dtype=dt)[0]

