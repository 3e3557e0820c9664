"""A test-only DLPack producer that can hand out malformed tensors.

No real library produces a negative shape, a major version 2, a NULL data pointer with
elements, or strides that address beyond int64 on demand, so this module builds the structs
itself (ctypes, the dlpack.h 1.x layouts from _producers.py) and wraps them in capsules with
`ctypes.pythonapi.PyCapsule_New`. Every field is set explicitly; nothing is validated.

Ownership follows the spec: the capsule owns the managed struct until a consumer renames
it to "used_dltensor(_versioned)"; the producer's capsule destructor calls the deleter only
for a capsule that is still unconsumed. The deleter counts its calls in `Producer.deleted`,
so a test asserts "called exactly once" on every path.
"""
import ctypes
from ctypes import POINTER, c_char_p, c_int, c_int64, c_void_p

import numpy as np

from _producers import (DELETER, DELETER_V, DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned,
                        DLPackVersion)

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST = 1, 2, 3
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_OPAQUE, KDL_BFLOAT, KDL_COMPLEX, KDL_BOOL = 0, 1, 2, 3, 4, 5, 6
FLAG_READ_ONLY, FLAG_IS_COPIED, FLAG_IS_SUBBYTE_TYPE_PADDED = 1, 2, 4

CODE_BITS = {  # NumPy dtype name -> (code, bits)
    "bool": (KDL_BOOL, 8), "int8": (KDL_INT, 8), "int16": (KDL_INT, 16), "int32": (KDL_INT, 32),
    "int64": (KDL_INT, 64), "uint8": (KDL_UINT, 8), "uint16": (KDL_UINT, 16), "uint32": (KDL_UINT, 32),
    "uint64": (KDL_UINT, 64), "float16": (KDL_FLOAT, 16), "float32": (KDL_FLOAT, 32), "float64": (KDL_FLOAT, 64),
    "complex64": (KDL_COMPLEX, 64), "complex128": (KDL_COMPLEX, 128),
}

NAME_VERSIONED = b"dltensor_versioned"  # module constants: capsule names must outlive capsules
NAME_LEGACY = b"dltensor"

