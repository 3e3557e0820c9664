// uma/threads.h — the one thread policy of uma's host work: OpenMP regions of the CPU
// kernels, the row blocks of matrix products (OpenBLAS itself runs on the calling thread) and
// the threaded host copies all ask it how many threads to use.
//
// Two numbers decide it:
//  * max_threads(): the user's ceiling (set_max_threads, UMA_NUM_THREADS, OMP_NUM_THREADS, or
//    the CPUs this process may run on);
//  * available(): the cores that are not busy with other processes right now, sampled from
//    /proc/stat. On a machine whose cores another process keeps busy, a thread team is only as
//    fast as its last member, and a member waiting for a time slice stalls every op for
//    milliseconds; so a parallel region never asks for more threads than there are free cores.
// for_work(work, grain) combines them with the size of the work: each thread must get at least
// `grain` units, so small ops never pay for a thread team.
#pragma once

#include <cstdint>

namespace uma::threads {

/// The most threads one host kernel or matrix product uses (>= 1). Default: the environment
/// variable UMA_NUM_THREADS, else OMP_NUM_THREADS (its first entry), else the CPUs this
/// process may run on (its affinity mask, capped by a cgroup v2 CPU quota).
int max_threads();

/// Sets max_threads() to n (1 to 65536); n == 0 restores the default. ValueError otherwise.
void set_max_threads(int n);

/// The cores free for this process: those idle or running this process's threads over the last
/// sampling window (at least 100 ms of /proc/stat, over the CPUs of the affinity mask), capped by
/// max_threads(), at least 1. max_threads() where /proc/stat cannot be read.
int available();

/// The threads for a parallel region of `work` units when each thread should get at least
/// `grain` units: min(available(), work / grain), at least 1. Work under 2 * grain gets 1
/// without sampling anything.
int for_work(int64_t work, int64_t grain);

/// The free cores that a sampling window shows (the rule available() applies): `idle_ticks`
/// and `total_ticks` are the window's /proc/stat ticks summed over `cpus` CPUs, `tick_s` the
/// length of a tick in seconds, `own_cpu_s` the CPU seconds this process used in the window.
/// Rounded to the nearest core, between 1 and cpus; cpus when total_ticks is 0.
int free_cores(uint64_t idle_ticks, uint64_t total_ticks, double tick_s, double own_cpu_s, int cpus);

namespace testing {
/// Whether available() ignores the load of other processes (returns max_threads()), so that a
/// test gets the team it asks for on a busy machine. Default false.
void ignore_load(bool on);
}  // namespace testing

}  // namespace uma::threads
