//===- ModuleLowering.cpp - a planned function as module contents ---------===//

#include "codegen/common/ModuleLowering.h"

#include "ir/DlcDialect.h"
#include "ir/ParamSpec.h"
#include "passes/analysis/Liveness.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

#include <cstring>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

static uint64_t byteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() * elementSize(dtypeOf(tensor.getElementType()));
}

static format::TensorDesc describe(const std::string &name, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return {name, dtypeOf(tensor.getElementType()),
          {tensor.getShape().begin(), tensor.getShape().end()}};
}

static std::string nameOf(func::FuncOp func, unsigned i, bool result) {
  auto attr = result ? func.getResultAttrOfType<StringAttr>(i, "dlc.name")
                     : func.getArgAttrOfType<StringAttr>(i, "dlc.name");
  return attr ? attr.str() : (result ? "result" : "arg") + std::to_string(i);
}

FailureOr<LoweredModule> dlc::codegen::lowerModule(func::FuncOp func) {
  LoweredModule m;
  m.name = func.getSymName().str();
  auto arena = func->getAttrOfType<IntegerAttr>("dlc.arena_size");
  if (!arena)
    return func.emitError("codegen needs a planned function (dlc.arena_size): "
                          "run the dlc-compile pipeline first");
  m.arenaSize = arena.getInt();
  m.arenaAlignment = kArenaAlignment;

  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    m.inputs.push_back(describe(nameOf(func, i, false), func.getArgumentTypes()[i]));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    m.outputs.push_back(describe(nameOf(func, i, true), func.getResultTypes()[i]));

  // Which kernel result is written straight into which output.
  Operation *ret = func.getBody().front().getTerminator();
  llvm::DenseMap<Value, unsigned> outputOf;
  for (auto [j, v] : llvm::enumerate(ret->getOperands())) {
    Operation *def = v.getDefiningOp();
    if (def && !isa<ParamOp, ConstantOp>(def) && !outputOf.count(v))
      outputOf[v] = j;
  }

  llvm::DenseMap<Value, format::BufferRef> refs;
  llvm::DenseMap<Value, std::string> names;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    refs[arg] = format::inputRef(i, 0, byteSize(arg.getType()));
    names[arg] = m.inputs[i].name + " (input)";
  }

  unsigned kernelIndex = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (isa<ParamOp, ConstantOp>(op)) {
      auto param = dyn_cast<ParamOp>(op);
      auto value = param ? paramValue(param)
                         : hostTensorOf(cast<ElementsAttr>(
                                            cast<ConstantOp>(op).getValue()),
                                        &op);
      if (failed(value))
        return failure();
      std::string name;
      if (param) {
        name = param.getName().str();
        m.params[name] = *value;
      } else {
        name = "constant" + std::to_string(m.weights.size());
      }
      Value result = op.getResult(0);
      refs[result] = format::weightRef(m.weights.size(), 0, byteSize(result.getType()));
      names[result] = name + (isa<ParamOp>(op) ? " (param)" : " (constant)");
      m.weights.push_back(describe(name, result.getType()));
      m.weightBytes.emplace_back(value->data(), value->data() + value->byteSize());
      continue;
    }
    auto offsets = op.getAttrOfType<DenseI64ArrayAttr>("dlc.offsets");
    if (!offsets || offsets.size() != (int64_t)op.getNumResults())
      return op.emitError("codegen needs the memory plan's dlc.offsets on "
                          "every kernel");
    LoweredKernel k;
    k.view = viewKernel(&op);
    for (Value operand : op.getOperands()) {
      auto found = refs.find(operand);
      if (found == refs.end())
        return op.emitError("codegen: an operand defined after its use");
      k.refs.push_back(found->second);
      k.args.push_back({names[operand], fb::Access::read, found->second.bytes()});
      k.argNames.push_back(names[operand]);
    }
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      uint64_t bytes = byteSize(result.getType());
      auto output = outputOf.find(result);
      format::BufferRef ref =
          output != outputOf.end()
              ? format::outputRef(output->second, 0, bytes)
              : format::arenaRef(offsets[r], bytes);
      refs[result] = ref;
      std::string name = output != outputOf.end()
                             ? m.outputs[output->second].name + " (output)"
                             : "%" + std::to_string(kernelIndex) + "." +
                                   std::to_string(r) + " (kernel " +
                                   std::to_string(kernelIndex) + ")";
      names[result] = name;
      k.refs.push_back(ref);
      k.args.push_back({name, fb::Access::write, bytes});
      k.argNames.push_back(name);
    }
    m.kernels.push_back(std::move(k));
    ++kernelIndex;
  }

  for (auto [j, v] : llvm::enumerate(ret->getOperands())) {
    auto bound = outputOf.find(v);
    if (bound != outputOf.end() && bound->second == j)
      continue;
    format::BufferRef src = refs.find(v)->second;
    uint64_t bytes = byteSize(v.getType());
    m.copies.push_back({src, format::outputRef(j, 0, bytes), bytes});
  }
  return m;
}