# Raw C-API entry points taking PyObject* as a plain address: the capsule destructor runs
# while the capsule's refcount is 0, so it must not be turned into a Python object.
_IsValid = ctypes.PYFUNCTYPE(c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_GetPointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_GetName = ctypes.PYFUNCTYPE(c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
_New = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, c_char_p, c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_DESTRUCTOR = ctypes.PYFUNCTYPE(None, c_void_p)

_live = {}  # address of a managed struct -> (producer, objects kept alive until its deleter runs)
_leaked = []  # structs of NULL-deleter producers: nobody may free them (test-only, tiny)


def _on_delete(addr):
    producer, _keep = _live.pop(addr)
    producer.deleted += 1


@DELETER_V
def _deleter_versioned(mp):
    _on_delete(ctypes.cast(mp, c_void_p).value)


@DELETER
def _deleter_legacy(mp):
    _on_delete(ctypes.cast(mp, c_void_p).value)


@_DESTRUCTOR
def _capsule_destructor(cap, _is_valid=_IsValid, _get=_GetPointer, _v=DLManagedTensorVersioned, _l=DLManagedTensor,
                        _pointer=ctypes.pointer):
    # Only an unconsumed capsule still owns its tensor (spec); a "used_" one does nothing.
    # (Globals are bound as defaults: capsules may die while the interpreter shuts down.)
    if _is_valid(cap, b"dltensor_versioned"):
        m = _v.from_address(_get(cap, b"dltensor_versioned"))
        if m.deleter:
            m.deleter(_pointer(m))
    elif _is_valid(cap, b"dltensor"):
        m = _l.from_address(_get(cap, b"dltensor"))
        if m.deleter:
            m.deleter(_pointer(m))


_DESTRUCTOR_ADDR = ctypes.cast(_capsule_destructor, c_void_p).value


def capsule_name(capsule):
    return _GetName(capsule).decode()


class Producer:
    """Exports one hand-made tensor over the memory of NumPy array `base` (may be None).

    data: "base" (the address of base's first byte, minus `byte_offset` so that data +
    byte_offset lands on element (0, ..., 0) plus `first_byte`), an int address, or 0 for NULL.
    shape, strides (in elements; None exports a NULL pointer), dtype (a NumPy name) or
    code/bits/lanes, ndim (defaults to len(shape); may lie), device, version, flags: as given.
    legacy: hand out only "dltensor" capsules. null_deleter: export a NULL deleter.
    `deleted` counts deleter calls; `calls` records the keywords of each __dlpack__ call;
    `capsules` keeps the capsules handed out (to inspect their names afterwards).
    """

    def __init__(self, base, shape, strides=None, dtype=None, *, code=None, bits=None, lanes=1, ndim=None,
                 data="base", first_byte=0, byte_offset=0, device=(KDL_CPU, 0), version=(1, 1), flags=0,
                 legacy=False, null_deleter=False, null_shape=False):
        self.base = base
        self.shape = tuple(shape)
        self.strides = None if strides is None else tuple(strides)
        if dtype is not None:
            code, bits = CODE_BITS[np.dtype(dtype).name]
        self.code, self.bits, self.lanes = code, bits, lanes
        self.ndim = len(self.shape) if ndim is None else ndim
        self.data = data
        self.first_byte = first_byte
        self.byte_offset = byte_offset
        self.device = device
        self.version = version
        self.flags = flags
        self.legacy = legacy
        self.null_deleter = null_deleter
        self.null_shape = null_shape
        self.deleted = 0
        self.calls = []
        self.capsules = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append({"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy})
        versioned = not self.legacy and max_version is not None and tuple(max_version) >= (1, 0)
        return self.capsule(versioned)

    def capsule(self, versioned=True):
        n = max(len(self.shape), 1)
        shape = (c_int64 * n)(*[s & 0xFFFFFFFFFFFFFFFF if s >= 2**63 else s for s in self.shape])
        strides = None if self.strides is None else (c_int64 * n)(*self.strides)
        if self.data == "base":
            addr = self.base.__array_interface__["data"][0] + self.first_byte - self.byte_offset
        else:
            addr = self.data
        if versioned:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(*self.version)
            m.flags = self.flags
            m.deleter = DELETER_V() if self.null_deleter else _deleter_versioned
            name = NAME_VERSIONED
        else:
            m = DLManagedTensor()
            m.deleter = DELETER() if self.null_deleter else _deleter_legacy
            name = NAME_LEGACY
        t = m.dl_tensor
        t.data = addr or None
        t.device = DLDevice(*self.device)
        t.ndim = self.ndim
        t.dtype = DLDataType(self.code, self.bits, self.lanes)
        t.shape = None if self.null_shape else ctypes.cast(shape, POINTER(c_int64))
        t.strides = None if strides is None else ctypes.cast(strides, POINTER(c_int64))
        t.byte_offset = self.byte_offset
        keep = [shape, strides, self.base, m]
        struct_addr = ctypes.addressof(m)
        if self.null_deleter:
            _leaked.append(keep)
        else:
            _live[struct_addr] = (self, keep)
        cap = _New(struct_addr, name, _DESTRUCTOR_ADDR)
        self.capsules.append(cap)
        return cap


class NoKeywordProducer:
    """A producer from before max_version: `__dlpack__()` takes no arguments at all."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = 0

    def __dlpack__(self):
        self.calls += 1
        return self.inner.capsule(versioned=False)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


class SameCapsule:
    """Returns one capsule object from every __dlpack__ call (to consume it twice)."""

    def __init__(self, capsule):
        self.cap = capsule

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return (KDL_CPU, 0)


def read_capsule(capsule):
    """The fields of an unconsumed capsule (versioned or legacy) as a dict; the capsule keeps
    ownership."""
    name = capsule_name(capsule)
    p = _GetPointer(id(capsule), name.encode())
    if name == "dltensor_versioned":
        m = DLManagedTensorVersioned.from_address(p)
        extra = {"version": (m.version.major, m.version.minor), "flags": m.flags}
    else:
        m = DLManagedTensor.from_address(p)
        extra = {}
    t = m.dl_tensor
    nd = t.ndim
    info = {"name": name, "data": t.data or 0, "device": (t.device.device_type, t.device.device_id), "ndim": nd,
            "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes),
            "shape": tuple(t.shape[i] for i in range(nd)) if nd else (),
            "strides": None if not t.strides else tuple(t.strides[i] for i in range(nd)),
            "byte_offset": t.byte_offset}
    info.update(extra)
    return info
