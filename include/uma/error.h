// uma/error.h — the two error channels (DESIGN.md, "Layout and habits").
//
// User errors: UMA_CHECK(cond, Kind, message parts...) throws uma::Error carrying an
// ErrorKind that the Python layer maps to TypeError, ValueError, IndexError, CopyError,
// OverflowError, RuntimeError, MemoryError, AxisError or LinAlgError. Messages name the op and
// the bad values.
// Bugs: UMA_ASSERT(cond) aborts with the location; it is never used for user input.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace uma {

/// Axis: an axis out of range (Python: numpy.exceptions.AxisError, a ValueError and an IndexError).
/// LinAlg: a matrix a factorisation cannot handle (singular, not positive definite, no
/// convergence; Python: uma.linalg.LinAlgError, a ValueError).
enum class ErrorKind { Type, Value, Index, Copy, Overflow, Runtime, Memory, Axis, LinAlg };

/// A user-facing error; `kind` selects the Python exception type.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
// Message building by appending to one string (std::to_string, snprintf for floats): no stream
// object or locale lookup on the error path. Integers print as numbers (int8/uint8 too).
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, std::string_view v) { s += v; }
inline void append(std::string& s, const char* v) { s += v ? v : "(null)"; }
inline void append(std::string& s, char v) { s += v; }
inline void append(std::string& s, bool v) { s += v ? "true" : "false"; }
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
inline void append(std::string& s, T v) {
  s += std::to_string(v);
}
template <class T>
  requires std::is_floating_point_v<T>
inline void append(std::string& s, T v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
  s += buf;
}
template <class... Args>
std::string cat(const Args&... args) {
  std::string s;
  (append(s, args), ...);
  return s;
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
