//===- Contraction.cpp - ONNX MatMul and Gemm -----------------------------===//
//
// MatMul follows NumPy (1-D operands gain and then lose a unit dimension);
// Gemm is `alpha * op(A) op(B) + beta * C` with the transposes folded into
// `dlc.matmul`'s flags. Einsum takes diagonals with masks, sums labels
// no one else needs, and contracts operands pairwise as batched matmuls
// (batch, kept, contracted labels transposed and flattened into place).
// Det of matrices up to 4x4 is Leibniz's sum over permutations.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeHelpers.h"

#include <numeric>

using namespace mlir;

namespace dlc::onnximport {

static LogicalResult importMatMul(NodeImporter &n) {
  Value a = n.input(0), b = n.input(1);
  if (!a || !b)
    return failure();
  auto aShape = shapeOf(a), bShape = shapeOf(b);
  if (aShape.empty() || bShape.empty())
    return n.error() << "MatMul needs operands of rank at least 1";
  bool aVector = aShape.size() == 1, bVector = bShape.size() == 1;
  if (aVector)
    a = n.reshape(a, {1, aShape[0]});
  if (bVector)
    b = n.reshape(b, {bShape[0], 1});
  Value y = n.create<MatmulOp>({a, b});
  if (!y)
    return failure();
  SmallVector<int64_t> shape = shapeOf(y);
  if (bVector)
    shape.erase(shape.end() - 1);
  if (aVector)
    shape.erase(shape.end() - (bVector ? 1 : 2));
  return n.setOutput(0, n.reshape(y, shape));
}

static LogicalResult importGemm(NodeImporter &n) {
  auto alpha = n.floatAttr("alpha", 1.0), beta = n.floatAttr("beta", 1.0);
  auto transA = n.intAttr("transA", 0), transB = n.intAttr("transB", 0);
  if (!alpha || !beta || !transA || !transB)
    return failure();
  Value a = n.input(0), b = n.input(1);
  if (!a || !b)
    return failure();
  Type element = cast<RankedTensorType>(a.getType()).getElementType();
  Value y = n.create<MatmulOp>(
      {a, b}, {n.named("transpose_a", n.b.getBoolAttr(*transA != 0)),
               n.named("transpose_b", n.b.getBoolAttr(*transB != 0))});
  if (*alpha != 1.0)
    y = n.create<MulOp>({y, n.scalar(*alpha, element)});
  if (n.hasInput(2)) {
    Value c = n.input(2);
    if (*beta != 1.0)
      c = n.create<MulOp>({c, n.scalar(*beta, element)});
    y = n.create<AddOp>({y, c});
  }
  return n.setOutput(0, y);
}

namespace {
/// An Einsum operand: its value and one label per dimension.
struct Term {
  Value value;
  std::string labels;
};
} // namespace

/// Sums the dimensions of `t` whose labels are not in `keep`.
static void sumExcept(NodeImporter &n, Term &t, StringRef keep) {
  SmallVector<int64_t> axes;
  std::string rest;
  for (auto [i, c] : llvm::enumerate(t.labels)) {
    if (keep.contains(c))
      rest += c;
    else
      axes.push_back(i);
  }
  if (axes.empty())
    return;
  t.value = n.create<ReduceSumOp>({t.value}, {n.i64s("axes", axes)});
  t.labels = rest;
}

/// `t` transposed to `order` (a permutation of its labels) and broadcast to
/// the labels' sizes.
static Value arrange(NodeImporter &n, const Term &t, StringRef order,
                     const std::map<char, int64_t> &sizes) {
  SmallVector<int64_t> perm, shape;
  for (char c : order) {
    perm.push_back(t.labels.find(c));
    shape.push_back(sizes.at(c));
  }
  return n.broadcastTo(n.transpose(t.value, perm), shape);
}

static int64_t sizeOf(StringRef labels, const std::map<char, int64_t> &sizes) {
  int64_t p = 1;
  for (char c : labels)
    p *= sizes.at(c);
  return p;
}

/// a and b contracted, keeping the labels in `keep`.
static Term contract(NodeImporter &n, Term a, Term b, StringRef keep,
                     const std::map<char, int64_t> &sizes) {
  std::string keepA = keep.str() + b.labels, keepB = keep.str() + a.labels;
  sumExcept(n, a, keepA);
  sumExcept(n, b, keepB);
  std::string batch, contracted, left, right;
  for (char c : a.labels) {
    if (b.labels.find(c) == std::string::npos)
      left += c;
    else if (keep.contains(c))
      batch += c;
    else
      contracted += c;
  }
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos)
      right += c;
  int64_t nb = sizeOf(batch, sizes), nl = sizeOf(left, sizes),
          nc = sizeOf(contracted, sizes), nr = sizeOf(right, sizes);
  Value x = n.reshape(arrange(n, a, batch + left + contracted, sizes),
                      {nb, nl, nc});
  Value y = n.reshape(arrange(n, b, batch + contracted + right, sizes),
                      {nb, nc, nr});
  Value z = n.create<MatmulOp>({x, y});
  SmallVector<int64_t> shape;
  for (char c : batch + left + right)
    shape.push_back(sizes.at(c));
  return {n.reshape(z, shape), batch + left + right};
}

