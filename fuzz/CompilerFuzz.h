//===- CompilerFuzz.h - MLIR context for the frontend targets ---*- C++ -*-===//
//
// One MLIRContext per input (no threads, the builder's dialects loaded),
// whose diagnostics are kept instead of printed. An error that says
// "internal error" is dlc's bug (exit 70), not the input's: it fails the
// target, as does built IR that does not verify.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/text/MLIRGen.h"
#include "fuzz/FuzzSupport.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <memory>
#include <string>

/// LLVM's BumpPtrAllocator poisons a new slab and unpoisons each allocation
/// from it, but only in code compiled with ASan: here the inline copies in
/// dlc's instrumented objects poison slabs that libMLIR.so's uninstrumented
/// copies then hand out, and reading them is a false use-after-poison
/// (found by the dlg target in CompareOp's attributes). So user poisoning is
/// off in the frontend targets; ASan's own redzones and quarantine stay.
extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }

namespace dlc::fuzz {

class FuzzContext {
public:
  FuzzContext() : context_(mlir::MLIRContext::Threading::DISABLED) {
    dlg::loadBuilderDialects(context_);
    context_.printOpOnDiagnostic(false);
    handler_ = std::make_unique<mlir::ScopedDiagnosticHandler>(
        &context_, [this](mlir::Diagnostic &d) {
          if (d.getSeverity() == mlir::DiagnosticSeverity::Error) {
            ++errors_;
            std::string text = d.str();
            if (std::getenv("DLC_FUZZ_PRINT")) // to see why an input fails
              std::fprintf(stderr, "error: %s\n", text.c_str());
            // Only a message of dlc's own: bad input may quote the words.
            if (llvm::StringRef(text).starts_with("internal error"))
              contractBroken("an internal error on a bad input: " + text);
          }
          return mlir::success();
        });
  }
  mlir::MLIRContext &context() { return context_; }
  int errors() const { return errors_; }

  /// A module a frontend built must verify (the driver's check, exit 70).
  void mustVerify(mlir::ModuleOp module) {
    if (mlir::failed(mlir::verify(module)))
      contractBroken("the IR built from the input does not verify");
  }

private:
  mlir::MLIRContext context_;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler_;
  int errors_ = 0;
};

} // namespace dlc::fuzz
