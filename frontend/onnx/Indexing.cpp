//===- Indexing.cpp - ONNX Gather, GatherElements, OneHot, Trilu ----------===//
//
// Ops that pick elements by index. Gather folds on values known at import
// time and otherwise maps to dlc.gather; GatherElements is a one-hot
// selection; OneHot and Trilu select through masks that compare iotas.
// GatherND gathers rows of the data flattened over the indexed dimensions;
// Compress gathers the positions its (import-time) condition keeps;
// ReverseSequence is GatherElements at reversed time indices.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

using namespace mlir;

namespace dlc::onnximport {

static LogicalResult importGather(NodeImporter &n) {
  RankedTensorType type = n.inputType(0), itype = n.inputType(1);
  auto axisAttr = n.intAttr("axis", 0);
  if (!type || !itype || !axisAttr)
    return failure();
  auto axis = normalizeAxisOrError(n, *axisAttr, type.getRank());
  if (!axis)
    return failure();
  const Constant *data = n.foldable(0), *indices = n.foldable(1);
  if (data && indices) {
    SmallVector<int64_t> shape(data->shape.begin(), data->shape.begin() + *axis);
    shape.append(indices->shape.begin(), indices->shape.end());
    shape.append(data->shape.begin() + *axis + 1, data->shape.end());
    auto strides = stridesOf(data->shape);
    int64_t irank = indices->shape.size(), dim = data->shape[*axis];
    auto istrides = stridesOf(indices->shape);
    bool inRange = true;
    Constant out = remap(*data, shape, [&](ArrayRef<int64_t> idx) {
      int64_t flatIndex = 0;
      for (int64_t k = 0; k < irank; ++k)
        flatIndex += idx[*axis + k] * istrides[k];
      int64_t at = indices->getInt(flatIndex);
      if (at < 0)
        at += dim;
      if (at < 0 || at >= dim) {
        inRange = false;
        at = 0;
      }
      int64_t flat = at * strides[*axis];
      for (int64_t d = 0; d < *axis; ++d)
        flat += idx[d] * strides[d];
      for (int64_t d = *axis + 1; d < type.getRank(); ++d)
        flat += idx[d - 1 + irank] * strides[d];
      return flat;
    });
    if (!inRange)
      return n.error() << "an index is out of range for dimension " << *axis
                       << " of size " << dim;
    return n.setConstant(0, std::move(out));
  }
  return n.setOutput(0, n.create<GatherOp>({n.input(0), n.input(1)},
                                           {n.i64("axis", *axis)}));
}

static LogicalResult importGatherElements(NodeImporter &n) {
  Value x = n.input(0), indices = n.input(1);
  auto axisAttr = n.intAttr("axis", 0);
  if (!x || !indices || !axisAttr)
    return failure();
  auto axis = normalizeAxisOrError(n, *axisAttr, shapeOf(x).size());
  if (!axis)
    return failure();
  if (shapeOf(indices).size() != shapeOf(x).size())
    return n.error() << "data and indices differ in rank";
  return n.setOutput(0, n.gatherElements(x, indices, *axis));
}

static LogicalResult importTrilu(NodeImporter &n) {
  Value x = n.input(0);
  auto upper = n.intAttr("upper", 1);
  if (!x || !upper)
    return failure();
  auto shape = shapeOf(x);
  if (shape.size() < 2)
    return n.error() << "Trilu needs rank at least 2";
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  Value k = n.hasInput(1) ? n.reshape(n.cast(n.input(1), n.i64()), {})
                          : n.scalar(0, n.i64());
  Value diff = n.create<SubOp>({n.iota({rows, cols}, 1), n.iota({rows, cols}, 0)});
  Value keep = n.compare(*upper ? ComparePredicate::ge : ComparePredicate::le,
                         diff, k);
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  return n.setOutput(0, n.create<SelectOp>({keep, x, n.scalar(0, element)}));
}

static LogicalResult importOneHot(NodeImporter &n) {
  Value indices = n.input(0), values = n.input(2);
  auto depthValue = n.constantInput(1, "depth");
  auto axisAttr = n.intAttr("axis", -1);
  if (!indices || !values || !depthValue || !axisAttr)
    return failure();
  int64_t depth = static_cast<int64_t>(depthValue->get(0));
  auto ishape = shapeOf(indices);
  int64_t rank = ishape.size() + 1;
  auto axis = normalizeAxisOrError(n, *axisAttr, rank);
  if (!axis)
    return failure();
  SmallVector<int64_t> shape(ishape), withOne(ishape);
  shape.insert(shape.begin() + *axis, depth);
  withOne.insert(withOne.begin() + *axis, 1);
  Value idx = n.cast(indices, n.i64());
  Value negative = n.compare(ComparePredicate::lt, idx, n.scalar(0, n.i64()));
  idx = n.create<SelectOp>(
      {negative, n.create<AddOp>({idx, n.scalar(depth, n.i64())}), idx});
  Value hot = n.compare(ComparePredicate::eq, n.reshape(idx, withOne),
                        n.iota(shape, *axis));
  Value off = n.reshape(slice(n, values, {0}, {1}, {1}), {});
  Value on = n.reshape(slice(n, values, {1}, {2}, {1}), {});
  return n.setOutput(0, n.create<SelectOp>({hot, on, off}));
}

static LogicalResult importGatherND(NodeImporter &n) {
  Value data = n.input(0), indices = n.input(1);
  auto batchAttr = n.intAttr("batch_dims", 0);
  if (!data || !indices || !batchAttr)
    return failure();
  auto dShape = shapeOf(data), iShape = shapeOf(indices);
  int64_t b = *batchAttr, rank = dShape.size(), irank = iShape.size();
  if (irank < 1 || b < 0 || b >= std::min(rank, irank))
    return n.error() << "batch_dims must be less than both ranks";
  int64_t k = iShape.back();
  if (k < 1 || b + k > rank)
    return n.error() << "the index tuples have " << k << " entries; the data "
                     << "has " << rank - b << " dimensions after the batch";
  for (int64_t d = 0; d < b; ++d)
    if (dShape[d] != iShape[d])
      return n.error() << "batch dimension " << d << " differs: "
                       << dShape[d] << " vs " << iShape[d];
  // data [B, M, rest...] with M the indexed dimensions flattened; each
  // tuple becomes a row number of [B * M, rest...].
  int64_t batch = product(ArrayRef<int64_t>(dShape).take_front(b));
  ArrayRef<int64_t> indexed = ArrayRef<int64_t>(dShape).slice(b, k);
  int64_t m = product(indexed);
  SmallVector<int64_t> rest(dShape.begin() + b + k, dShape.end());
  int64_t count = product(ArrayRef<int64_t>(iShape).drop_back()) / batch;
  Constant sizes = Constant::empty(n.i64(), {k}), strides = sizes;
  auto st = stridesOf(indexed);
  for (int64_t d = 0; d < k; ++d) {
    sizes.pushInt(indexed[d]);
    strides.pushInt(st[d]);
  }
  Value idx = n.cast(n.reshape(indices, {batch, count, k}), n.i64());
  Value negative = n.compare(ComparePredicate::lt, idx, n.scalar(0, n.i64()));
  idx = n.create<SelectOp>(
      {negative, n.create<AddOp>({idx, n.constant(sizes)}), idx});
  Value rows = n.create<ReduceSumOp>(
      {n.create<MulOp>({idx, n.constant(strides)})}, {n.i64s("axes", {2})});
  if (batch > 1)
    rows = n.create<AddOp>(
        {rows, n.create<MulOp>({n.iota({batch, count}, 0),
                                n.scalar(m, n.i64())})});
  SmallVector<int64_t> flat{batch * m};
  flat.append(rest);
  Value y = n.create<GatherOp>({n.reshape(data, flat), rows},
                               {n.i64("axis", 0)});
  SmallVector<int64_t> shape(iShape.begin(), iShape.end() - 1);
  shape.append(rest);
  return n.setOutput(0, n.reshape(y, shape));
}

static LogicalResult importCompress(NodeImporter &n) {
  Value x = n.input(0);
  auto condition = n.constantInput(1, "condition");
  if (!x || !condition)
    return failure();
  auto shape = shapeOf(x);
  int64_t axis = 0;
  if (n.hasAttr("axis")) {
    auto a = n.intAttr("axis", 0);
    if (!a)
      return failure();
    auto normal = normalizeAxisOrError(n, *a, shape.size());
    if (!normal)
      return failure();
    axis = *normal;
  } else {
    x = n.reshape(x, {product(shape)});
  }
  int64_t size = shapeOf(x)[axis];
  if (condition->numel() > size)
    return n.error() << "condition has " << condition->numel()
                     << " entries for a dimension of " << size;
  Constant kept = Constant::empty(n.i64(), {0});
  for (int64_t i = 0; i < condition->numel(); ++i)
    if (condition->getInt(i))
      kept.pushInt(i);
  kept.shape = {static_cast<int64_t>(kept.ints.size())};
  return n.setOutput(0, n.create<GatherOp>({x, n.constant(kept)},
                                           {n.i64("axis", axis)}));
}

static LogicalResult importReverseSequence(NodeImporter &n) {
  Value x = n.input(0), lens = n.input(1);
  auto batchAttr = n.intAttr("batch_axis", 1), timeAttr = n.intAttr("time_axis", 0);
  if (!x || !lens || !batchAttr || !timeAttr)
    return failure();
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  auto batchAxis = normalizeAxisOrError(n, *batchAttr, rank, "batch_axis");
  auto timeAxis = normalizeAxisOrError(n, *timeAttr, rank, "time_axis");
  if (!batchAxis || !timeAxis)
    return failure();
  if (*batchAxis == *timeAxis)
    return n.error() << "batch_axis and time_axis must differ";
  // Position t of batch entry b reads t' = len[b] - 1 - t when t < len[b].
  SmallVector<int64_t> lensShape(rank, 1);
  lensShape[*batchAxis] = shape[*batchAxis];
  Value len = n.reshape(n.cast(lens, n.i64()), lensShape);
  Value t = n.iota(shape, *timeAxis);
  Value reversed = n.create<SubOp>(
      {n.create<SubOp>({len, n.scalar(1, n.i64())}), t});
  Value source = n.create<SelectOp>(
      {n.compare(ComparePredicate::lt, t, len), reversed, t});
  return n.setOutput(0, n.gatherElements(x, source, *timeAxis));
}

void addIndexingOps(OpTable &t) {
  t["GatherND"] = {{"batch_dims"}, importGatherND};
  t["Compress"] = {{"axis"}, importCompress};
  t["ReverseSequence"] = {{"batch_axis", "time_axis"}, importReverseSequence};
  t["Gather"] = {{"axis"}, importGather};
  t["GatherElements"] = {{"axis"}, importGatherElements};
  t["Trilu"] = {{"upper"}, importTrilu};
  t["OneHot"] = {{"axis"}, importOneHot};
}

} // namespace dlc::onnximport
