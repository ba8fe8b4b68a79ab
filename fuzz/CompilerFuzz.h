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
            if (text.find("internal error") != std::string::npos)
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
