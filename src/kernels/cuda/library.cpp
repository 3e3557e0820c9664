#include "kernels/cuda/library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace uma::kernels::cuda {

void* open_library(const char* env, std::initializer_list<const char*> names, std::string& tried) {
  auto attempt = [&](const char* name) -> void* {
    if (!name || !*name) return nullptr;
    void* so = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
      const char* e = dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (e ? e : name);
    }
    return so;
  };
  if (void* so = attempt(std::getenv(env))) return so;
  for (const char* name : names)
    if (void* so = attempt(name)) return so;
  return nullptr;
}

}  // namespace uma::kernels::cuda
