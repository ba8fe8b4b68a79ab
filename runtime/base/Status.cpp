//===- Status.cpp - Error codes with messages -----------------------------===//

#include "runtime/base/Status.h"

namespace dlc::rt {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk:
    return "OK";
  case StatusCode::kInvalidArgument:
    return "INVALID_ARGUMENT";
  case StatusCode::kInvalidModule:
    return "INVALID_MODULE";
  case StatusCode::kNotFound:
    return "NOT_FOUND";
  case StatusCode::kUnavailable:
    return "UNAVAILABLE";
  case StatusCode::kResourceExhausted:
    return "RESOURCE_EXHAUSTED";
  case StatusCode::kUnimplemented:
    return "UNIMPLEMENTED";
  case StatusCode::kInternal:
    return "INTERNAL";
  case StatusCode::kDataError:
    return "DATA_ERROR";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk)
    state_.reset(new State{code, std::move(message)});
}

Status::Status(const Status &other) {
  if (other.state_)
    state_.reset(new State(*other.state_));
}

Status &Status::operator=(const Status &other) {
  if (this != &other)
    state_.reset(other.state_ ? new State(*other.state_) : nullptr);
  return *this;
}

const std::string &Status::message() const {
  static const std::string empty;
  return state_ ? state_->message : empty;
}

std::string Status::toString() const {
  if (ok())
    return "OK";
  return std::string(statusCodeName(state_->code)) + ": " + state_->message;
}

Status &Status::prepend(const std::string &context) {
  if (state_)
    state_->message = context + ": " + state_->message;
  return *this;
}

} // namespace dlc::rt
