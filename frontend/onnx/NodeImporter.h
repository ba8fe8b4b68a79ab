//===- NodeImporter.h - state shared by the ONNX op importers ---*- C++ -*-===//
//
// Internal to frontend/onnx. The graph under construction (`GraphState`:
// what each ONNX tensor name stands for), the view of one node that the op
// importers use (`NodeImporter`: checked access to inputs and attributes,
// op creation with shape inference first), and the op table each op-family
// file fills in.
//
// Builders return a null `Value` once anything failed (the diagnostic is
// already emitted) and pass nulls through, so an op importer composes ops
// without checking each step and fails once, in `setOutput`.
//
// Defined in Constant.cpp, GraphState.cpp, NodeImporter.cpp (inputs and
// outputs), NodeAttributes.cpp, OpBuilders.cpp and Folding.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_ONNX_NODEIMPORTER_H
#define DLC_FRONTEND_ONNX_NODEIMPORTER_H

#include "ir/DlcDialect.h"
#include "ir/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dlc::onnximport {

/// A tensor whose value is known at import time: a Constant node, a folded
/// piece of shape arithmetic, or an initializer read on demand. Integer and
/// boolean elements are held exactly in `ints`, float elements in `floats`.
struct Constant {
  mlir::Type element;
  std::vector<int64_t> shape;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool isFloat() const { return llvm::isa<mlir::FloatType>(element); }
  int64_t numel() const;
  double get(size_t i) const { return isFloat() ? floats[i] : double(ints[i]); }
  int64_t getInt(size_t i) const {
    return isFloat() ? static_cast<int64_t>(floats[i]) : ints[i];
  }
  /// Appends a value, rounded to the element type (i1: != 0).
  void push(double value);
  void pushInt(int64_t value);
  mlir::RankedTensorType type() const;
  mlir::DenseElementsAttr toAttr() const;

  static Constant empty(mlir::Type element, std::vector<int64_t> shape);
};

/// What one ONNX tensor name stands for.
struct TensorEntry {
  /// The IR value, once one exists.
  mlir::Value value;
  /// The value known at import time, when it is.
  std::optional<Constant> constant;
  /// An initializer: a parameter when used as a value, readable as a
  /// constant when an op needs its value.
  const ::onnx::TensorProto *initializer = nullptr;
};

/// The graph being built.
class GraphState {
public:
  GraphState(mlir::MLIRContext &context, std::string modelPath,
             int64_t opset);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  std::string modelPath, modelDir;
  int64_t opset;
  /// The opset the file declares, before any upgrade to 7.
  int64_t fileOpset;
  /// Opset 6 kept (the version converter gave up): binary ops may carry
  /// `broadcast` and `axis`, which input 1 is aligned by.
  bool legacyBroadcast = false;
  std::map<std::string, TensorEntry> tensors;

  /// `<model path>:0:0`, the location of errors about the whole model.
  mlir::Location fileLoc();
  /// The dlc element type of an ONNX data type, or a null type.
  mlir::Type elementType(int32_t onnxType);
  /// The element type, or an error at `loc` saying it is not supported.
  mlir::FailureOr<mlir::Type> requireElementType(int32_t onnxType,
                                                 mlir::Location loc,
                                                 const llvm::Twine &what);
  /// The bytes of an initializer or tensor attribute, little-endian in
  /// the ONNX element type's width (booleans one byte each), with external
  /// data read through the path checks.
  mlir::FailureOr<std::string> tensorBytes(const ::onnx::TensorProto &tensor,
                                           mlir::Location loc);
  /// A TensorProto as a constant (any size; read on demand).
  mlir::FailureOr<Constant> readConstant(const ::onnx::TensorProto &tensor,
                                         mlir::Location loc);
  /// The IR value of an initializer: a `dlc.param` of kind `data`.
  mlir::FailureOr<mlir::Value> materializeInitializer(
      const std::string &name, TensorEntry &entry, mlir::Location loc);
};

/// The name of an ONNX data type ("uint8", "string", ...).
const char *onnxTypeName(int32_t onnxType);

class NodeImporter;

