// Status and Result<T>: how errors travel inside the library. Exceptions are only thrown at
// the public API surface (recur::Error).
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "recur/error.h"

namespace recur {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with where the error happened: "node 'lstm_1' (LSTM): ...".
  Status with_context(const std::string& where) const {
    if (ok()) return *this;
    return {code_, where + ": " + message_};
  }
  // Throws recur::Error if not ok.
  void throw_if_error() const {
    if (!ok()) throw Error(code_, message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status ok_status() { return {}; }
inline Status invalid_argument(std::string m) {
  return {ErrorCode::kInvalidArgument, std::move(m)};
}
inline Status invalid_model(std::string m) { return {ErrorCode::kInvalidModel, std::move(m)}; }
inline Status not_implemented(std::string m) { return {ErrorCode::kNotImplemented, std::move(m)}; }
inline Status out_of_range(std::string m) { return {ErrorCode::kOutOfRange, std::move(m)}; }
inline Status io_error(std::string m) { return {ErrorCode::kIo, std::move(m)}; }
inline Status device_error(std::string m) { return {ErrorCode::kDevice, std::move(m)}; }
inline Status internal_error(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }
inline Status failed_precondition(std::string m) {
  return {ErrorCode::kFailedPrecondition, std::move(m)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  // From anything convertible to T (a unique_ptr<Derived> for a Result<unique_ptr<Base>>).
  template <class U,
            std::enable_if_t<std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, T> &&
                                 !std::is_same_v<std::decay_t<U>, Status>,
                             int> = 0>
  Result(U&& value) : v_(T(std::forward<U>(value))) {}  // NOLINT
  Result(Status status) : v_(std::move(status)) {}      // NOLINT
  Result(ErrorCode code, std::string message) : v_(Status(code, std::move(message))) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // Returns the value or throws recur::Error.
  T value_or_throw() && {
    if (!ok()) std::get<Status>(v_).throw_if_error();
    return std::get<T>(std::move(v_));
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace recur

#define RECUR_CONCAT_INNER(a, b) a##b
#define RECUR_CONCAT(a, b) RECUR_CONCAT_INNER(a, b)

#define RECUR_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::recur::Status _recur_status = (expr);        \
    if (!_recur_status.ok()) return _recur_status; \
  } while (0)

#define RECUR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

// RECUR_ASSIGN_OR_RETURN(auto x, f()); declares x, or returns f()'s error.
#define RECUR_ASSIGN_OR_RETURN(lhs, expr) \
  RECUR_ASSIGN_OR_RETURN_IMPL(RECUR_CONCAT(_recur_result_, __LINE__), lhs, expr)

// Returns an error Status built from the arguments if the condition is false.
#define RECUR_CHECK_ARG(cond, message)                      \
  do {                                                      \
    if (!(cond)) return ::recur::invalid_argument(message); \
  } while (0)
