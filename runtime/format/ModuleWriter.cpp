//===- ModuleWriter.cpp - Build a .dlcm file ------------------------------===//
//
// 1. Concatenate the section contents (weights 64-aligned, then binaries).
// 2. Build the FlatBuffers header with every field present (ForceDefaults),
//    so that patching a section's offset and CRC in place cannot change its
//    size; then lay the sections out after it and patch them in.
// 3. Checksum the header and write the prelude; optionally run the reader.
//
//===----------------------------------------------------------------------===//

#include "runtime/format/ModuleWriter.h"

#include "runtime/base/Checksum.h"
#include "runtime/base/Memory.h"
#include "runtime/format/ModuleReader.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace dlc::format {

using rt::alignUp;
using rt::strCat;

uint32_t ModuleWriter::addInput(TensorDesc tensor) {
  inputs_.push_back(std::move(tensor));
  return static_cast<uint32_t>(inputs_.size() - 1);
}

uint32_t ModuleWriter::addOutput(TensorDesc tensor) {
  outputs_.push_back(std::move(tensor));
  return static_cast<uint32_t>(outputs_.size() - 1);
}

uint32_t ModuleWriter::addCheck(CheckDesc check) {
  checks_.push_back(std::move(check));
  return static_cast<uint32_t>(checks_.size() - 1);
}

uint32_t ModuleWriter::addDynamicDim(DynamicDimDesc dim) {
  dynamicDims_.push_back(std::move(dim));
  return static_cast<uint32_t>(dynamicDims_.size() - 1);
}

uint32_t ModuleWriter::addState(StateDesc state) {
  state_.push_back(std::move(state));
  return static_cast<uint32_t>(state_.size() - 1);
}

uint32_t ModuleWriter::addWeight(TensorDesc tensor, std::vector<uint8_t> bytes) {
  weights_.push_back({std::move(tensor), std::move(bytes)});
  return static_cast<uint32_t>(weights_.size() - 1);
}

uint32_t ModuleWriter::addDrawnWeight(TensorDesc tensor, Draw draw) {
  weights_.push_back({std::move(tensor), {}, draw});
  return static_cast<uint32_t>(weights_.size() - 1);
}

uint32_t ModuleWriter::addBinary(std::string name, fb::BinaryFormat format, std::string arch,
                                 std::vector<uint8_t> bytes) {
  binaries_.push_back({std::move(name), format, std::move(arch), std::move(bytes)});
  return static_cast<uint32_t>(binaries_.size() - 1);
}

uint32_t ModuleWriter::addKernel(KernelDesc kernel) {
  kernels_.push_back(std::move(kernel));
  return static_cast<uint32_t>(kernels_.size() - 1);
}

uint32_t ModuleWriter::addPlan(PlanDesc plan) {
  plans_.push_back(std::move(plan));
  return static_cast<uint32_t>(plans_.size() - 1);
}

uint32_t ModuleWriter::addCollective(CollectiveDesc collective) {
  collectives_.push_back(std::move(collective));
  return static_cast<uint32_t>(collectives_.size() - 1);
}

namespace {

using Builder = flatbuffers::FlatBufferBuilder;

/// Format 1.5: a drawn tensor's initialiser, or nothing.
flatbuffers::Offset<fb::Draw> buildDraw(Builder &b, const std::optional<Draw> &draw) {
  if (!draw)
    return {};
  const InitOptions &o = draw->options;
  return fb::CreateDraw(b, wireDrawKind(draw->kind), o.mean, o.std, o.low, o.high, o.seed);
}

flatbuffers::Offset<fb::TensorSpec> buildTensor(Builder &b, const TensorDesc &t) {
  return fb::CreateTensorSpecDirect(b, t.name.c_str(), wireDType(t.dtype), &t.shape,
                                    t.dynamicDim);
}

flatbuffers::Offset<flatbuffers::Vector<const fb::BufferRef *>>
buildRefs(Builder &b, const std::vector<BufferRef> &refs) {
  return b.CreateVectorOfStructs(refs.data(), refs.size());
}

struct CommandBuilder {
  Builder &b;
  flatbuffers::Offset<void> operator()(const LaunchDesc &c) const {
    return fb::CreateLaunch(b, c.kernel, buildRefs(b, c.args)).Union();
  }
  flatbuffers::Offset<void> operator()(const CopyDesc &c) const {
    return fb::CreateCopy(b, &c.src, &c.dst, c.bytes).Union();
  }
  flatbuffers::Offset<void> operator()(const LibraryCallDesc &c) const {
    auto name = b.CreateString(c.name);
    return fb::CreateLibraryCall(b, name, buildRefs(b, c.args)).Union();
  }
  flatbuffers::Offset<void> operator()(const CollectiveCommandDesc &c) const {
    return fb::CreateCollective(b, c.sequence, &c.send, &c.recv).Union();
  }
};

fb::Command commandType(const CommandDesc &c) {
  switch (c.index()) {
  case 0:
    return fb::Command::Launch;
  case 1:
    return fb::Command::Copy;
  case 2:
    return fb::Command::LibraryCall;
  default:
    return fb::Command::Collective;
  }
}

/// Returns freed heap memory to the system (glibc keeps it otherwise).
void returnFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

} // namespace

