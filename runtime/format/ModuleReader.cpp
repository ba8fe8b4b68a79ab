//===- ModuleReader.cpp - Load and check a .dlcm file ---------------------===//
//
// The four stages of ModuleReader.h, each a method of Checker. Nothing here
// trusts a number from the file before comparing it with the file's size or
// with a table it indexes; arithmetic on file values is overflow-checked.
//
//===----------------------------------------------------------------------===//

#include "runtime/format/ModuleReader.h"

#include "runtime/base/Checksum.h"
#include "runtime/base/Log.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iomanip>
#include <set>

namespace dlc::format {

using rt::addOverflows;
using rt::alignUp;
using rt::mulOverflows;
using rt::Status;
using rt::strCat;

namespace {

/// Whether a vector's elements are aligned for their 8-byte type. The
/// FlatBuffers verifier (2.0.8) checks the alignment of a vector's 4-byte
/// length only, so a hostile header can place int64 shapes or BufferRef
/// structs at 4 mod 8, where reading them is undefined behaviour (found by
/// the dlcm_load fuzz target under UBSan).
/// (An empty vector has nothing to read: FlatBuffers may place it anywhere.)
template <typename V> bool elementsAligned(const V *vector) {
  return !vector || vector->size() == 0 || reinterpret_cast<uintptr_t>(vector->Data()) % 8 == 0;
}

std::string hex32(uint32_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(8) << std::setfill('0') << v;
  return os.str();
}

/// "[offset, offset + bytes)" without overflowing.
bool rangeInside(uint64_t limit, uint64_t offset, uint64_t bytes) {
  return offset <= limit && bytes <= limit - offset;
}

const char *spaceName(fb::BufferSpace space) {
  switch (space) {
  case fb::BufferSpace::arena:
    return "arena";
  case fb::BufferSpace::input:
    return "input";
  case fb::BufferSpace::output:
    return "output";
  case fb::BufferSpace::weight:
    return "weight";
  case fb::BufferSpace::state:
    return "state";
  case fb::BufferSpace::status:
    return "status";
  }
  return "unknown";
}

template <typename T> uint32_t sizeOf(const flatbuffers::Vector<T> *v) {
  return v ? v->size() : 0;
}

/// Facts established by earlier stages that later ones use.
struct Facts {
  Prelude prelude;
  const fb::Module *root = nullptr;
  std::vector<TensorInfo> inputs, outputs, weights;
  std::vector<StateInfo> state;
  std::vector<DynamicDimInfo> dynamicDims;
  int weightSection = -1;
};

class Checker {
public:
  Checker(ByteSpan file, const std::string &label) : file_(file), label_(label) {}

  Status run(Facts *facts) {
    facts_ = facts;
    DLC_RETURN_IF_ERROR(checkPrelude());
    DLC_RETURN_IF_ERROR(checkHeader());
    DLC_RETURN_IF_ERROR(checkChecksums());
    return checkSemantics();
  }

private:
  Status error(const std::string &section, uint64_t offset, const std::string &what) const {
    return rt::invalidModule(label_, ": section '", section, "' at byte ", offset, ": ", what);
  }
  uint64_t at(const void *p) const {
    return static_cast<uint64_t>(static_cast<const uint8_t *>(p) - file_.data());
  }
  /// An error inside the FlatBuffers header, at the table or struct `where`.
  template <typename... Args> Status headerError(const void *where, const Args &...args) const {
    return error("header", at(where), strCat(args...));
  }

  Status checkPrelude();
  Status checkHeader();
  Status checkChecksums();
  Status checkSemantics();

  Status checkShape(const void *where, const std::string &who, fb::DType dtype,
                    const flatbuffers::Vector<int64_t> *shape, TensorInfo *info) const;
  Status checkDynamicDims();
  Status checkDynamicIndex(const void *where, const std::string &who, int32_t index) const;
  Status checkTensors(const flatbuffers::Vector<flatbuffers::Offset<fb::TensorSpec>> *specs,
                      const char *list, std::vector<TensorInfo> *out) const;
  Status checkWeights();
  Status checkState();
  Status checkDraw(const fb::Draw &d, const std::string &who, std::optional<Draw> *out) const;
  Status checkKernels() const;
  Status checkLibraryGemm(const fb::Kernel &kernel, const std::string &who) const;
  Status checkChecks() const;
  Status checkMeshAndCollectives(uint64_t *rankCount) const;
  Status checkPlan(uint32_t rank, const fb::Plan *plan) const;
  Status checkRef(const fb::BufferRef *ref, const fb::Plan *plan, const std::string &who,
                  uint64_t *limit) const;

