//===- Schedule.cpp - a memory-aware order of a graph's kernels -----------===//
//
// Reorders the kernels of each graph (its top-level ops but parameters,
// constants and the return: plain ops before fusion, dlc.fusion regions
// after) into the topological order with the smallest peak of live arena
// bytes among a few list-scheduling heuristics and the program order, as
// measured by the memory planner's own liveness (in-place reuse included).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/Liveness.h"
#include "passes/analysis/State.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <tuple>

namespace dlc {
#define GEN_PASS_DEF_DLCSCHEDULE
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

/// The kernels of a graph in program order, with what list scheduling needs
/// to know of each: the kernels it waits for and the buffers it touches.
struct KernelGraph {
  SmallVector<Operation *> kernels;
  /// Kernels that must run after kernel k (each once): those reading its
  /// results, and for a kernel reading old state, the kernel writing the
  /// new state in place. `producers` is the reverse relation.
  std::vector<SmallVector<unsigned, 4>> users, producers;
  std::vector<unsigned> numProducers;
  /// Per kernel: its result buffers and the buffers it reads (each once).
  std::vector<SmallVector<unsigned, 2>> results;
  std::vector<SmallVector<unsigned, 4>> reads;
  /// Per kernel: the (operand buffer, result buffer) pairs that
  /// inPlaceCandidates allows.
  std::vector<SmallVector<std::pair<unsigned, unsigned>, 2>> inPlace;
  /// Per buffer: aligned size, producing kernel, kernels reading it, and
  /// whether the graph returns it.
  std::vector<int64_t> size;
  std::vector<unsigned> producer, numReaders;
  std::vector<bool> isOutput;
};

/// How a heuristic ranks the ready kernels; the smallest key goes next.
enum class Rule { minLiveAfter, minLiveDuring, depthFirst };

} // namespace

/// The kernel graph of `body`, built from the operands of each kernel and of
/// the ops nested in it.
static KernelGraph buildKernelGraph(Block &body) {
  KernelGraph g;
  llvm::DenseMap<Value, unsigned> bufferOf;
  auto func = cast<func::FuncOp>(body.getParentOp());
  llvm::DenseSet<Value> inState = inPlaceStateValues(func);
  for (Operation &op : body) {
    if (!isKernel(&op))
      continue;
    g.kernels.push_back(&op);
  }
  size_t n = g.kernels.size();
  g.users.resize(n);
  g.numProducers.assign(n, 0);
  g.results.resize(n);
  g.reads.resize(n);
  g.inPlace.resize(n);
  for (auto [k, kernel] : llvm::enumerate(g.kernels))
    for (Value result : kernel->getResults()) {
      bufferOf[result] = g.size.size();
      g.results[k].push_back(g.size.size());
      g.size.push_back(inState.contains(result)
                           ? 0
                           : alignToArena(tensorBytes(result.getType())));
      g.producer.push_back(k);
      g.numReaders.push_back(0);
      g.isOutput.push_back(llvm::any_of(result.getUsers(), [](Operation *u) {
        return u->hasTrait<mlir::OpTrait::IsTerminator>();
      }));
    }
  for (auto [k, kernel] : llvm::enumerate(g.kernels)) {
    kernel->walk([&, k = k](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        auto found = bufferOf.find(operand);
        if (found == bufferOf.end())
          continue;
        unsigned buffer = found->second, from = g.producer[buffer];
        if (from == k || llvm::is_contained(g.reads[k], buffer))
          continue;
        g.reads[k].push_back(buffer);
        ++g.numReaders[buffer];
        if (!llvm::is_contained(g.users[from], unsigned(k))) {
          g.users[from].push_back(k);
          ++g.numProducers[k];
        }
      }
    });
    for (auto [operand, result] : inPlaceCandidates(kernel)) {
      auto donor = bufferOf.find(kernel->getOperand(operand));
      if (donor != bufferOf.end())
        g.inPlace[k].push_back({donor->second, g.results[k][result]});
    }
  }
  // A kernel writing new state into its buffer waits for every other
  // reader of the old value.
  auto ties = stateTies(func);
  if (succeeded(ties)) {
    llvm::DenseMap<Operation *, unsigned> index;
    for (auto [k, kernel] : llvm::enumerate(g.kernels))
      index[kernel] = k;
    for (const StateTie &tie : *ties) {
      if (!tie.inPlace)
        continue;
      unsigned writer = index.lookup(tie.writer);
      for (auto [k, kernel] : llvm::enumerate(g.kernels))
        if (k != writer && kernelReads(kernel, tie.arg) &&
            !llvm::is_contained(g.users[k], writer)) {
          g.users[k].push_back(writer);
          ++g.numProducers[writer];
        }
    }
  }
  g.producers.resize(n);
  for (unsigned k = 0; k < n; ++k)
    for (unsigned user : g.users[k])
      g.producers[user].push_back(k);
  return g;
}

