//===- OptionalOption.h - pass options that may be left unset ---*- C++ -*-===//
//
// A number option of the training pipeline means "as the model says" until
// it is given, including when it is given as 0 (`micro-batch=0` is an error
// the step's verifier reports, not a request for the model's micro-batch).
// So its value is a std::optional: this is its command-line parser. An
// unset option prints as LLVM prints std::nullopt, "None", which parses
// back to unset, so printed pipelines (crash reproducers,
// --dump-pass-pipeline) mean what they meant.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_OPTIONALOPTION_H
#define GACC_COMPILER_OPTIONALOPTION_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace llvm::cl {

/// Parses the value as `T` does, or "None" as unset.
template <typename T>
class parser<std::optional<T>> : public basic_parser<std::optional<T>> {
public:
  using OptVal = typename basic_parser<std::optional<T>>::OptVal;

  parser(Option &option) : basic_parser<std::optional<T>>(option) {}

  // Returns true on error, as every cl::parser.
  bool parse(Option &option, StringRef argName, StringRef arg,
             std::optional<T> &value) {
    if (arg == "None") {
      value = std::nullopt;
      return false;
    }
    T parsed{};
    if (parser<T>(option).parse(option, argName, arg, parsed))
      return true;
    value = parsed;
    return false;
  }

  StringRef getValueName() const override { return "value"; }

  void printOptionDiff(const Option &option, const std::optional<T> &value,
                       const OptVal &, size_t globalWidth) const {
    this->printOptionName(option, globalWidth);
    outs() << "= " << value << "\n";
  }
};

} // namespace llvm::cl

#endif // GACC_COMPILER_OPTIONALOPTION_H
