//===- Spmd.cpp - the oracle runs an SPMD program on every rank of a mesh -===//

#include "oracle/Spmd.h"

#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "oracle/Interpreter.h"
#include "oracle/kernels/Collectives.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <map>

using namespace mlir;

namespace dlc::oracle {

namespace {

using Values = llvm::DenseMap<Value, Tensor>;

CollectiveKind kindOf(CollectiveReduction r) {
  switch (r) {
  case CollectiveReduction::sum: return CollectiveKind::Sum;
  case CollectiveReduction::max: return CollectiveKind::Max;
  case CollectiveReduction::min: return CollectiveKind::Min;
  case CollectiveReduction::avg: return CollectiveKind::Avg;
  }
  return CollectiveKind::Sum;
}

int64_t normalized(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

class Lockstep {
public:
  Lockstep(const Mesh &mesh, ParamStore &params) : mesh(mesh), params(params) {}

  /// Runs `body` for every rank with its arguments bound to `args[r]`;
  /// returns each rank's terminator operands.
  FailureOr<std::vector<std::vector<Tensor>>>
  run(Block &body, const std::vector<std::vector<Tensor>> &args);

private:
  /// A collective: each group's ranks' operands in, each rank's result out.
  LogicalResult collective(Operation *op, std::vector<Values> &values);
  /// dlc.send puts each rank's operand in its peer's mailbox; dlc.recv
  /// takes the oldest (zeros for a rank without a peer).
  LogicalResult pointToPoint(Operation *op, const std::vector<int64_t> &members,
                             std::vector<Values> &values);

  const Mesh &mesh;
  ParamStore &params;
  /// Per (receiving rank, axes and shift): what was sent to it, in order.
  std::map<std::pair<int64_t, std::string>, std::deque<Tensor>> mailboxes;
};

LogicalResult Lockstep::pointToPoint(Operation *op, const std::vector<int64_t> &members,
                                     std::vector<Values> &values) {
  int64_t shift = op->getAttrOfType<IntegerAttr>("shift").getInt();
  int64_t size = static_cast<int64_t>(members.size());
  std::string channel;
  llvm::raw_string_ostream os(channel);
  os << op->getAttr("mesh_axes") << " shift " << shift;
  os.flush();
  for (int64_t i = 0; i < size; ++i) {
    if (auto send = dyn_cast<SendOp>(op)) {
      if (i + shift >= 0 && i + shift < size)
        mailboxes[{members[i + shift], channel}].push_back(
            values[members[i]].find(send.getX())->second);
      continue;
    }
    auto recv = cast<RecvOp>(op);
    auto type = cast<RankedTensorType>(recv.getType());
    if (i - shift < 0 || i - shift >= size) {
      values[members[i]][recv.getResult()] =
          Tensor::zeros(dtypeOf(type.getElementType()),
                        std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
      continue;
    }
    auto &box = mailboxes[{members[i], channel}];
    if (box.empty())
      return op->emitError("rank ") << members[i] << " receives from rank " << members[i - shift]
                                    << ", which has sent nothing on this channel (" << channel
                                    << ") before";
    Tensor t = std::move(box.front());
    box.pop_front();
    if (t.shape != std::vector<int64_t>(type.getShape().begin(), type.getShape().end()))
      return op->emitError("rank ") << members[i] << " receives a tensor of another shape than "
                                    << type << " from rank " << members[i - shift];
    values[members[i]][recv.getResult()] = std::move(t);
  }
  return success();
}

LogicalResult Lockstep::collective(Operation *op, std::vector<Values> &values) {
  auto axesAttr = op->getAttrOfType<ArrayAttr>("mesh_axes");
  std::vector<std::string> axes;
  for (Attribute a : axesAttr)
    axes.push_back(cast<StringAttr>(a).str());
  for (const std::string &name : axes)
    if (mesh.axisIndex(name) < 0)
      return op->emitError("names mesh axis '")
             << name << "', which the mesh " << mesh.str() << " does not have";
  int64_t stated = op->getAttrOfType<IntegerAttr>("group_size").getInt();
  int64_t size = mesh.groupSize(axes);
  if (stated != size)
    return op->emitError("has group_size ")
           << stated << ", but its axes span " << size << " ranks of the mesh "
           << mesh.str();
  std::vector<bool> done(mesh.size(), false);
  for (int64_t r = 0; r < mesh.size(); ++r) {
    if (done[r])
      continue;
    std::vector<int64_t> members = mesh.group(r, axes);
    if (isa<SendOp, RecvOp>(op)) {
      if (failed(pointToPoint(op, members, values)))
        return failure();
      for (int64_t m : members)
        done[m] = true;
      continue;
    }
    Value x = op->getOperand(0), result = op->getResult(0);
    std::vector<Tensor> operands;
    for (int64_t m : members)
      operands.push_back(values[m].find(x)->second);
    std::vector<Tensor> results;
    try {
      results = collectiveOverGroup(op, operands);
    } catch (const EvalError &error) {
      return op->emitError(error.what());
    }
    for (size_t i = 0; i < members.size(); ++i) {
      values[members[i]][result] = std::move(results[i]);
      done[members[i]] = true;
    }
  }
  return success();
}

FailureOr<std::vector<std::vector<Tensor>>>
Lockstep::run(Block &body, const std::vector<std::vector<Tensor>> &args) {
  int64_t ranks = mesh.size();
  std::vector<Values> values(ranks);
  for (int64_t r = 0; r < ranks; ++r)
    for (auto [arg, tensor] : llvm::zip(body.getArguments(), args[r]))
      values[r][arg] = tensor;
  for (Operation &op : body) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      std::vector<std::vector<Tensor>> results(ranks);
      for (int64_t r = 0; r < ranks; ++r)
        for (Value v : op.getOperands())
          results[r].push_back(values[r].find(v)->second);
      return results;
    }
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      std::vector<std::vector<Tensor>> inputs(ranks);
      for (int64_t r = 0; r < ranks; ++r)
        for (Value v : fusion.getInputs())
          inputs[r].push_back(values[r].find(v)->second);
      auto results = run(fusion.getBody().front(), inputs);
      if (failed(results))
        return failure();
      for (int64_t r = 0; r < ranks; ++r)
        for (auto [result, tensor] : llvm::zip(fusion.getResults(), (*results)[r]))
          values[r][result] = std::move(tensor);
      continue;
    }
    if (kernelRoleOf(&op) == KernelRole::Collective) {
      if (failed(collective(&op, values)))
        return failure();
      continue;
    }
    for (int64_t r = 0; r < ranks; ++r) {
      std::vector<Tensor> operands;
      for (Value v : op.getOperands())
        operands.push_back(values[r].find(v)->second);
      FailureOr<Tensor> result = evaluateOp(&op, operands, params);
      if (failed(result))
        return failure();
      values[r][op.getResult(0)] = std::move(*result);
    }
  }
  return mlir::emitError(body.getParent()->getLoc(), "block has no terminator");
}

} // namespace

