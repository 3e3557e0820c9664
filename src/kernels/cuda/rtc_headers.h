// src/kernels/cuda/rtc_headers.h — the headers that generated chain kernels are compiled
// against (internal): their text, embedded in the library at build time
// (cmake/embed_rtc_headers.cmake), so that NVRTC needs no uma sources at run time.
#pragma once

namespace uma::kernels::cuda {

struct RtcHeader {
  const char* name;  // as included: "kernels/cuda/device_ops.cuh", "uma/bool8.h", ...
  const char* text;
};
extern const RtcHeader kRtcHeaders[];
extern const int kRtcHeaderCount;

}  // namespace uma::kernels::cuda