/// Whether `order` holds every kernel of `g` once, each after the kernels
/// it must follow.
static bool isTopological(const KernelGraph &g, ArrayRef<Operation *> order) {
  if (order.size() != g.kernels.size())
    return false;
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(order))
    position[op] = i;
  for (unsigned k = 0; k < g.kernels.size(); ++k)
    for (unsigned user : g.users[k])
      if (position.lookup(g.kernels[k]) >= position.lookup(g.kernels[user]))
        return false;
  return true;
}

/// A topological order of `g` by list scheduling: at each step, of the
/// kernels whose producers have all run, the one `rule` ranks first (ties
/// in program order). Live bytes are simulated as the planner counts them.
static SmallVector<Operation *> listSchedule(const KernelGraph &g, Rule rule) {
  size_t n = g.kernels.size();
  std::vector<unsigned> waiting = g.numProducers, readersLeft = g.numReaders;
  std::vector<int64_t> producedAt(g.size.size(), -1);
  SmallVector<unsigned> ready;
  for (unsigned k = 0; k < n; ++k)
    if (!waiting[k])
      ready.push_back(k);
  int64_t live = 0;
  SmallVector<Operation *> order;
  // The bytes live while kernel k runs and after it. A result that takes a
  // dying operand's buffer in place (see inPlaceCandidates) adds nothing.
  auto simulate = [&](unsigned k) {
    int64_t allocated = 0, freed = 0;
    SmallVector<unsigned, 4> dying;
    for (unsigned b : g.reads[k])
      if (readersLeft[b] == 1 && !g.isOutput[b])
        dying.push_back(b);
    SmallVector<unsigned, 4> donated, taken;
    for (auto [donor, taker] : g.inPlace[k])
      if (llvm::is_contained(dying, donor) &&
          !llvm::is_contained(donated, donor) &&
          !llvm::is_contained(taken, taker)) {
        donated.push_back(donor);
        taken.push_back(taker);
      }
    for (unsigned b : g.results[k])
      allocated += g.size[b];
    for (unsigned b : donated)
      allocated -= g.size[b];
    for (unsigned b : dying)
      if (!llvm::is_contained(donated, b))
        freed += g.size[b];
    return std::make_pair(live + allocated, live + allocated - freed);
  };
  while (!ready.empty()) {
    unsigned bestAt = 0;
    std::tuple<int64_t, int64_t, unsigned> bestKey;
    for (auto [at, k] : llvm::enumerate(ready)) {
      auto [during, after] = simulate(k);
      std::tuple<int64_t, int64_t, unsigned> key;
      if (rule == Rule::minLiveAfter)
        key = {after, during, k};
      else if (rule == Rule::minLiveDuring)
        key = {during, after, k};
      else {
        // The most recently produced operand first: finish one branch
        // before starting the next.
        int64_t latest = -1;
        for (unsigned b : g.reads[k])
          latest = std::max(latest, producedAt[b]);
        key = {-latest, after, k};
      }
      if (at == 0 || key < bestKey) {
        bestKey = key;
        bestAt = at;
      }
    }
    unsigned k = ready[bestAt];
    ready.erase(ready.begin() + bestAt);
    live = simulate(k).second;
    for (unsigned b : g.reads[k])
      --readersLeft[b];
    for (unsigned b : g.results[k])
      producedAt[b] = order.size();
    order.push_back(g.kernels[k]);
    for (unsigned user : g.users[k])
      if (--waiting[user] == 0)
        ready.push_back(user);
  }
  return order;
}