std::vector<Tensor> collectiveOverGroup(Operation *op, const std::vector<Tensor> &operands) {
  int64_t rank = llvm::cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  return llvm::TypeSwitch<Operation *, std::vector<Tensor>>(op)
      .Case([&](AllReduceOp o) { return allReduce(operands, kindOf(o.getKind())); })
      .Case([&](AllGatherOp o) { return allGather(operands, normalized(o.getAxis(), rank)); })
      .Case([&](ReduceScatterOp o) {
        return reduceScatter(operands, kindOf(o.getKind()), normalized(o.getAxis(), rank));
      })
      .Case([&](AllToAllOp o) {
        return allToAll(operands, normalized(o.getSplitAxis(), rank),
                        normalized(o.getConcatAxis(), rank));
      })
      .Case([&](BroadcastOp o) { return broadcast(operands, static_cast<int64_t>(o.getRoot())); })
      .Case([&](ShardOp o) {
        std::vector<Tensor> blocks;
        for (size_t i = 0; i < operands.size(); ++i)
          blocks.push_back(block(operands[i], normalized(o.getAxis(), rank),
                                 static_cast<int64_t>(i), static_cast<int64_t>(operands.size())));
        return blocks;
      })
      .Default([&](Operation *) -> std::vector<Tensor> {
        throw EvalError("'" + op->getName().getStringRef().str() + "' is not a collective");
      });
}

FailureOr<std::vector<std::vector<Tensor>>>
evaluateSpmd(func::FuncOp func, const Mesh &mesh,
             const std::vector<std::vector<Tensor>> &inputs, ParamStore &params) {
  if (static_cast<int64_t>(inputs.size()) != mesh.size())
    return func.emitError("the SPMD program runs on ")
           << mesh.size() << " ranks of the mesh " << mesh.str() << ", "
           << inputs.size() << " ranks' inputs were given";
  Block &body = func.getBody().front();
  for (const std::vector<Tensor> &rankInputs : inputs)
    if (rankInputs.size() != body.getNumArguments())
      return func.emitError("the graph takes ")
             << body.getNumArguments() << " inputs, " << rankInputs.size()
             << " were given";
  return Lockstep(mesh, params).run(body, inputs);
}

} // namespace dlc::oracle
