//===- Schedule.cpp - PLACEHOLDER: being written, see passes/Passes.td ---------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_DLCSCHEDULE
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct DlcSchedulePass : dlc::impl::DlcScheduleBase<DlcSchedulePass> {
  using DlcScheduleBase::DlcScheduleBase;
  void runOnOperation() override {}
};
} // namespace