/// Keeps the first diagnostic emitted while it lives, instead of printing
/// it, so that the caller can re-emit it prefixed with the node.
class CaptureDiagnostic {
public:
  CaptureDiagnostic(mlir::MLIRContext &context, std::string &message)
      : handler(&context, [&message](mlir::Diagnostic &diag) {
          if (message.empty())
            message = diag.str();
          return mlir::success();
        }) {}

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// What the op table knows of one ONNX op type.
struct OpSpec {
  /// Attributes the importer reads; any other is an error naming it.
  std::vector<std::string> attributes;
  mlir::LogicalResult (*import)(NodeImporter &node);
};

using OpTable = std::map<std::string, OpSpec>;

// One function per op family, each in its own file.
void addElementwiseOps(OpTable &table);
void addContractionOps(OpTable &table);
void addConvolutionOps(OpTable &table);
void addNormalizationOps(OpTable &table);
void addLossOps(OpTable &table);
void addShapeArithmeticOps(OpTable &table);
void addReshapingOps(OpTable &table);
void addSlicingPaddingOps(OpTable &table);
void addIndexingOps(OpTable &table);
void addControlFlowOps(OpTable &table);
void addRecurrentOps(OpTable &table);
void addResamplingOps(OpTable &table);
void addScatteringOps(OpTable &table);
void addSpectralOps(OpTable &table);
void addReductionOps(OpTable &table);
void addTypeOps(OpTable &table);

/// The full table, built once.
const OpTable &opTable();

/// Whether `node` is a binary op that opset 6 let broadcast input 1 from
/// `axis` of input 0 (`broadcast = 1`).
bool legacyBroadcastsAt(const ::onnx::NodeProto &node);

/// One node being imported.
class NodeImporter {
public:
  NodeImporter(GraphState &graph, const ::onnx::NodeProto &node,
               mlir::Location loc, std::string displayName);

  GraphState &graph;
  const ::onnx::NodeProto &node;
  mlir::Location loc;
  mlir::OpBuilder &b;
  std::string name;

  int64_t opset() const { return graph.opset; }
  llvm::StringRef opType() const { return node.op_type(); }
  /// "node 'conv1' (Conv): " and the message, at the node.
  mlir::InFlightDiagnostic error();

  // --- Inputs ---------------------------------------------------------------

  /// The number of inputs, trailing omitted ones excluded.
  size_t numInputs() const;
  /// Whether input `i` is given (present and not the empty name).
  bool hasInput(size_t i) const;
  /// Input `i` as a value; null with an error when it is not given. On an
  /// opset-6 binary op with `broadcast` and `axis`, input 1 comes reshaped
  /// to line up with input 0 from `axis`.
  mlir::Value input(size_t i);
  /// Input `i` as the graph holds it.
  mlir::Value rawInput(size_t i);
  /// Input `i`'s type (without materialising a constant); null with an
  /// error when it is not given or not defined.
  mlir::RankedTensorType inputType(size_t i);
  /// Input `i`'s value when it is known at import time from constants and
  /// shape arithmetic (not from an initializer), else null: ops fold only
  /// on these, so weights stay parameters.
  const Constant *foldable(size_t i);
  /// Whether `foldable(i)` would give a value (without reading it).
  bool knownAtImport(size_t i) const;
  /// Input `i`'s value, which the op needs at import time (a shape, axes,
  /// pads): a known constant or an initializer; an error otherwise.
  std::optional<Constant> constantInput(size_t i, llvm::StringRef what);
  /// Input `i` as a list of integers (see constantInput).
  std::optional<llvm::SmallVector<int64_t>> intsInput(size_t i,
                                                      llvm::StringRef what);

  // --- Attributes -----------------------------------------------------------

  const ::onnx::AttributeProto *attr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  std::optional<int64_t> intAttr(llvm::StringRef name, int64_t fallback);
  std::optional<double> floatAttr(llvm::StringRef name, double fallback);
  std::optional<llvm::SmallVector<int64_t>>
  intsAttr(llvm::StringRef name, llvm::SmallVector<int64_t> fallback = {});
  std::optional<std::string> stringAttr(llvm::StringRef name,
                                        llvm::StringRef fallback);
  /// An error that the node's attribute `name` is not supported, and why.
  mlir::LogicalResult unsupported(llvm::StringRef name,
                                  const llvm::Twine &why);

  // --- Outputs --------------------------------------------------------------

  size_t numOutputs() const { return node.output_size(); }
  /// Whether output `i` is present and named.
  bool wantsOutput(size_t i) const;
  /// Records output `i`; fails when `value` is null (an error was emitted).
  mlir::LogicalResult setOutput(size_t i, mlir::Value value);
  mlir::LogicalResult setConstant(size_t i, Constant value);

  // --- Building ops ---------------------------------------------------------

