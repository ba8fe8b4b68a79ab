//===- VerifyMemoryPlan.cpp - PLACEHOLDER: being written, see passes/Passes.td ---------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_DLCVERIFYMEMORYPLAN
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct DlcVerifyMemoryPlanPass : dlc::impl::DlcVerifyMemoryPlanBase<DlcVerifyMemoryPlanPass> {
  using DlcVerifyMemoryPlanBase::DlcVerifyMemoryPlanBase;
  void runOnOperation() override {}
};
} // namespace