/// A topological order of `g` built from the end: at each step back, of the
/// kernels whose readers are all placed, the one that leaves the fewest
/// bytes live before it (ties: the latest in program order). Kernels that
/// create memory from little (an iota, a broadcast) thus run just before
/// their readers.
static SmallVector<Operation *> reverseListSchedule(const KernelGraph &g) {
  size_t n = g.kernels.size();
  std::vector<unsigned> usersLeft(n);
  for (unsigned k = 0; k < n; ++k)
    usersLeft[k] = g.users[k].size();
  std::vector<bool> live(g.size.size());
  int64_t liveBytes = 0;
  for (unsigned b = 0; b < g.size.size(); ++b)
    if (g.isOutput[b]) {
      live[b] = true;
      liveBytes += g.size[b];
    }
  SmallVector<unsigned> ready;
  for (unsigned k = 0; k < n; ++k)
    if (!usersLeft[k])
      ready.push_back(k);
  // The bytes live while kernel k runs, and before it.
  auto simulate = [&](unsigned k) {
    int64_t during = liveBytes, before;
    for (unsigned b : g.results[k])
      if (!live[b])
        during += g.size[b];
    for (unsigned b : g.reads[k])
      if (!live[b])
        during += g.size[b];
    before = during;
    for (unsigned b : g.results[k])
      before -= g.size[b];
    return std::make_pair(during, before);
  };
  SmallVector<Operation *> order;
  while (!ready.empty()) {
    unsigned bestAt = 0;
    std::tuple<int64_t, int64_t, int64_t> bestKey;
    for (auto [at, k] : llvm::enumerate(ready)) {
      auto [during, before] = simulate(k);
      std::tuple<int64_t, int64_t, int64_t> key{before, during, -int64_t(k)};
      if (at == 0 || key < bestKey) {
        bestKey = key;
        bestAt = at;
      }
    }
    unsigned k = ready[bestAt];
    ready.erase(ready.begin() + bestAt);
    liveBytes = simulate(k).second;
    for (unsigned b : g.results[k])
      live[b] = false;
    for (unsigned b : g.reads[k])
      live[b] = true;
    for (unsigned producer : g.producers[k])
      if (--usersLeft[producer] == 0)
        ready.push_back(producer);
    order.push_back(g.kernels[k]);
  }
  std::reverse(order.begin(), order.end());
  return order;
}

/// The peak the memory planner will see for kernels run in `order`.
static int64_t peakOf(ArrayRef<Operation *> order) {
  BufferLiveness liveness = analyzeBuffers(order);
  groupAllocations(liveness, chooseInPlace(liveness));
  return liveness.peakBytes;
}

/// Moves the ops of `body` into `order` of kernels; each parameter or
/// constant goes just before its first reader (unread ones first).
static void reorder(Block &body, ArrayRef<Operation *> order) {
  SmallVector<Operation *> sources, sequence;
  llvm::DenseSet<Operation *> placed;
  for (Operation &op : body)
    if (!isKernel(&op) && !op.hasTrait<mlir::OpTrait::IsTerminator>() &&
        llvm::none_of(op.getUsers(),
                      [&](Operation *u) { return isKernel(body.findAncestorOpInBlock(*u)); }))
      sources.push_back(&op);
  for (Operation *op : sources) {
    placed.insert(op);
    sequence.push_back(op);
  }
  for (Operation *kernel : order) {
    kernel->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && def->getBlock() == &body && !isKernel(def) &&
            placed.insert(def).second)
          sequence.push_back(def);
      }
    });
    sequence.push_back(kernel);
  }
  Operation *terminator = body.getTerminator();
  for (Operation *op : sequence)
    op->moveBefore(terminator);
}

namespace {
struct DlcSchedulePass : dlc::impl::DlcScheduleBase<DlcSchedulePass> {
  using DlcScheduleBase::DlcScheduleBase;

  /// 1. Build the kernel graph in program order.
  /// 2. List-schedule it forward by each rule, and backward from the
  ///    outputs; with the program order, these are the candidates.
  /// 3. Keep the candidate with the smallest peak (the earliest on ties, so
  ///    the program order stays unless another order is better).
  /// 4. Move the ops; parameters and constants follow their first reader.
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (failed(checkStaticResults(func)))
      return signalPassFailure();
    Block &body = func.getBody().front();
    KernelGraph graph = buildKernelGraph(body);
    if (graph.kernels.size() < 2)
      return;
    SmallVector<Operation *> best = graph.kernels;
    if (!isTopological(graph, best)) {
      // The program order reads old state after it is overwritten: the
      // list schedules below respect every edge.
      best = listSchedule(graph, Rule::minLiveAfter);
      if (!isTopological(graph, best)) {
        func.emitError("dlc-schedule: the kernels' dependences have a cycle "
                       "(a kernel reads old state after one that its writer "
                       "needs)");
        return signalPassFailure();
      }
    }
    int64_t bestPeak = peakOf(best);
    SmallVector<SmallVector<Operation *>> candidates;
    for (Rule rule : {Rule::minLiveAfter, Rule::minLiveDuring, Rule::depthFirst})
      candidates.push_back(listSchedule(graph, rule));
    candidates.push_back(reverseListSchedule(graph));
    for (SmallVector<Operation *> &order : candidates) {
      if (!isTopological(graph, order))
        continue;
      int64_t peak = peakOf(order);
      if (peak < bestPeak) {
        bestPeak = peak;
        best = std::move(order);
      }
    }
    reorder(body, best);
  }
};
} // namespace
