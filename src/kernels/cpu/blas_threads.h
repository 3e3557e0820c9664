// src/kernels/cpu/blas_threads.h — OpenBLAS's threads (internal; uma/threads.h is the policy).
#pragma once

namespace uma::kernels::cpu {

/// Sets OpenBLAS to run on the calling thread, once per process; every OpenBLAS call (the
/// products of matmul.cpp, the LAPACK routines of linalg.cpp) is preceded by it, so uma's OpenMP
/// team is the only thread pool (two pools on the same cores oversubscribe them: one spins while
/// the other computes).
void blas_on_calling_thread();

}  // namespace uma::kernels::cpu
