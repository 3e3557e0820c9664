// Kernel images kept on disk between processes (kernels/cuda/chain_compiler.cpp's generated
// chain kernels).
//
// Note [Kernel image cache]
// A generated kernel costs 0.15-0.75 s of NVRTC per process; its image (a cubin) is kept in
// a folder of files, one per kernel, so a later process loads it instead. A file is named by a
// 128-bit hash of the kernel's identity (everything its image depends on: the source, the
// compiler's version and options, the architecture, the embedded headers' digest) and holds the
// identity itself, which a read compares in full: a hash collision, a truncated or foreign file
// is a miss, never a wrong kernel. A file is written under a temporary name and renamed into
// place, so readers (other processes included) see whole files only. The folder is
// $UMA_CACHE_DIR, else $XDG_CACHE_HOME/uma, else $HOME/.cache/uma, made with mode 0700; a
// folder that another user owns or that others may write is not used (its images would be code
// this process runs). UMA_CACHE_DIR set to an empty value turns the cache off. Every failure
// (no folder, no space, a bad file) makes the cache miss: the caller compiles, as without it.
// Nothing is ever deleted; each image is tens of kilobytes.
#pragma once

#include <string>

namespace uma::kernels {

/// The cache's folder (Note [Kernel image cache]); "" when the cache is off.
std::string kernel_cache_dir();

/// The file in `folder` that holds the image for `identity`.
std::string kernel_cache_file(const std::string& folder, const std::string& identity);

/// The image stored for `identity` in `folder`; "" on a miss (no file, another identity, a
/// short or malformed file, a folder that is not safe to use).
std::string read_kernel_image(const std::string& folder, const std::string& identity);

/// Stores `image` for `identity` in `folder`, creating the folder (mode 0700) if needed; false
/// when it could not (the cache is best-effort: the caller goes on without it).
bool write_kernel_image(const std::string& folder, const std::string& identity, const std::string& image);

/// A 128-bit digest of `text` as 32 hex digits (two 64-bit FNV-1a hashes of different seeds):
/// names cache files and summarizes large parts of an identity. Not cryptographic.
std::string digest_hex(const std::string& text);

}  // namespace uma::kernels
