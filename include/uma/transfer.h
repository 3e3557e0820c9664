// uma/transfer.h — moving arrays between devices (host <-> cuda, cuda <-> cuda).
//
// Copies go through the CUDA memory layer (uma/memory/cuda.h): host -> device and device ->
// host through the pinned staging pipeline (Note [Staging pipeline]), strided device views
// packed on the GPU first, strided host views packed on the host first. Every function
// returns after the bytes arrived (a result on the host is readable at once).
#pragma once
#include "uma/array.h"

namespace uma {

/// A C-contiguous, writable copy of `a` on device `to` with a's dtype and shape. RuntimeError
/// naming the reason when `to` (or a's device) is a cuda device that is not available.
Array to_device(const Array& a, Device to);

/// The same as to_device, converting to `dtype` on the way (conversion runs on the host).
Array to_device(const Array& a, Device to, DType dtype);

/// `a` itself when it is on `to`, else to_device(a, to).
Array on_device(const Array& a, Device to);

/// on_device(a, cpu): `a` itself on the host, else a host copy (np.asarray and item() of cuda
/// arrays).
Array to_host(const Array& a);

}  // namespace uma
