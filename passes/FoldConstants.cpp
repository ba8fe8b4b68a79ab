//===- FoldConstants.cpp - PLACEHOLDER: being written, see passes/Passes.td ---------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_DLCFOLDCONSTANTS
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct DlcFoldConstantsPass : dlc::impl::DlcFoldConstantsBase<DlcFoldConstantsPass> {
  using DlcFoldConstantsBase::DlcFoldConstantsBase;
  void runOnOperation() override {}
};
} // namespace
