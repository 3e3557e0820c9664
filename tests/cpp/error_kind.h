// The kind of uma::Error a callable throws, for the C++ tests (one definition for every suite).
#pragma once

#include <gtest/gtest.h>

#include "uma/error.h"

namespace uma::testing {

/// The kind of the uma::Error `f()` throws; a test failure (and ErrorKind::Runtime) when it
/// throws none.
template <class F> ErrorKind error_kind(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no uma::Error thrown";
  return ErrorKind::Runtime;
}

}  // namespace uma::testing