  /// Creates an op whose result type its shape inference computes; null
  /// (with the inference error at the node) on failure or null operands.
  template <typename OpTy>
  mlir::Value create(mlir::ValueRange operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    if (llvm::is_contained(operands, mlir::Value()))
      return {};
    llvm::SmallVector<mlir::Type> types;
    auto dict = mlir::DictionaryAttr::get(&graph.context, attrs);
    std::string message;
    mlir::LogicalResult inferred = mlir::success();
    {
      CaptureDiagnostic capture(graph.context, message);
      inferred = OpTy::inferReturnTypes(&graph.context, loc, operands, dict,
                                        mlir::OpaqueProperties(nullptr), {},
                                        types);
    }
    if (mlir::failed(inferred)) {
      error() << message;
      return {};
    }
    return createTyped<OpTy>(types.front(), operands, attrs);
  }

  /// Creates an op with a given result type, then verifies it.
  template <typename OpTy>
  mlir::Value createTyped(mlir::Type type, mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    if (!type || llvm::is_contained(operands, mlir::Value()))
      return {};
    if (auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type)) {
      std::string problem = shapeSizeProblem(ranked.getShape());
      if (!problem.empty()) {
        error() << "'" << OpTy::getOperationName()
                << "' would give a result of shape "
                << formatShape(ranked.getShape()) << ", which " << problem;
        return {};
      }
    }
    auto op = b.create<OpTy>(loc, mlir::TypeRange{type}, operands, attrs);
    std::string message;
    mlir::LogicalResult verified = mlir::success();
    {
      CaptureDiagnostic capture(graph.context, message);
      verified = mlir::verify(op);
    }
    if (mlir::failed(verified)) {
      op->erase();
      error() << message;
      return {};
    }
    return op->getResult(0);
  }

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) {
    return b.getNamedAttr(name, value);
  }
  mlir::NamedAttribute i64s(llvm::StringRef name,
                            llvm::ArrayRef<int64_t> values) {
    return b.getNamedAttr(name, b.getDenseI64ArrayAttr(values));
  }
  mlir::NamedAttribute i64(llvm::StringRef name, int64_t value) {
    return b.getNamedAttr(name, b.getI64IntegerAttr(value));
  }

  mlir::Value constant(const Constant &value);
  /// A rank-0 constant of `element`.
  mlir::Value scalar(double value, mlir::Type element);
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value cast(mlir::Value x, mlir::Type element);
  mlir::Value broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value compare(ComparePredicate predicate, mlir::Value lhs,
                      mlir::Value rhs);
  /// `iota` of `shape` along `axis`, of element type i64.
  mlir::Value iota(llvm::ArrayRef<int64_t> shape, int64_t axis);
  /// One-hot selection along `axis` of `x`: `result[..., j, ...] =
  /// x[..., indices[..., j, ...], ...]` (ONNX GatherElements), built from
  /// compare, select and reduce_sum. Negative indices count from the end.
  mlir::Value gatherElements(mlir::Value x, mlir::Value indices, int64_t axis);

  /// `x` in a type dlc computes with: 8-bit integers (stored, moved and
  /// cast as such) widen to i32, where every element-wise op is exact.
  mlir::Value widened(mlir::Value x);
  /// `y` back in `element` when that is an 8-bit integer (wrapping modulo
  /// 2^8, as ONNX's 8-bit arithmetic does); `y` itself otherwise.
  mlir::Value narrowed(mlir::Value y, mlir::Type element);

  mlir::Type f64() { return b.getF64Type(); }
  mlir::Type i64() { return b.getI64Type(); }
  mlir::Type i1() { return b.getI1Type(); }
};

/// Whether every input `n` is given is known at import time (and it has
/// at least one): then its ops may fold (Folding.cpp).
bool inputsKnown(NodeImporter &n);
/// Evaluates the ops `n`'s import built after `lastBefore` (null: from the
/// start of the block) with the oracle, when every operand is known, and
/// records the node's outputs as constants; does nothing otherwise.
void foldWithOracle(NodeImporter &n, mlir::Operation *lastBefore);

/// `axis` in [-rank, rank) normalised, or an error at the node.
std::optional<int64_t> normalizeAxisOrError(NodeImporter &node, int64_t axis,
                                            int64_t rank,
                                            llvm::StringRef what = "axis");

/// The shape of a value (which must be non-null).
llvm::SmallVector<int64_t> shapeOf(mlir::Value value);

} // namespace dlc::onnximport

#endif // DLC_FRONTEND_ONNX_NODEIMPORTER_H
