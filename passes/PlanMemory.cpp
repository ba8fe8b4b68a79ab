//===- PlanMemory.cpp - PLACEHOLDER: being written, see passes/Passes.td ---------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_DLCPLANMEMORY
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct DlcPlanMemoryPass : dlc::impl::DlcPlanMemoryBase<DlcPlanMemoryPass> {
  using DlcPlanMemoryBase::DlcPlanMemoryBase;
  void runOnOperation() override {}
};
} // namespace
