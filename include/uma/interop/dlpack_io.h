// uma/interop/dlpack_io.h — converting between uma arrays and DLPack managed tensors.
#pragma once
#include "uma/array.h"
#include "uma/interop/copy_rules.h"
#include "uma/interop/dlpack.h"

namespace uma::interop {

/// DLPack dtype of a uma dtype (bool -> (kBool, 8), bfloat16 -> (kBfloat, 16), ...).
dlpack::DLDataType to_dlpack_dtype(DType t);
/// uma dtype of a DLPack dtype; TypeError naming code/bits/lanes if not representable
/// (sub-byte and FP8 types, lanes != 1, opaque handles, unknown codes).
DType from_dlpack_dtype(dlpack::DLDataType t);

/// The DLPack device type `a` is announced and exported as: kCPU for host arrays, kCUDA for
/// every cuda array. Managed (unified) memory is a valid device pointer on its device, so it
/// goes as kCUDA too, which every consumer accepts (PyTorch and JAX refuse kCUDAManaged); a
/// consumer that asks for kCUDAManaged through dl_device gets that code (exportable_as).
int32_t dlpack_device_code(const Array& a);
/// Whether `a` can be exported as DLPack device type `code` without a copy: its own code, or
/// kCUDAManaged for managed memory.
bool exportable_as(const Array& a, int32_t code);

/// A new versioned managed tensor viewing `a` (strides always filled in, data NULL for
/// size 0), with device type `code` (exportable_as(a, code) must hold). It holds a reference
/// to a's storage until its deleter runs. Flags: READ_ONLY when !a.writable(), IS_COPIED when
/// `copied`.
dlpack::DLManagedTensorVersioned* export_versioned(const Array& a, bool copied, int32_t code);
/// A new legacy managed tensor viewing `a` (no flags: the caller refuses read-only arrays).
dlpack::DLManagedTensor* export_legacy(const Array& a, int32_t code);

/// Describes a DLTensor as a ForeignLayout (validates ndim, shape, dtype; adds byte_offset;
/// NULL strides mean C-contiguous). Throws TypeError/ValueError/BufferError-like Copy errors.
ForeignLayout layout_of(const dlpack::DLTensor& t, bool readonly);

}  // namespace uma::interop