  ByteSpan file_;
  const std::string &label_;
  Facts *facts_ = nullptr;
  uint64_t headerEnd_ = 0;
};

//===----------------------------------------------------------------------===//
// 1. Prelude
//===----------------------------------------------------------------------===//

Status Checker::checkPrelude() {
  if (file_.size() < 4 || std::memcmp(file_.data(), kMagic, 4) != 0) {
    std::string got;
    for (size_t i = 0; i < 4 && i < file_.size(); ++i) {
      char c = static_cast<char>(file_[i]);
      got += (c >= 32 && c < 127) ? std::string(1, c) : strCat("\\x", hex32(file_[i]).substr(8));
    }
    return error("prelude", 0, strCat("identifier '", got, "' is not 'DLCM' (not a dlc module)"));
  }
  if (file_.size() < kPreludeSize)
    return error("prelude", file_.size(),
                 strCat("file ends after ", file_.size(), " bytes, inside the 64-byte prelude"));
  Prelude p = decodePrelude(file_.data());
  uint32_t crc = rt::crc32(file_.subspan(0, 60));
  if (crc != p.preludeCrc32)
    return error("prelude", 60,
                 strCat("checksum mismatch (stored ", hex32(p.preludeCrc32), ", computed ",
                        hex32(crc), ")"));
  if (p.major != kFormatMajor)
    return error("prelude", 4,
                 strCat("format version ", p.major, ".", p.minor,
                        " is not supported (this runtime reads ", kFormatMajor, ".x)"));
  if (p.headerOffset != kHeaderOffset)
    return error("prelude", 8, strCat("header offset ", p.headerOffset, " is not 64"));
  if (p.fileSize != file_.size())
    return error("prelude", 24,
                 strCat("file is ", file_.size(), " bytes but the prelude records ", p.fileSize,
                        p.fileSize > file_.size() ? " (truncated)" : " (extended)"));
  if (p.headerSize < 8 || p.headerSize > kMaxHeaderSize ||
      !rangeInside(file_.size(), kHeaderOffset, p.headerSize))
    return error("prelude", 16,
                 strCat("header size ", p.headerSize, " does not fit in the file of ",
                        file_.size(), " bytes"));
  if (p.flags != 0)
    return error("prelude", 36, strCat("unknown flags ", hex32(p.flags)));
  for (uint64_t i = 40; i < 60; ++i)
    if (file_[i] != 0)
      return error("prelude", i, "reserved byte is not zero");
  facts_->prelude = p;
  headerEnd_ = kHeaderOffset + p.headerSize;
  return rt::okStatus();
}

//===----------------------------------------------------------------------===//
// 2. FlatBuffers header
//===----------------------------------------------------------------------===//

Status Checker::checkHeader() {
  const uint8_t *header = file_.data() + kHeaderOffset;
  const uint64_t size = facts_->prelude.headerSize;
  if (!flatbuffers::BufferHasIdentifier(header, fb::ModuleIdentifier()))
    return error("header", kHeaderOffset + 4, "FlatBuffers file identifier is not 'DLCM'");
  // Depth 64 and a million tables are far above any real module and bound the
  // verifier's own work on a hostile one.
  flatbuffers::Verifier verifier(header, static_cast<size_t>(size), /*max_depth=*/64,
                                 /*max_tables=*/1000000);
  if (!fb::VerifyModuleBuffer(verifier))
    return error("header", kHeaderOffset,
                 strCat("the FlatBuffers verifier rejected the ", size,
                        "-byte header (an offset, vector or string points outside it)"));
  facts_->root = fb::GetModule(header);
  return rt::okStatus();
}

//===----------------------------------------------------------------------===//
// 3. Checksums and the section table
//===----------------------------------------------------------------------===//

Status Checker::checkChecksums() {
  const Prelude &p = facts_->prelude;
  uint32_t crc = rt::crc32(file_.subspan(kHeaderOffset, p.headerSize));
  if (crc != p.headerCrc32)
    return error("header", kHeaderOffset,
                 strCat("checksum mismatch (stored ", hex32(p.headerCrc32), ", computed ",
                        hex32(crc), ")"));

  const auto *sections = facts_->root->sections();
  uint64_t previousEnd = headerEnd_;
  std::set<std::string> names;
  for (uint32_t i = 0; i < sizeOf(sections); ++i) {
    const fb::Section *s = sections->Get(i);
    const std::string name = s->name()->str();
    const std::string who = strCat("sections[", i, "] ('", name, "')");
    if (name.empty())
      return headerError(s, who, ": empty name");
    if (!names.insert(name).second)
      return headerError(s, who, ": a second section of this name");
    if (s->kind() != fb::SectionKind::weights && s->kind() != fb::SectionKind::binary)
      return headerError(s, who, ": unknown kind ", static_cast<int>(s->kind()));
    if (s->kind() == fb::SectionKind::weights) {
      if (facts_->weightSection >= 0)
        return headerError(s, who, ": a second weights section");
      facts_->weightSection = static_cast<int>(i);
    }
    if (s->offset() % kSectionAlignment != 0)
      return headerError(s, who, ": offset ", s->offset(), " is not a multiple of 64");
    if (s->offset() < previousEnd)
      return headerError(s, who, ": offset ", s->offset(),
                         " overlaps the header or the previous section (which end at ",
                         previousEnd, ")");
    if (!rangeInside(file_.size(), s->offset(), s->size()))
      return headerError(s, who, ": offset ", s->offset(), " + size ", s->size(),
                         " goes past the end of the file (", file_.size(), " bytes)");
    previousEnd = s->offset() + s->size();
  }
  // Every byte is covered: header and sections by CRCs, the rest must be zero.
  uint64_t cursor = headerEnd_;
  auto checkZero = [&](uint64_t end) -> Status {
    for (uint64_t b = cursor; b < end; ++b)
      if (file_[b] != 0)
        return error("padding", b, "padding byte is not zero");
    return rt::okStatus();
  };
  for (uint32_t i = 0; i < sizeOf(sections); ++i) {
    const fb::Section *s = sections->Get(i);
    DLC_RETURN_IF_ERROR(checkZero(s->offset()));
    uint32_t sectionCrc = rt::crc32(file_.subspan(s->offset(), s->size()));
    if (sectionCrc != s->crc32())
      return error(s->name()->str(), s->offset(),
                   strCat("checksum mismatch over ", s->size(), " bytes (stored ",
                          hex32(s->crc32()), ", computed ", hex32(sectionCrc), ")"));
    cursor = s->offset() + s->size();
  }
  return checkZero(file_.size());
}

//===----------------------------------------------------------------------===//
// 4. Semantics
//===----------------------------------------------------------------------===//

Status Checker::checkShape(const void *where, const std::string &who, fb::DType dtype,
                           const flatbuffers::Vector<int64_t> *shape, TensorInfo *info) const {
  std::optional<DType> known = dtypeFromWire(dtype);
  if (!known)
    return headerError(where, who, ": unknown dtype ", static_cast<int>(dtype));
  uint32_t rank = sizeOf(shape);
  if (rank > kMaxRank)
    return headerError(shape, who, ": rank ", rank, " is over the limit of ", kMaxRank);
  if (!elementsAligned(shape))
    return headerError(shape, who, ": the shape's int64 elements are not 8-byte aligned");
  uint64_t bytes = elementSize(*known);
  for (uint32_t d = 0; d < rank; ++d) {
    int64_t dim = shape->Get(d);
    if (dim < 0)
      return headerError(shape, who, ": dimension ", d, " is negative (", dim, ")");
    if (mulOverflows(bytes, static_cast<uint64_t>(dim), &bytes) || bytes > kMaxTensorBytes)
      return headerError(shape, who, ": shape ", shapeString(shape->data(), rank), " of ",
                         dtypeName(*known), " is over the 2^48-byte limit for a tensor");
  }
  info->dtype = *known;
  info->shape.clear();
  if (shape)
    info->shape.assign(shape->begin(), shape->end());
  info->bytes = bytes;
  return rt::okStatus();
}

Status Checker::checkDynamicDims() {
  const auto *dims = facts_->root->dynamic_dims();
  for (uint32_t i = 0; i < sizeOf(dims); ++i) {
    const fb::DynamicDim *d = dims->Get(i);
    DynamicDimInfo info{d->name()->str(), d->min(), d->max()};
    std::string who = strCat("dynamic_dims[", i, "] ('", info.name, "')");
    // The executor picks one N per run for every dynamic tensor and launch;
    // more than one dimension would need a shape per tensor (not yet).
    if (i > 0)
      return headerError(d, who, ": a second dynamic dimension (this runtime runs modules "
                                 "with at most one)");
    if (info.name.empty())
      return headerError(d, who, ": empty name");
    if (info.min < 1 || info.min > info.max)
      return headerError(d, who, ": range [", info.min, ", ", info.max,
                         "] is not 1 <= min <= max");
    facts_->dynamicDims.push_back(std::move(info));
  }
  return rt::okStatus();
}

Status Checker::checkDynamicIndex(const void *where, const std::string &who,
                                  int32_t index) const {
  if (index < -1 || (index >= 0 && static_cast<size_t>(index) >= facts_->dynamicDims.size()))
    return headerError(where, who, ": dynamic dimension ", index, " is out of range (",
                       facts_->dynamicDims.size(), " dynamic dimensions; -1 for none)");
  return rt::okStatus();
}

Status Checker::checkTensors(
    const flatbuffers::Vector<flatbuffers::Offset<fb::TensorSpec>> *specs, const char *list,
    std::vector<TensorInfo> *out) const {
  std::set<std::string> names;
  for (uint32_t i = 0; i < sizeOf(specs); ++i) {
    const fb::TensorSpec *t = specs->Get(i);
    TensorInfo info;
    info.name = t->name()->str();
    std::string who = strCat(list, "[", i, "] ('", info.name, "')");
    if (info.name.empty())
      return headerError(t, who, ": empty name");
    if (!names.insert(info.name).second)
      return headerError(t, who, ": a second ", list, " of this name");
    DLC_RETURN_IF_ERROR(checkShape(t, who, t->dtype(), t->shape(), &info));
    DLC_RETURN_IF_ERROR(checkDynamicIndex(t, who, t->dynamic_dim()));
    if (t->dynamic_dim() >= 0) {
      // Its rows at N = n are shape[0] / max * n: a whole number per N.
      const DynamicDimInfo &dim = facts_->dynamicDims[t->dynamic_dim()];
      if (info.shape.empty() || info.shape[0] <= 0 || info.shape[0] % dim.max != 0)
        return headerError(t, who, ": shape ", shapeString(info.shape.data(), info.shape.size()),
                           " grows with dynamic dimension '", dim.name,
                           "', but its dimension 0 is not a positive multiple of its max ",
                           dim.max);
      info.dynamicDim = t->dynamic_dim();
    }
    out->push_back(std::move(info));
  }
  return rt::okStatus();
}

Status Checker::checkWeights() {
  const auto *weights = facts_->root->weights();
  uint64_t sectionSize = 0;
  if (facts_->weightSection >= 0)
    sectionSize = facts_->root->sections()->Get(facts_->weightSection)->size();
  for (uint32_t i = 0; i < sizeOf(weights); ++i) {
    const fb::Weight *w = weights->Get(i);
    TensorInfo info;
    info.name = w->name()->str();
    std::string who = strCat("weights[", i, "] ('", info.name, "')");
    if (info.name.empty())
      return headerError(w, who, ": empty name");
    DLC_RETURN_IF_ERROR(checkShape(w, who, w->dtype(), w->shape(), &info));
    if (w->size() != info.bytes)
      return headerError(w, who, ": size ", w->size(), " is not the ", info.bytes,
                         " bytes of its shape");
    if (w->draw()) { // format 1.5: drawn when loaded, nothing in the file
      std::optional<Draw> draw;
      DLC_RETURN_IF_ERROR(checkDraw(*w->draw(), who, &draw));
      if (w->offset() != kDrawnWeightOffset)
        return headerError(w, who, ": a drawn weight at offset ", w->offset(), ", not 2^64 - 1");
      facts_->weights.push_back(std::move(info));
      continue;
    }
    if (facts_->weightSection < 0)
      return headerError(w, who, ": the module has no weights section");
    if (w->offset() % kSectionAlignment != 0)
      return headerError(w, who, ": offset ", w->offset(), " is not a multiple of 64");
    if (!rangeInside(sectionSize, w->offset(), w->size()))
      return headerError(w, who, ": offset ", w->offset(), " + size ", w->size(),
                         " goes past the end of the weights section (", sectionSize, " bytes)");
    facts_->weights.push_back(std::move(info));
  }
  return rt::okStatus();
}

/// A draw (format 1.5) the runtime can make: a known kind, finite options.
Status Checker::checkDraw(const fb::Draw &d, const std::string &who,
                          std::optional<Draw> *out) const {
  *out = drawFromWire(d);
  if (*out)
    return rt::okStatus();
  if (d.kind() > fb::DrawKind::MAX)
    return headerError(&d, who, ": unknown draw kind ", static_cast<int>(d.kind()));
  return headerError(&d, who, ": a draw option is not finite (mean ", d.mean(), ", std ",
                     d.std(), ", low ", d.low(), ", high ", d.high(), ")");
}

Status Checker::checkState() {
  const auto *state = facts_->root->state();
  std::set<std::string> names;
  for (uint32_t i = 0; i < sizeOf(state); ++i) {
    const fb::StateSpec *s = state->Get(i);
    StateInfo info;
    info.name = s->name()->str();
    std::string who = strCat("state[", i, "] ('", info.name, "')");
    if (info.name.empty())
      return headerError(s, who, ": empty name");
    if (!names.insert(info.name).second)
      return headerError(s, who, ": a second state tensor of this name");
    DLC_RETURN_IF_ERROR(checkShape(s, who, s->dtype(), s->shape(), &info));
    switch (s->init()) {
    case fb::StateInit::zeros:
      break;
    case fb::StateInit::weight: {
      if (s->weight() >= facts_->weights.size())
        return headerError(s, who, ": initial weight ", s->weight(),
                           " is out of range (", facts_->weights.size(), " weights)");
      const TensorInfo &w = facts_->weights[s->weight()];
      if (w.dtype != info.dtype || w.shape != info.shape)
        return headerError(s, who, ": initial weight ", s->weight(), " ('", w.name,
                           "') is ", dtypeName(w.dtype), shapeString(w.shape.data(), w.shape.size()),
                           ", the state ", dtypeName(info.dtype),
                           shapeString(info.shape.data(), info.shape.size()));
      info.initialWeight = static_cast<int64_t>(s->weight());
      break;
    }
    case fb::StateInit::drawn:
      if (!s->draw())
        return headerError(s, who, ": drawn with no draw");
      DLC_RETURN_IF_ERROR(checkDraw(*s->draw(), who, &info.draw));
      break;
    default:
      return headerError(s, who, ": unknown initialiser ", static_cast<int>(s->init()));
    }
    facts_->state.push_back(std::move(info));
  }
  return rt::okStatus();
}

/// A library GEMM reads and writes memory by its dimensions alone: they
/// must fit the arguments it names, which the plan's launches bind to
/// buffers at least that large.
Status Checker::checkLibraryGemm(const fb::Kernel &kernel, const std::string &who) const {
  const fb::LibraryGemm *g = kernel.library_gemm();
  std::string whoGemm = who + ".library_gemm";
  if (kernel.target() != fb::Target::cuda)
    return headerError(g, whoGemm, ": a library GEMM on a non-CUDA kernel");
  const uint32_t argCount = sizeOf(kernel.args());
  auto isFloat = [](fb::DType t) {
    return t == fb::DType::f32 || t == fb::DType::bf16 || t == fb::DType::f16;
  };
  if (!isFloat(g->operand_dtype()) || !isFloat(g->result_dtype()))
    return headerError(g, whoGemm, ": operand and result dtypes must be f32, bf16 or f16");
  if (g->tf32() && g->operand_dtype() != fb::DType::f32)
    return headerError(g, whoGemm, ": tf32 products of non-f32 operands");
  if (g->activation() > fb::GemmActivation::gelu_tanh)
    return headerError(g, whoGemm, ": unknown activation ", static_cast<int>(g->activation()));
  constexpr int64_t kMaxDim = int64_t(1) << 31;
  for (int64_t dim : {g->batch(), g->m(), g->n(), g->k()})
    if (dim < 1 || dim > kMaxDim)
      return headerError(g, whoGemm, ": batch, m, n and k must be in [1, 2^31]");
  if (g->stride_a() < 0 || g->stride_a() > kMaxDim * kMaxDim || g->stride_b() < 0 ||
      g->stride_b() > kMaxDim * kMaxDim)
    return headerError(g, whoGemm, ": a batch stride outside [0, 2^62]");
  // The bytes each operand spans, checked against its argument's.
  auto span = [&](int64_t rows, int64_t cols, int64_t stride, fb::DType t) {
    unsigned __int128 elements =
        (unsigned __int128)(g->batch() - 1) * (unsigned __int128)stride +
        (unsigned __int128)rows * (unsigned __int128)cols;
    return elements * elementSize(*dtypeFromWire(t));
  };
  auto checkArg = [&](int64_t index, const char *role, unsigned __int128 bytes,
                      bool written) -> Status {
    if (index < 0 || index >= argCount)
      return headerError(g, whoGemm, ": ", role, " is argument ", index, " of ", argCount);
    const fb::KernelArg *arg = kernel.args()->Get(static_cast<uint32_t>(index));
    if (written && arg->access() == fb::Access::read)
      return headerError(g, whoGemm, ": ", role, " (argument ", index, ") is read-only");
    if (bytes > arg->bytes())
      return headerError(g, whoGemm, ": ", role, " spans more bytes than argument ", index,
                         " (", arg->bytes(), ")");
    return rt::okStatus();
  };
  const int64_t mn = g->m() * g->n();
  DLC_RETURN_IF_ERROR(checkArg(g->a(), "A", span(g->m(), g->k(), g->stride_a(),
                                                  g->operand_dtype()), false));
  DLC_RETURN_IF_ERROR(checkArg(g->b(), "B", span(g->k(), g->n(), g->stride_b(),
                                                  g->operand_dtype()), false));
  DLC_RETURN_IF_ERROR(checkArg(g->d(), "D", span(g->m(), g->n(), mn, g->result_dtype()), true));
  if (g->c() != -1)
    DLC_RETURN_IF_ERROR(checkArg(g->c(), "C", span(g->m(), g->n(), mn, g->result_dtype()),
                                 false));
  if (g->bias() != -1) {
    if (g->bias_dtype() != g->result_dtype() && g->bias_dtype() != fb::DType::f32)
      return headerError(g, whoGemm, ": the bias is neither f32 nor of the result's dtype");
    DLC_RETURN_IF_ERROR(checkArg(g->bias(), "bias", span(1, g->n(), 0, g->bias_dtype()),
                                 false));
  }
  return rt::okStatus();
}

Status Checker::checkKernels() const {
  const auto *kernels = facts_->root->kernels();
  const auto *sections = facts_->root->sections();
  for (uint32_t i = 0; i < sizeOf(kernels); ++i) {
    const fb::Kernel *k = kernels->Get(i);
    std::string who = strCat("kernels[", i, "] ('", k->name()->str(), "')");
    if (k->name()->size() == 0)
      return headerError(k, who, ": empty name");
    if (k->entry()->size() == 0)
      return headerError(k, who, ": empty entry symbol");
    if (k->target() != fb::Target::cpu && k->target() != fb::Target::cuda)
      return headerError(k, who, ": unknown target ", static_cast<int>(k->target()));
    const bool cpu = k->target() == fb::Target::cpu;
    if (sizeOf(k->binaries()) == 0 && (!k->source() || k->source()->size() == 0))
      return headerError(k, who, ": neither a binary nor source");
    for (uint32_t b = 0; b < sizeOf(k->binaries()); ++b) {
      const fb::KernelBinary *bin = k->binaries()->Get(b);
      std::string whoBin = strCat(who, ".binaries[", b, "]");
      // A cuda kernel's shared_object is its source built for cuda-emu.
      bool formatFits = cpu ? bin->format() == fb::BinaryFormat::shared_object
                            : (bin->format() == fb::BinaryFormat::ptx ||
                               bin->format() == fb::BinaryFormat::cubin ||
                               bin->format() == fb::BinaryFormat::shared_object);
      if (!formatFits)
        return headerError(bin, whoBin, ": format ", static_cast<int>(bin->format()),
                           " is not one for target ", fb::EnumNameTarget(k->target()));
      if (bin->arch()->size() == 0)
        return headerError(bin, whoBin, ": empty architecture");
      if (bin->section() >= sizeOf(sections))
        return headerError(bin, whoBin, ": section index ", bin->section(),
                           " is out of range (", sizeOf(sections), " sections)");
      if (sections->Get(bin->section())->kind() != fb::SectionKind::binary)
        return headerError(bin, whoBin, ": section ", bin->section(), " is not a binary section");
    }
    if (sizeOf(k->args()) > kMaxKernelArgs)
      return headerError(k, who, ": ", sizeOf(k->args()), " arguments, over the limit of ",
                         kMaxKernelArgs);
    for (uint32_t a = 0; a < sizeOf(k->args()); ++a) {
      const fb::KernelArg *arg = k->args()->Get(a);
      if (arg->access() > fb::Access::read_write)
        return headerError(arg, who, ".args[", a, "]: unknown access ",
                           static_cast<int>(arg->access()));
      if (arg->bytes() > kMaxTensorBytes)
        return headerError(arg, who, ".args[", a, "]: ", arg->bytes(),
                           " bytes is over the 2^48-byte limit");
    }
    if (k->library_gemm())
      DLC_RETURN_IF_ERROR(checkLibraryGemm(*k, who));
    if (cpu) {
      if (const fb::CpuLaunch *launch = k->cpu()) {
        if (launch->parallel_extent() < 1)
          return headerError(launch, who, ": parallel extent ", launch->parallel_extent(),
                             " is not positive");
        if (launch->grain() < 1)
          return headerError(launch, who, ": grain ", launch->grain(), " is not positive");
        DLC_RETURN_IF_ERROR(checkDynamicIndex(launch, who, launch->dynamic_dim()));
        if (launch->dynamic_dim() >= 0) {
          // At N = n the executor runs [0, parallel_extent / max * n).
          const DynamicDimInfo &dim = facts_->dynamicDims[launch->dynamic_dim()];
          if (launch->parallel_extent() % dim.max != 0)
            return headerError(launch, who, ": parallel extent ", launch->parallel_extent(),
                               " grows with dynamic dimension '", dim.name,
                               "', but is not a multiple of its max ", dim.max);
        }
      }
    } else {
      const fb::CudaLaunch *launch = k->cuda();
      if (!launch || !launch->grid() || !launch->block())
        return headerError(k, who, ": a CUDA kernel without grid and block dimensions");
      const fb::Dim3 *g = launch->grid(), *bl = launch->block();
      if (!g->x() || !g->y() || !g->z() || !bl->x() || !bl->y() || !bl->z())
        return headerError(launch, who, ": a grid or block dimension is 0");
      if (g->x() > 2147483647u || g->y() > 65535 || g->z() > 65535 ||
          uint64_t(bl->x()) * bl->y() * bl->z() > 1024 || bl->z() > 64)
        return headerError(launch, who, ": grid or block over CUDA's limits");
    }
  }
  return rt::okStatus();
}

Status Checker::checkChecks() const {
  const fb::Module *m = facts_->root;
  for (uint32_t i = 0; i < sizeOf(m->checks()); ++i) {
    const fb::Check *c = m->checks()->Get(i);
    std::string who = strCat("checks[", i, "]");
    if (c->kind() == fb::CheckKind::invalid || c->kind() > fb::CheckKind::scratch_memory)
      return headerError(c, who, ": unknown kind ", static_cast<int>(c->kind()));
    if (c->kernel() >= sizeOf(m->kernels()))
      return headerError(c, who, ": kernel index ", c->kernel(), " is out of range (",
                         sizeOf(m->kernels()), " kernels)");
    if (c->bound() < 0 || c->axis() < 0 || c->axis() >= kMaxRank)
      return headerError(c, who, ": bound ", c->bound(), " or axis ", c->axis(),
                         " is out of range");
  }
  return rt::okStatus();
}

Status Checker::checkMeshAndCollectives(uint64_t *rankCount) const {
  const fb::Module *m = facts_->root;
  uint64_t ranks = 1;
  std::set<std::string> axes;
  for (uint32_t i = 0; i < sizeOf(m->mesh()); ++i) {
    const fb::MeshAxis *axis = m->mesh()->Get(i);
    std::string who = strCat("mesh[", i, "] ('", axis->name()->str(), "')");
    if (axis->name()->size() == 0 || !axes.insert(axis->name()->str()).second)
      return headerError(axis, who, ": empty or repeated axis name");
    if (axis->size() == 0 || mulOverflows(ranks, axis->size(), &ranks) || ranks > (1u << 20))
      return headerError(axis, who, ": size ", axis->size(),
                         " makes the mesh empty or over 2^20 devices");
  }
  *rankCount = ranks;

  std::vector<CollectiveDesc> descs;
  for (uint32_t i = 0; i < sizeOf(m->collectives()); ++i) {
    const fb::CollectiveInfo *c = m->collectives()->Get(i);
    std::string who = strCat("collectives[", i, "]");
    if (c->op() == fb::CollectiveOp::invalid || c->op() > fb::CollectiveOp::recv)
      return headerError(c, who, ": unknown op ", static_cast<int>(c->op()));
    if (c->reduce() > fb::ReduceOp::avg)
      return headerError(c, who, ": unknown reduction ", static_cast<int>(c->reduce()));
    std::optional<DType> dtype = dtypeFromWire(c->dtype());
    if (!dtype)
      return headerError(c, who, ": unknown dtype ", static_cast<int>(c->dtype()));
    if (c->count() < 0)
      return headerError(c, who, ": negative count ", c->count());
    if (c->peer() < -1 || (c->peer() >= 0 && static_cast<uint64_t>(c->peer()) >= ranks))
      return headerError(c, who, ": peer ", c->peer(), " is not a rank of the mesh");
    if (c->outer() < 1 || c->count() % c->outer() != 0 ||
        (c->outer() != 1 && c->op() != fb::CollectiveOp::all_gather &&
         c->op() != fb::CollectiveOp::reduce_scatter))
      return headerError(c, who, ": outer ", c->outer(), " does not divide count ", c->count(),
                         " or is not that of an all_gather or reduce_scatter");
    CollectiveDesc d;
    d.op = c->op();
    d.reduce = c->reduce();
    d.dtype = *dtype;
    d.count = c->count();
    d.peer = c->peer();
    d.outer = c->outer();
    for (uint32_t a = 0; a < sizeOf(c->axes()); ++a) {
      std::string axis = c->axes()->Get(a)->str();
      if (!axes.count(axis))
        return headerError(c, who, ": axis '", axis, "' is not an axis of the mesh");
      d.axes.push_back(axis);
    }
    descs.push_back(std::move(d));
  }
  uint64_t hash = collectivesHash(descs);
  if (m->collectives_hash() != hash && !(descs.empty() && m->collectives_hash() == 0))
    return headerError(m, "collectives_hash ", m->collectives_hash(),
                       " does not match the list of collectives (hash ", hash, ")");
  return rt::okStatus();
}

Status Checker::checkRef(const fb::BufferRef *ref, const fb::Plan *plan, const std::string &who,
                         uint64_t *limitOut) const {
  uint64_t limit = 0;
  const std::vector<TensorInfo> *tensors = nullptr;
  switch (ref->space()) {
  case fb::BufferSpace::arena:
    if (ref->index() != 0)
      return headerError(ref, who, ": arena index ", ref->index(), " is not 0");
    limit = plan->arena_size();
    break;
  case fb::BufferSpace::input:
    tensors = &facts_->inputs;
    break;
  case fb::BufferSpace::output:
    tensors = &facts_->outputs;
    break;
  case fb::BufferSpace::weight:
    tensors = &facts_->weights;
    break;
  case fb::BufferSpace::state:
    if (ref->index() >= facts_->state.size())
      return headerError(ref, who, ": state index ", ref->index(), " is out of range (",
                         facts_->state.size(), " state tensors)");
    limit = facts_->state[ref->index()].bytes;
    break;
  case fb::BufferSpace::status:
    if (ref->index() != 0 || ref->offset() != 0 || ref->bytes() != kStatusBytes)
      return headerError(ref, who, ": the status words are index 0, offset 0, ",
                         kStatusBytes, " bytes (", ref->index(), ", ", ref->offset(), ", ",
                         ref->bytes(), " given)");
    limit = kStatusBytes;
    break;
  default:
    return headerError(ref, who, ": unknown buffer space ", static_cast<int>(ref->space()));
  }
  if (tensors) {
    if (ref->index() >= tensors->size())
      return headerError(ref, who, ": ", spaceName(ref->space()), " index ", ref->index(),
                         " is out of range (", tensors->size(), " ", spaceName(ref->space()),
                         "s)");
    limit = (*tensors)[ref->index()].bytes;
  }
  if (!rangeInside(limit, ref->offset(), ref->bytes()))
    return headerError(ref, who, ": offset ", ref->offset(), " + ", ref->bytes(),
                       " bytes goes past the end of ", spaceName(ref->space()), " ",
                       ref->index(), " (", limit, " bytes)");
  if (limitOut)
    *limitOut = limit;
  return rt::okStatus();
}

Status Checker::checkPlan(uint32_t rank, const fb::Plan *plan) const {
  std::string whoPlan = strCat("plans[", rank, "]");
  if (plan->arena_size() > kMaxTensorBytes)
    return headerError(plan, whoPlan, ": arena size ", plan->arena_size(),
                       " is over the 2^48-byte limit");
  uint32_t alignment = plan->arena_alignment();
  if (!rt::isPowerOfTwo(alignment) || alignment < kSectionAlignment ||
      alignment > kMaxArenaAlignment)
    return headerError(plan, whoPlan, ": arena alignment ", alignment,
                       " is not a power of two in [64, 2^20]");
  const auto *types = plan->commands_type();
  const auto *commands = plan->commands();
  const auto *kernels = facts_->root->kernels();
  for (uint32_t c = 0; c < sizeOf(commands); ++c) {
    std::string who = strCat(whoPlan, ".commands[", c, "]");
    // The union's table is only verified for known types: until the type is
    // known, point at the offset slot in the vector, never through it.
    const void *slot = commands->Data() + sizeof(flatbuffers::uoffset_t) * c;
    switch (types->Get(c)) {
    case fb::Command::Launch: {
      const auto *launch = commands->GetAs<fb::Launch>(c);
      const void *where = launch;
      if (launch->kernel() >= sizeOf(kernels))
        return headerError(where, who, ": kernel index ", launch->kernel(),
                           " is out of range (", sizeOf(kernels), " kernels)");
      const fb::Kernel *k = kernels->Get(launch->kernel());
      if (!elementsAligned(launch->args()))
        return headerError(where, who, ": the BufferRef structs of args are not 8-byte aligned");
      if (sizeOf(launch->args()) != sizeOf(k->args()))
        return headerError(where, who, ": ", sizeOf(launch->args()),
                           " buffers for kernel '", k->name()->str(), "', which takes ",
                           sizeOf(k->args()));
      for (uint32_t a = 0; a < sizeOf(launch->args()); ++a) {
        const fb::BufferRef *ref = launch->args()->Get(a);
        const fb::KernelArg *arg = k->args()->Get(a);
        std::string whoArg = strCat(who, ".args[", a, "]");
        DLC_RETURN_IF_ERROR(checkRef(ref, plan, whoArg, nullptr));
        if (ref->bytes() < arg->bytes())
          return headerError(ref, whoArg, ": ", ref->bytes(), " bytes, but kernel '",
                             k->name()->str(), "' accesses ", arg->bytes());
        if (arg->access() != fb::Access::read &&
            (ref->space() == fb::BufferSpace::input || ref->space() == fb::BufferSpace::weight))
          return headerError(ref, whoArg, ": kernel '", k->name()->str(), "' writes to ",
                             spaceName(ref->space()), " ", ref->index(), ", which is read-only");
      }
      break;
    }
    case fb::Command::Copy: {
      const auto *copy = commands->GetAs<fb::Copy>(c);
      const void *where = copy;
      if (!copy->src() || !copy->dst())
        return headerError(where, who, ": a copy without src or dst");
      DLC_RETURN_IF_ERROR(checkRef(copy->src(), plan, who + ".src", nullptr));
      DLC_RETURN_IF_ERROR(checkRef(copy->dst(), plan, who + ".dst", nullptr));
      if (copy->src()->space() == fb::BufferSpace::status ||
          copy->dst()->space() == fb::BufferSpace::status)
        return headerError(where, who, ": a copy of the status words (only kernels take them)");
      if (copy->bytes() > copy->src()->bytes() || copy->bytes() > copy->dst()->bytes())
        return headerError(where, who, ": copies ", copy->bytes(),
                           " bytes, more than its src or dst holds");
      if (copy->dst()->space() == fb::BufferSpace::input ||
          copy->dst()->space() == fb::BufferSpace::weight)
        return headerError(copy->dst(), who, ".dst: ", spaceName(copy->dst()->space()),
                           " is read-only");
      const fb::BufferRef *s = copy->src(), *d = copy->dst();
      if (s->space() == d->space() && s->index() == d->index() && copy->bytes() > 0 &&
          s->offset() < d->offset() + copy->bytes() && d->offset() < s->offset() + copy->bytes())
        return headerError(where, who, ": source and destination overlap");
      break;
    }
    case fb::Command::LibraryCall: {
      const auto *call = commands->GetAs<fb::LibraryCall>(c);
      const void *where = call;
      if (call->name()->size() == 0)
        return headerError(where, who, ": a library call without a name");
      if (!elementsAligned(call->args()))
        return headerError(where, who, ": the BufferRef structs of args are not 8-byte aligned");
      for (uint32_t a = 0; a < sizeOf(call->args()); ++a)
        DLC_RETURN_IF_ERROR(checkRef(call->args()->Get(a), plan, strCat(who, ".args[", a, "]"),
                                     nullptr));
      break;
    }
    case fb::Command::Collective: {
      const auto *coll = commands->GetAs<fb::Collective>(c);
      const void *where = coll;
      if (coll->sequence() >= sizeOf(facts_->root->collectives()))
        return headerError(where, who, ": collective ", coll->sequence(),
                           " is out of range (", sizeOf(facts_->root->collectives()),
                           " collectives)");
      if (coll->send())
        DLC_RETURN_IF_ERROR(checkRef(coll->send(), plan, who + ".send", nullptr));
      if (coll->recv())
        DLC_RETURN_IF_ERROR(checkRef(coll->recv(), plan, who + ".recv", nullptr));
      if ((coll->send() && coll->send()->space() == fb::BufferSpace::status) ||
          (coll->recv() && coll->recv()->space() == fb::BufferSpace::status))
        return headerError(where, who, ": a collective on the status words");
      break;
    }
    default:
      return headerError(slot, who,
                         ": unknown command type ", static_cast<int>(types->Get(c)));
    }
  }
  return rt::okStatus();
}

Status Checker::checkSemantics() {
  const fb::Module *m = facts_->root;
  if (m->format_version() != facts_->prelude.major)
    return headerError(m, "format_version ", m->format_version(),
                       " differs from the prelude's ", facts_->prelude.major);
  DLC_RETURN_IF_ERROR(checkDynamicDims());
  DLC_RETURN_IF_ERROR(checkTensors(m->inputs(), "inputs", &facts_->inputs));
  DLC_RETURN_IF_ERROR(checkTensors(m->outputs(), "outputs", &facts_->outputs));
  DLC_RETURN_IF_ERROR(checkWeights());
  DLC_RETURN_IF_ERROR(checkState());
  DLC_RETURN_IF_ERROR(checkKernels());
  DLC_RETURN_IF_ERROR(checkChecks());
  uint64_t ranks = 1;
  DLC_RETURN_IF_ERROR(checkMeshAndCollectives(&ranks));
  if (sizeOf(m->plans()) != ranks)
    return headerError(m, sizeOf(m->plans()), " plans for a mesh of ", ranks,
                       ranks == 1 ? " device" : " devices");
  // A run's N scales the one plan; ranks would each need theirs scaled.
  if (!facts_->dynamicDims.empty() && sizeOf(m->plans()) != 1)
    return headerError(m, sizeOf(m->plans()), " plans in a module with dynamic dimension '",
                       facts_->dynamicDims[0].name, "' (such a module has exactly one)");
  for (uint32_t r = 0; r < sizeOf(m->plans()); ++r)
    DLC_RETURN_IF_ERROR(checkPlan(r, m->plans()->Get(r)));
  return rt::okStatus();
}

/// Copies bytes into 64-byte-aligned memory.
Status copyAligned(ByteSpan bytes, rt::AlignedBuffer *out) {
  DLC_RETURN_IF_ERROR(rt::AlignedBuffer::allocate(bytes.size(), kSectionAlignment, out));
  if (!bytes.empty())
    std::memcpy(out->data(), bytes.data(), bytes.size());
  return rt::okStatus();
}

} // namespace

//===----------------------------------------------------------------------===//
// LoadedModule
//===----------------------------------------------------------------------===//

LoadedModule::~LoadedModule() {
  if (mapping_)
    munmap(mapping_, mappingSize_);
}

Status LoadedModule::init() {
  Facts facts;
  DLC_RETURN_IF_ERROR(Checker(file_, label_).run(&facts));
  minor_ = facts.prelude.minor;
  root_ = facts.root;
  inputs_ = std::move(facts.inputs);
  outputs_ = std::move(facts.outputs);
  weights_ = std::move(facts.weights);
  state_ = std::move(facts.state);
  dynamicDims_ = std::move(facts.dynamicDims);
  if (facts.weightSection >= 0)
    weightSection_ = sectionData(static_cast<uint32_t>(facts.weightSection));
  drawnWeights_.resize(weights_.size());
  for (uint32_t i = 0; i < weights_.size(); ++i) {
    const fb::Draw *draw = root_->weights()->Get(i)->draw();
    if (!draw)
      continue;
    const TensorInfo &w = weights_[i];
    HostTensor value;
    DLC_RETURN_IF_ERROR(drawTensor(*drawFromWire(*draw), w.dtype, w.shape, &value));
    // Copied once into memory aligned as the file's weights are.
    DLC_RETURN_IF_ERROR(rt::AlignedBuffer::allocate(std::max<uint64_t>(w.bytes, 1),
                                                    kSectionAlignment, &drawnWeights_[i]));
    std::memcpy(drawnWeights_[i].data(), value.data(), w.bytes);
  }
  if (rt::logEnabled())
    rt::log(rt::LogLevel::kInfo,
            strCat("loaded module '", root_->name() ? root_->name()->str() : "", "' from ",
                   label_, ": ", file_.size(), " bytes, ", inputs_.size(), " inputs, ",
                   outputs_.size(), " outputs, ", weights_.size(), " weights"));
  return rt::okStatus();
}

ByteSpan LoadedModule::weightData(uint32_t i) const {
  const fb::Weight *w = root_->weights()->Get(i);
  if (w->draw())
    return ByteSpan(drawnWeights_[i].data(), w->size());
  return weightSection_.subspan(w->offset(), w->size());
}

ByteSpan LoadedModule::sectionData(uint32_t i) const {
  const fb::Section *s = root_->sections()->Get(i);
  return file_.subspan(s->offset(), s->size());
}

Status readModuleFile(const std::string &path, std::shared_ptr<const LoadedModule> *out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return rt::notFound("cannot open '", path, "': ", std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return rt::invalidArgument("'", path, "' is not a regular file");
  }
  std::shared_ptr<LoadedModule> module(new LoadedModule());
  module->label_ = path;
  if (st.st_size > 0) {
    void *p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      close(fd);
      return rt::resourceExhausted("cannot map '", path, "': ", std::strerror(err));
    }
    module->mapping_ = p;
    module->mappingSize_ = static_cast<size_t>(st.st_size);
    module->file_ = ByteSpan(static_cast<const uint8_t *>(p), module->mappingSize_);
  }
  close(fd);
  DLC_RETURN_IF_ERROR(module->init());
  *out = std::move(module);
  return rt::okStatus();
}

Status readModuleMemory(ByteSpan bytes, std::shared_ptr<const LoadedModule> *out,
                        const std::string &label) {
  std::shared_ptr<LoadedModule> module(new LoadedModule());
  module->label_ = label;
  DLC_RETURN_IF_ERROR(copyAligned(bytes, &module->copy_)
                          .prepend(rt::strCat(label, ": cannot copy the module (its weights "
                                              "included, ", bytes.size(), " bytes)")));
  module->file_ = ByteSpan(module->copy_.data(), bytes.size());
  DLC_RETURN_IF_ERROR(module->init());
  *out = std::move(module);
  return rt::okStatus();
}

Status verifyModuleBytes(ByteSpan bytes, const std::string &label) {
  rt::AlignedBuffer copy;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 8 != 0) {
    DLC_RETURN_IF_ERROR(copyAligned(bytes, &copy));
    bytes = ByteSpan(copy.data(), bytes.size());
  }
  Facts facts;
  return Checker(bytes, label).run(&facts);
}

} // namespace dlc::format
