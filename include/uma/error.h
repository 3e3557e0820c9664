// uma/error.h — the two error channels (DESIGN.md, "Layout and habits").
//
// User errors: UMA_CHECK(cond, Kind, message parts...) throws uma::Error carrying an
// ErrorKind that the Python layer maps to TypeError, ValueError, IndexError, CopyError,
// OverflowError or RuntimeError. Messages name the op and the bad values.
// Bugs: UMA_ASSERT(cond) aborts with the location; it is never used for user input.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace uma {

enum class ErrorKind { Type, Value, Index, Copy, Overflow, Runtime };

/// A user-facing error; `kind` selects the Python exception type.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "uma internal error: %s at %s:%d\n", expr, file, line);
  std::abort();
}
}  // namespace detail

}  // namespace uma

#define UMA_CHECK(cond, kind, ...)                                                  \
  do {                                                                              \
    if (!(cond))                                                                    \
      throw ::uma::Error(::uma::ErrorKind::kind, ::uma::detail::cat(__VA_ARGS__)); \
  } while (0)

#define UMA_FAIL(kind, ...) throw ::uma::Error(::uma::ErrorKind::kind, ::uma::detail::cat(__VA_ARGS__))

#define UMA_ASSERT(cond) \
  do {                   \
    if (!(cond)) ::uma::detail::assert_fail(#cond, __FILE__, __LINE__); \
  } while (0)
