//===- CommQueue.h - Communicator calls on a thread of their own -*- C++ -*-===//
//
// What lets communication overlap computation on the host: the caller
// submits each communicator call as a task, in the order every rank issues
// them, and goes on computing; one thread runs the tasks in that order (so
// a communicator is still used by one thread at a time, as MPI's
// MPI_THREAD_SERIALIZED allows), and the caller waits for a task's ticket
// only where it needs the result. The executor (runtime/executor/Session)
// and the driver's SPMD runner both use it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Status.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace dlc::rt::comm {

class CommQueue {
public:
  CommQueue();
  /// Runs what was submitted, then stops the thread.
  ~CommQueue();
  CommQueue(const CommQueue &) = delete;
  CommQueue &operator=(const CommQueue &) = delete;

  /// Queues `task` after every task submitted before; returns its ticket
  /// (1, 2, 3, ...).
  uint64_t submit(std::function<Status()> task);
  /// Waits until task `ticket` (and so every one before it) has run;
  /// returns the first failure among them, else OK.
  Status wait(uint64_t ticket);
  /// Waits for every task submitted so far.
  Status drain();
  /// Seconds the thread spent running tasks, in all.
  double busySeconds() const;

private:
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<std::function<Status()>> queue_;
  uint64_t submitted_ = 0, completed_ = 0;
  Status firstError_;
  uint64_t firstErrorTicket_ = 0; ///< the ticket of firstError_ (0: none)
  double busy_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace dlc::rt::comm
