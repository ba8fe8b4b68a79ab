//===- CommQueue.cpp - Communicator calls on a thread of their own --------===//

#include "runtime/comm/CommQueue.h"

#include <chrono>

namespace dlc::rt::comm {

CommQueue::CommQueue() : thread_([this] { loop(); }) {}

CommQueue::~CommQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t CommQueue::submit(std::function<Status()> task) {
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
    ticket = ++submitted_;
  }
  wake_.notify_all();
  return ticket;
}

Status CommQueue::wait(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return completed_ >= ticket; });
  return firstErrorTicket_ && firstErrorTicket_ <= ticket ? firstError_ : Status();
}

Status CommQueue::drain() {
  uint64_t last;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last = submitted_;
  }
  return wait(last);
}

double CommQueue::busySeconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return busy_;
}

void CommQueue::loop() {
  for (;;) {
    std::function<Status()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    auto started = std::chrono::steady_clock::now();
    Status status = task();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ += seconds;
      ++completed_;
      if (!status.ok() && firstError_.ok()) {
        firstError_ = status;
        firstErrorTicket_ = completed_;
      }
    }
    done_.notify_all();
  }
}

} // namespace dlc::rt::comm
