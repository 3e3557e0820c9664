// kernels/cuda/library.h — NVIDIA's math libraries (cuBLAS, cuFFT, cuSOLVER), opened at run time
// so that a CUDA build needs none of them to load, and names what is missing when one is asked for.
#pragma once
#include <initializer_list>
#include <string>

namespace uma::kernels::cuda {

/// dlopen (RTLD_NOW | RTLD_LOCAL) of the file that environment variable `env` names, when it is
/// set, else of the first of `names` that loads; nullptr when none does, with `tried` listing
/// the loader's message for each attempt ("; "-separated).
void* open_library(const char* env, std::initializer_list<const char*> names, std::string& tried);

}  // namespace uma::kernels::cuda
