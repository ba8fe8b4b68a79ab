//===- Status.h - Error codes with messages ---------------------*- C++ -*-===//
//
// A Status is either OK (no allocation) or an error code with a message.
// Runtime functions return one instead of throwing; the C API turns it into a
// dlc_status_t. Messages about a module name the section and the byte offset
// (runtime/format/ModuleReader.h), messages about a call name the argument.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <utility>

namespace dlc::rt {

/// The codes are the C API's (dlc_status_code_t) one for one.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   ///< a bad call: wrong tensor, null handle, bad option
  kInvalidModule = 2,     ///< the module file is corrupt, hostile or unsupported
  kNotFound = 3,          ///< a file or a symbol that is not there
  kUnavailable = 4,       ///< the device does not exist on this machine/build
  kResourceExhausted = 5, ///< out of memory, or over a device limit
  kUnimplemented = 6,     ///< a valid module uses what this runtime lacks
  kInternal = 7,          ///< a bug in the runtime
  kDataError = 8,         ///< a kernel found its data outside an op's domain
};

const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default; ///< OK
  Status(StatusCode code, std::string message);

  Status(const Status &other);
  Status &operator=(const Status &other);
  Status(Status &&) noexcept = default;
  Status &operator=(Status &&) noexcept = default;

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  /// Empty for OK.
  const std::string &message() const;
  /// "INVALID_MODULE: <message>", or "OK".
  std::string toString() const;

  /// Prefixes the message with `context + ": "` (no-op for OK).
  Status &prepend(const std::string &context);

private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<State> state_;
};

inline Status okStatus() { return Status(); }

/// Concatenates anything streamable: strCat("kernel ", i, " has ", n, " args").
template <typename... Args> std::string strCat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <typename... Args> Status invalidArgument(const Args &...args) {
  return Status(StatusCode::kInvalidArgument, strCat(args...));
}
template <typename... Args> Status invalidModule(const Args &...args) {
  return Status(StatusCode::kInvalidModule, strCat(args...));
}
template <typename... Args> Status notFound(const Args &...args) {
  return Status(StatusCode::kNotFound, strCat(args...));
}
template <typename... Args> Status unavailable(const Args &...args) {
  return Status(StatusCode::kUnavailable, strCat(args...));
}
template <typename... Args> Status resourceExhausted(const Args &...args) {
  return Status(StatusCode::kResourceExhausted, strCat(args...));
}
template <typename... Args> Status unimplemented(const Args &...args) {
  return Status(StatusCode::kUnimplemented, strCat(args...));
}
template <typename... Args> Status dataError(const Args &...args) {
  return Status(StatusCode::kDataError, strCat(args...));
}
template <typename... Args> Status internalError(const Args &...args) {
  return Status(StatusCode::kInternal, strCat(args...));
}

} // namespace dlc::rt

#define DLC_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    ::dlc::rt::Status dlcStatus_ = (expr);                                     \
    if (!dlcStatus_.ok())                                                      \
      return dlcStatus_;                                                       \
  } while (false)
