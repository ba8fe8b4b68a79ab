//===- Fuse.cpp - PLACEHOLDER: being written, see passes/Passes.td ---------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_DLCFUSE
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct DlcFusePass : dlc::impl::DlcFuseBase<DlcFusePass> {
  using DlcFuseBase::DlcFuseBase;
  void runOnOperation() override {}
};
} // namespace
