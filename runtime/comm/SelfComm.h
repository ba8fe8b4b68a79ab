//===- SelfComm.h - A world of one process ----------------------*- C++ -*-===//
//
// What a single process uses: rank 0 of 1, every collective a copy (or
// nothing, in place), finished at once so no deadline is ever missed.
// Send and receive have no peer and are rejected by the base class.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/comm/Communicator.h"

#include <memory>

namespace dlc::rt::comm {

class SelfComm final : public Communicator {
public:
  const char *backend() const override { return "self"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }

protected:
  Status run(const Collective &call) override;
};

} // namespace dlc::rt::comm
