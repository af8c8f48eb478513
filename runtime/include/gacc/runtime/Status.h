//===- Status.h - success or an error message -------------------*- C++ -*-===//
//
// The runtime reports every failure as a Status with a message that says
// what and where (file, tensor name); it never aborts on bad input.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_STATUS_H
#define GACC_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace gacc::rt {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status error(std::string message) {
    Status status;
    status.message_ = std::move(message);
    status.failed_ = true;
    return status;
  }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return message_; }

private:
  std::string message_;
  bool failed_ = false;
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_STATUS_H