static LogicalResult importEinsum(NodeImporter &n) {
  auto equation = n.stringAttr("equation", "");
  if (!equation)
    return failure();
  std::string eq;
  for (char c : *equation)
    if (c != ' ')
      eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  SmallVector<std::string> specs;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    specs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (specs.size() != n.numInputs())
    return n.error() << "the equation '" << *equation << "' names "
                     << specs.size() << " operands; the node has "
                     << n.numInputs();
  // Ellipsis dimensions get labels \1..\E, aligned from the right.
  SmallVector<Term> terms;
  int64_t ellipsis = 0;
  for (auto [i, spec] : llvm::enumerate(specs)) {
    Value v = n.input(i);
    if (!v)
      return failure();
    int64_t rank = shapeOf(v).size();
    size_t dots = spec.find("...");
    int64_t letters = spec.size() - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos ? letters != rank : letters > rank)
      return n.error() << "operand " << i << " has rank " << rank
                       << ", which '" << spec << "' does not label";
    if (dots != std::string::npos)
      ellipsis = std::max<int64_t>(ellipsis, rank - letters);
    terms.push_back({v, spec});
  }
  std::string allEllipsis;
  for (int64_t e = 1; e <= ellipsis; ++e)
    allEllipsis += char(e);
  std::map<char, int64_t> sizes, uses;
  for (Term &t : terms) {
    size_t dots = t.labels.find("...");
    auto shape = shapeOf(t.value);
    if (dots != std::string::npos) {
      int64_t e = shape.size() - (t.labels.size() - 3);
      t.labels.replace(dots, 3, allEllipsis.substr(ellipsis - e));
    }
    for (auto [i, c] : llvm::enumerate(t.labels)) {
      if (!std::isalpha(static_cast<unsigned char>(c)) && c > ellipsis)
        return n.error() << "the equation '" << *equation
                         << "' has a label that is not a letter";
      int64_t &size = sizes.try_emplace(c, 1).first->second;
      if (size != 1 && shape[i] != 1 && shape[i] != size)
        return n.error() << "label '" << c << "' has sizes " << size
                         << " and " << shape[i];
      size = std::max(size, shape[i]);
      ++uses[c];
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    size_t dots = out.find("...");
    if (dots != std::string::npos)
      out.replace(dots, 3, allEllipsis);
    for (char c : out)
      if (!sizes.count(c))
        return n.error() << "output label '" << c
                         << "' is not an input's label";
  } else {
    out = allEllipsis;
    for (auto [c, count] : uses)
      if (count == 1 && c > ellipsis)
        out += c;
  }
  // 1. Repeated labels in one operand: the diagonal.
  for (Term &t : terms) {
    for (size_t p = 0; p < t.labels.size(); ++p) {
      size_t q;
      while ((q = t.labels.find(t.labels[p], p + 1)) != std::string::npos) {
        auto shape = shapeOf(t.value);
        Value same = n.compare(ComparePredicate::eq, n.iota(shape, p),
                               n.iota(shape, q));
        Type element = cast<RankedTensorType>(t.value.getType()).getElementType();
        t.value = n.create<SelectOp>({same, t.value, n.scalar(0, element)});
        t.value = n.create<ReduceSumOp>(
            {t.value}, {n.i64s("axes", {static_cast<int64_t>(q)})});
        t.labels.erase(q, 1);
        if (!t.value)
          return failure();
      }
    }
  }
  // 2. Pairwise contraction, keeping what the output or a later operand
  //    needs.
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string keep = out;
    for (size_t j = i + 1; j < terms.size(); ++j)
      keep += terms[j].labels;
    acc = contract(n, acc, terms[i], keep, sizes);
    if (!acc.value)
      return failure();
  }
  sumExcept(n, acc, out);
  return n.setOutput(0, arrange(n, acc, out, sizes));
}

/// The largest matrix Det expands (4! = 24 products of 4).
static constexpr int64_t kMaxDet = 4;

static LogicalResult importDet(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return failure();
  auto shape = shapeOf(x);
  int64_t rank = shape.size();
  if (rank < 2 || shape[rank - 1] != shape[rank - 2])
    return n.error() << "Det needs square matrices [..., M, M]";
  int64_t m = shape.back();
  if (m > kMaxDet)
    return n.error() << "Det of " << m << "x" << m
                     << " matrices is not supported (dlc expands up to "
                     << kMaxDet << "x" << kMaxDet << ")";
  SmallVector<int64_t> batch(shape.begin(), shape.end() - 2);
  // Every element x[..., i, j] as a [...] value.
  auto element = [&](int64_t i, int64_t j) {
    SmallVector<int64_t> starts(rank, 0), limits(shape), strides(rank, 1);
    starts[rank - 2] = i;
    limits[rank - 2] = i + 1;
    starts[rank - 1] = j;
    limits[rank - 1] = j + 1;
    return n.reshape(slice(n, x, starts, limits, strides), batch);
  };
  SmallVector<SmallVector<Value>> e(m);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j)
      e[i].push_back(element(i, j));
  SmallVector<int64_t> perm(m);
  std::iota(perm.begin(), perm.end(), 0);
  Value det;
  do {
    int64_t inversions = 0;
    for (int64_t a = 0; a < m; ++a)
      for (int64_t b = a + 1; b < m; ++b)
        inversions += perm[a] > perm[b];
    Value term = e[0][perm[0]];
    for (int64_t i = 1; i < m; ++i)
      term = n.create<MulOp>({term, e[i][perm[i]]});
    det = !det ? (inversions % 2 ? n.create<NegOp>({term}) : term)
          : inversions % 2 ? n.create<SubOp>({det, term})
                           : n.create<AddOp>({det, term});
  } while (std::next_permutation(perm.begin(), perm.end()));
  return n.setOutput(0, det);
}

void addContractionOps(OpTable &t) {
  t["Det"] = {{}, importDet};
  t["Einsum"] = {{"equation"}, importEinsum};
  t["MatMul"] = {{}, importMatMul};
  t["Gemm"] = {{"alpha", "beta", "transA", "transB"}, importGemm};
}

} // namespace dlc::onnximport
