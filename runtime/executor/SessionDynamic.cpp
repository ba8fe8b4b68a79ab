//===- SessionDynamic.cpp - A module for a range of sizes -------------------===//
//
// A module compiled for N in [min, max] (`dlc compile --dim N=MIN..MAX`)
// runs at any N: which inputs and outputs are bound in place (kernels that
// run a prefix of the rows) and which are staged (padded to max with copies
// of the given rows, the extra output rows dropped).
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/Session.h"
#include "runtime/executor/SessionInternal.h"

#include "runtime/base/Log.h"

#include <algorithm>
#include <cstring>

namespace dlc::rt {

namespace fb = dlc::fb;
using detail::allocateFor;
using detail::kStagingAlignment;
using detail::roundUp;

Status Session::prepareDynamicTensors(const std::vector<std::vector<Access>> &accesses) {
  const format::LoadedModule &m = *module_;
  if (m.dynamicDims().empty())
    return okStatus();
  dynamicMin_ = m.dynamicDims()[0].min;
  dynamicMax_ = m.dynamicDims()[0].max;
  runN_ = dynamicMax_;
  // A launch run in full reads all max rows of what it reads. Where a
  // scaled launch before it writes those arena bytes, the rows beyond N
  // would hold an earlier run's values (zeros at first), which its data
  // checks may refuse: that launch runs in full too, and so on backwards,
  // so that a launch run in full reads only rows written in this run or
  // given. A copy passes such rows on: its source counts as read in full
  // where its destination is (a copy into an output or state, or one the
  // steps after it do not read in full, may copy rows no one wrote; an
  // output's rows beyond N are discarded).
  std::vector<std::pair<uint64_t, uint64_t>> readInFull; // arena [begin, end)
  auto isArena = [](const Access &a) {
    return a.ref.space == static_cast<uint8_t>(fb::BufferSpace::arena);
  };
  auto inFull = [&](const Access &a) {
    bool hit = false;
    for (const auto &r : readInFull)
      hit = hit || (a.ref.offset < r.second && r.first < a.ref.offset + a.bytes);
    return hit;
  };
  auto addReads = [&](const Access &a) {
    if (a.reads && a.bytes && isArena(a))
      readInFull.push_back({a.ref.offset, a.ref.offset + a.bytes});
  };
  uint32_t demoted = 0;
  for (size_t i = steps_.size(); i-- > 0;) {
    Step &step = steps_[i];
    const std::vector<Access> &touched = accesses[i];
    if (step.kind == Step::kCopy) {
      // touched: {src, dst}
      const Access &dst = touched[1];
      if (dst.ref.space == static_cast<uint8_t>(fb::BufferSpace::state) ||
          (isArena(dst) && inFull(dst)))
        addReads(touched[0]);
      continue;
    }
    if (step.rowsPerN) {
      bool feedsFull = false;
      for (const Access &a : touched)
        feedsFull = feedsFull || (a.writes && isArena(a) && inFull(a));
      if (!feedsFull)
        continue;
      step.rowsPerN = 0;
      ++demoted;
    }
    for (const Access &a : touched)
      addReads(a);
  }
  // A dynamic input or output is bound in place at N < max only when every
  // step that touches it runs a row prefix (inPlace[0]: inputs, [1]: outputs).
  const bool rowPrefixes = stream_->runsRowPrefixes();
  std::vector<bool> inPlace[2] = {std::vector<bool>(m.inputs().size(), rowPrefixes),
                                  std::vector<bool>(m.outputs().size(), rowPrefixes)};
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (steps_[i].rowsPerN)
      continue;
    for (const Access &a : accesses[i]) {
      if (a.ref.space == static_cast<uint8_t>(fb::BufferSpace::input))
        inPlace[0][a.ref.index] = false;
      else if (a.ref.space == static_cast<uint8_t>(fb::BufferSpace::output))
        inPlace[1][a.ref.index] = false;
    }
  }
  // A device without host memory stages every input and output already
  // (prepareDeviceMemory); a run at N < max moves only N's rows through it.
  const bool hostMemory = device_->sharesHostMemory();
  uint64_t total = 0;
  std::string inPlaceNames, stagedNames;
  for (int output = 0; output < 2; ++output) {
    const std::vector<format::TensorInfo> &tensors = output ? m.outputs() : m.inputs();
    stagedDynamic_[output].assign(tensors.size(), false);
    for (uint32_t i = 0; i < tensors.size(); ++i) {
      const format::TensorInfo &t = tensors[i];
      if (t.dynamicDim < 0)
        continue;
      std::string &names = inPlace[output][i] ? inPlaceNames : stagedNames;
      names += strCat(names.empty() ? "" : ", ", output ? "output '" : "input '", t.name, "'");
      if (inPlace[output][i])
        continue;
      stagedDynamic_[output][i] = true;
      if (!hostMemory)
        continue;
      hostStaged_.push_back({output != 0, i, t.bytes / static_cast<uint64_t>(dynamicMax_), total});
      total = roundUp(total + t.bytes, kStagingAlignment);
    }
  }
  if (total)
    DLC_RETURN_IF_ERROR(allocateFor(*device_, "the dynamic inputs' and outputs' staging", total,
                                    kStagingAlignment, &dynamicStaging_));
  if (logEnabled())
    log(LogLevel::kInfo,
        strCat("session on ", device_->name(), ": dynamic dimension '", m.dynamicDims()[0].name,
               "' in [", dynamicMin_, ", ", dynamicMax_, "]; ", demoted,
               " launches of its rows run in full for a later one; below ", dynamicMax_,
               ", in place: ", inPlaceNames.empty() ? "none" : inPlaceNames,
               "; staged: ", stagedNames.empty() ? "none" : stagedNames));
  return okStatus();
}

bool Session::stagesDynamicTensor(bool output, uint32_t index) const {
  const std::vector<bool> &staged = stagedDynamic_[output ? 1 : 0];
  return index < staged.size() && staged[index];
}

Status Session::fillRows(uint8_t *base, uint64_t given, uint64_t total) {
  // Rows [given, 2 given) from [0, given), then [2 given, 4 given) from
  // [0, 2 given), ...: log2(max / N) copies, none overlapping its source.
  if (!given)
    return okStatus();
  for (uint64_t filled = given; filled < total;) {
    const uint64_t bytes = std::min(filled, total - filled);
    DLC_RETURN_IF_ERROR(stream_->copy(base + filled, base, bytes));
    filled += bytes;
  }
  return okStatus();
}

} // namespace dlc::rt