Status ModuleWriter::serialize(std::vector<uint8_t> *out, bool verify) const {
  // Without releasing, layOut reads the writer and changes nothing.
  return const_cast<ModuleWriter *>(this)->layOut(out, verify, /*releaseBytes=*/false);
}

Status ModuleWriter::release(std::vector<uint8_t> *out, bool verify) {
  return layOut(out, verify, /*releaseBytes=*/true);
}

Status ModuleWriter::layOut(std::vector<uint8_t> *out, bool verify, bool releaseBytes) {
  // 1. Section contents.
  // A section is pieces at offsets within it: the weights section holds
  // every weight (64-aligned), copied once, into the file.
  struct Piece {
    uint64_t offset;
    std::vector<uint8_t> *bytes;
  };
  struct SectionContent {
    std::string name;
    fb::SectionKind kind;
    uint64_t size;
    std::vector<Piece> pieces;
  };
  std::vector<uint64_t> weightOffsets;
  SectionContent weightSection{"weights", fb::SectionKind::weights, 0, {}};
  bool storesWeights = false;
  for (Weight &w : weights_) {
    if (w.draw) { // drawn by the reader: nothing in the section
      weightOffsets.push_back(kDrawnWeightOffset);
      continue;
    }
    uint64_t offset = alignUp(weightSection.size, kSectionAlignment);
    weightSection.pieces.push_back({offset, &w.bytes});
    weightSection.size = offset + w.bytes.size();
    weightOffsets.push_back(offset);
    storesWeights = true;
  }
  std::vector<SectionContent> sections;
  if (storesWeights)
    sections.push_back(std::move(weightSection));
  const uint32_t firstBinarySection = static_cast<uint32_t>(sections.size());
  for (Binary &bin : binaries_)
    sections.push_back({bin.name, fb::SectionKind::binary, bin.bytes.size(), {{0, &bin.bytes}}});

  // 2. The header, every field present.
  Builder b(16384);
  b.ForceDefaults(true);
  std::vector<flatbuffers::Offset<fb::TensorSpec>> inputs, outputs;
  for (const TensorDesc &t : inputs_)
    inputs.push_back(buildTensor(b, t));
  for (const TensorDesc &t : outputs_)
    outputs.push_back(buildTensor(b, t));

  std::vector<flatbuffers::Offset<fb::Weight>> weights;
  for (size_t i = 0; i < weights_.size(); ++i) {
    const Weight &w = weights_[i];
    uint64_t size = w.bytes.size();
    if (w.draw) {
      size = elementSize(w.tensor.dtype);
      for (int64_t d : w.tensor.shape)
        size *= static_cast<uint64_t>(d);
    }
    weights.push_back(fb::CreateWeightDirect(b, w.tensor.name.c_str(),
                                             wireDType(w.tensor.dtype), &w.tensor.shape,
                                             weightOffsets[i], size, buildDraw(b, w.draw)));
  }

  std::vector<flatbuffers::Offset<fb::StateSpec>> state;
  for (const StateDesc &s : state_) {
    fb::StateInit init = s.draw                 ? fb::StateInit::drawn
                         : s.initialWeight >= 0 ? fb::StateInit::weight
                                                : fb::StateInit::zeros;
    state.push_back(fb::CreateStateSpecDirect(
        b, s.tensor.name.c_str(), wireDType(s.tensor.dtype), &s.tensor.shape, init,
        init == fb::StateInit::weight ? static_cast<uint32_t>(s.initialWeight) : 0,
        buildDraw(b, s.draw)));
  }

  std::vector<flatbuffers::Offset<fb::Kernel>> kernels;
  for (const KernelDesc &k : kernels_) {
    std::vector<flatbuffers::Offset<fb::KernelBinary>> binaries;
    for (uint32_t id : k.binaries) {
      // An id past the end is written as a section index past the end: the
      // reader rejects it (tests rely on writing such modules).
      const Binary *bin = id < binaries_.size() ? &binaries_[id] : nullptr;
      binaries.push_back(fb::CreateKernelBinaryDirect(
          b, bin ? bin->format : fb::BinaryFormat::shared_object, bin ? bin->arch.c_str() : "",
          firstBinarySection + id));
    }
    std::vector<flatbuffers::Offset<fb::KernelArg>> args;
    for (const KernelArgDesc &a : k.args)
      args.push_back(fb::CreateKernelArgDirect(b, a.name.c_str(), a.access, a.bytes));
    auto cpu = fb::CreateCpuLaunch(b, k.parallelExtent, k.grain, k.dynamicDim);
    fb::Dim3 grid(k.grid[0], k.grid[1], k.grid[2]), block(k.block[0], k.block[1], k.block[2]);
    auto cuda = fb::CreateCudaLaunch(b, &grid, &block, k.dynamicSharedMemory);
    flatbuffers::Offset<fb::LibraryGemm> gemm;
    if (const std::optional<rt::LibraryGemmCall> &g = k.libraryGemm)
      gemm = fb::CreateLibraryGemm(
          b, g->a, g->b, g->d, g->bias, g->c, wireDType(g->operandDtype),
          wireDType(g->resultDtype), wireDType(g->biasDtype), g->transposeA, g->transposeB,
          g->tf32, g->batch, g->m, g->n, g->k, g->strideA, g->strideB,
          static_cast<fb::GemmActivation>(g->activation));
    kernels.push_back(fb::CreateKernelDirect(b, k.name.c_str(), k.target, k.source.c_str(),
                                             &binaries, k.entry.c_str(), &args, cpu, cuda,
                                             gemm));
  }

  std::vector<flatbuffers::Offset<fb::Plan>> plans;
  for (const PlanDesc &p : plans_) {
    std::vector<fb::Command> types;
    std::vector<flatbuffers::Offset<void>> commands;
    for (const CommandDesc &c : p.commands) {
      types.push_back(commandType(c));
      commands.push_back(std::visit(CommandBuilder{b}, c));
    }
    plans.push_back(fb::CreatePlanDirect(b, p.arenaSize, p.arenaAlignment, &types, &commands));
  }

  std::vector<flatbuffers::Offset<fb::MeshAxis>> mesh;
  for (const MeshAxisDesc &axis : mesh_)
    mesh.push_back(fb::CreateMeshAxisDirect(b, axis.name.c_str(), axis.size));
  std::vector<flatbuffers::Offset<fb::CollectiveInfo>> collectives;
  for (const CollectiveDesc &c : collectives_) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> axes;
    for (const std::string &axis : c.axes)
      axes.push_back(b.CreateString(axis));
    collectives.push_back(
        fb::CreateCollectiveInfoDirect(b, c.op, c.reduce, wireDType(c.dtype), c.count, &axes,
                                       c.peer, c.outer));
  }

  std::vector<flatbuffers::Offset<fb::Section>> sectionTable;
  for (const SectionContent &s : sections)
    sectionTable.push_back(fb::CreateSectionDirect(b, s.name.c_str(), s.kind, 0, s.size, 0));

  std::vector<flatbuffers::Offset<fb::Check>> checks;
  for (const CheckDesc &c : checks_)
    checks.push_back(fb::CreateCheckDirect(b, c.kind, c.kernel, c.op.c_str(),
                                           c.location.c_str(), c.bound, c.axis));

  std::vector<flatbuffers::Offset<fb::DynamicDim>> dynamicDims;
  for (const DynamicDimDesc &d : dynamicDims_)
    dynamicDims.push_back(fb::CreateDynamicDimDirect(b, d.name.c_str(), d.min, d.max));

  const uint16_t major = overrides_.setFormatMajor ? overrides_.formatMajor : kFormatMajor;
  auto root = fb::CreateModuleDirect(b, major, name_.c_str(), producer_.c_str(), &inputs, &outputs,
                                     &weights, &kernels, &plans, &mesh, &collectives,
                                     collectivesHash(collectives_), &sectionTable, &state,
                                     &checks, dynamicDims_.empty() ? nullptr : &dynamicDims);
  b.Finish(root, fb::ModuleIdentifier());

  // Layout: prelude, header, then each section 64-aligned.
  const uint64_t headerSize = b.GetSize();
  if (headerSize > kMaxHeaderSize)
    return rt::resourceExhausted("the module header is ", headerSize, " bytes, over 2 GiB");
  std::vector<uint64_t> offsets;
  uint64_t end = kHeaderOffset + headerSize;
  for (const SectionContent &s : sections) {
    uint64_t offset = alignUp(end, kSectionAlignment);
    offsets.push_back(offset);
    end = offset + s.size;
  }
  // The file is appended to in order, into reserved (untouched) memory, so
  // that pages are committed only as they are written, and a released
  // piece's memory returns as its bytes arrive: the file and every weight
  // never coexist.
  std::vector<uint8_t> file;
  file.reserve(end);
  uint64_t released = 0;
  file.resize(kHeaderOffset + headerSize, 0);
  std::memcpy(file.data() + kHeaderOffset, b.GetBufferPointer(), headerSize);
  for (size_t i = 0; i < sections.size(); ++i) {
    for (Piece &piece : sections[i].pieces) {
      file.resize(offsets[i] + piece.offset, 0);
      file.insert(file.end(), piece.bytes->begin(), piece.bytes->end());
      if (releaseBytes) {
        released += piece.bytes->size();
        std::vector<uint8_t>().swap(*piece.bytes);
        // Freed blocks below glibc's mmap threshold stay in the heap;
        // give them back every 64 MiB so the process's footprint falls.
        if (released >= (uint64_t(64) << 20)) {
          returnFreedMemory();
          released = 0;
        }
      }
    }
    file.resize(offsets[i] + sections[i].size, 0);
  }
  fb::Module *mutableRoot = fb::GetMutableModule(file.data() + kHeaderOffset);
  for (size_t i = 0; i < sections.size(); ++i) {
    fb::Section *s = mutableRoot->mutable_sections()->GetMutableObject(static_cast<uint32_t>(i));
    if (!s->mutate_offset(offsets[i]) ||
        !s->mutate_crc32(rt::crc32(rt::ByteSpan(file.data() + offsets[i], sections[i].size))))
      return rt::internalError("section fields missing from the header being written");
  }

  // 3. Prelude.
  Prelude p{};
  std::memcpy(p.magic, kMagic, 4);
  p.major = major;
  p.minor = kFormatMinor;
  p.headerOffset = kHeaderOffset;
  p.headerSize = headerSize;
  p.fileSize = file.size();
  p.headerCrc32 = rt::crc32(rt::ByteSpan(file.data() + kHeaderOffset, headerSize));
  encodePrelude(p, file.data());

  if (verify)
    DLC_RETURN_IF_ERROR(verifyModuleBytes(rt::ByteSpan(file.data(), file.size()),
                                          strCat("module '", name_, "' being written")));
  *out = std::move(file);
  return rt::okStatus();
}

Status ModuleWriter::writeFile(const std::string &path, bool verify) const {
  std::vector<uint8_t> bytes;
  DLC_RETURN_IF_ERROR(serialize(&bytes, verify));
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return rt::notFound("cannot write '", tmp, "': ", std::strerror(errno));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return rt::resourceExhausted("cannot write '", path, "': ", std::strerror(errno));
  }
  return rt::okStatus();
}

} // namespace dlc::format
