//===- FormatTest.cpp - runtime/format: writer → reader -------------------===//

#include "runtime/base/Checksum.h"
#include "runtime/format/ModuleReader.h"
#include "runtime/format/ModuleWriter.h"
#include "test/unit/runtime/TestModules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace dlc::format {
namespace {

using testing::Bytes;

Bytes mlpBytes() {
  ModuleWriter w;
  EXPECT_TRUE(testing::buildMlpModule(4, 8, 5, &w).ok());
  Bytes bytes;
  Status s = w.serialize(&bytes);
  EXPECT_TRUE(s.ok()) << s.toString();
  return bytes;
}

TEST(ModuleFormat, PreludeAndIdentifiersSitWhereTheDocumentSays) {
  Bytes b = mlpBytes();
  ASSERT_GE(b.size(), 128u);
  EXPECT_EQ(std::memcmp(b.data(), "DLCM", 4), 0);
  EXPECT_EQ(b[4], kFormatMajor);
  EXPECT_EQ(b[5], 0);
  EXPECT_EQ(std::memcmp(b.data() + 68, "DLCM", 4), 0); // FlatBuffers identifier
  Prelude p = decodePrelude(b.data());
  EXPECT_EQ(p.headerOffset, 64u);
  EXPECT_EQ(p.fileSize, b.size());
  const fb::Module *m = fb::GetModule(b.data() + 64);
  ASSERT_EQ(m->sections()->size(), 2u);
  EXPECT_EQ(m->sections()->Get(0)->name()->str(), "weights");
  EXPECT_EQ(m->sections()->Get(1)->name()->str(), "kernels.so");
  for (const fb::Section *s : *m->sections()) {
    EXPECT_EQ(s->offset() % 64, 0u);
    EXPECT_GE(s->offset(), 64 + p.headerSize);
  }
  // The kernel binary is the ELF the host compiler produced.
  EXPECT_EQ(std::memcmp(b.data() + m->sections()->Get(1)->offset(), "\x7f" "ELF", 4), 0);
}

TEST(ModuleFormat, EncodePreludeRoundTrips) {
  Prelude p{};
  std::memcpy(p.magic, kMagic, 4);
  p.major = 1;
  p.minor = 3;
  p.headerOffset = 64;
  p.headerSize = 1234;
  p.fileSize = 99999;
  p.headerCrc32 = 0xdeadbeef;
  uint8_t bytes[64];
  encodePrelude(p, bytes);
  Prelude q = decodePrelude(bytes);
  EXPECT_EQ(q.minor, 3);
  EXPECT_EQ(q.headerSize, 1234u);
  EXPECT_EQ(q.fileSize, 99999u);
  EXPECT_EQ(q.headerCrc32, 0xdeadbeefu);
}

TEST(ModuleFormat, EveryWireDTypeIsOneDTypeOfTheSameName) {
  for (auto wire : fb::EnumValuesDType()) {
    std::optional<DType> dtype = dtypeFromWire(wire);
    if (wire == fb::DType::invalid) {
      EXPECT_FALSE(dtype);
      continue;
    }
    ASSERT_TRUE(dtype) << fb::EnumNameDType(wire);
    EXPECT_STREQ(dtypeName(*dtype), fb::EnumNameDType(wire));
    EXPECT_EQ(wireDType(*dtype), wire);
  }
  EXPECT_FALSE(dtypeFromWire(static_cast<fb::DType>(static_cast<int>(fb::DType::MAX) + 1)));
}

TEST(ModuleReader, ReadsBackWhatTheWriterWrote) {
  Bytes b = mlpBytes();
  std::shared_ptr<const LoadedModule> m;
  Status s = readModuleMemory(rt::ByteSpan(b.data(), b.size()), &m, "mlp.dlcm");
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(m->label(), "mlp.dlcm");
  EXPECT_EQ(m->root().name()->str(), "mlp");
  EXPECT_EQ(m->root().format_version(), kFormatMajor);
  ASSERT_EQ(m->inputs().size(), 1u);
  EXPECT_EQ(m->inputs()[0].name, "x");
  EXPECT_EQ(m->inputs()[0].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(m->inputs()[0].bytes, 128u);
  ASSERT_EQ(m->outputs().size(), 2u);
  EXPECT_EQ(m->outputs()[1].name, "h");
  ASSERT_EQ(m->weights().size(), 2u);
  rt::ByteSpan w = m->weightData(0), bias = m->weightData(1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(bias.data()) % 64, 0u);
  ASSERT_EQ(w.size(), 8u * 5 * 4);
  for (int64_t i = 0; i < 40; ++i) {
    float v;
    std::memcpy(&v, w.data() + 4 * i, 4);
    EXPECT_EQ(v, testing::mlpWeight(i));
  }
  const fb::Kernel *k = m->root().kernels()->Get(0);
  EXPECT_EQ(k->entry()->str(), "dlc_test_matmul");
  EXPECT_EQ(k->target(), fb::Target::cpu);
  EXPECT_EQ(k->cpu()->parallel_extent(), 4);
  EXPECT_EQ(k->args()->size(), 3u);
  EXPECT_EQ(k->args()->Get(2)->access(), fb::Access::write);
  const fb::Plan *plan = m->root().plans()->Get(0);
  EXPECT_EQ(plan->arena_size(), 64u + 80u);
  ASSERT_EQ(plan->commands()->size(), 3u);
  EXPECT_EQ(plan->commands_type()->Get(2), fb::Command::Copy);
  const fb::Copy *copy = plan->commands()->GetAs<fb::Copy>(2);
  EXPECT_EQ(copy->src()->space(), fb::BufferSpace::arena);
  EXPECT_EQ(copy->src()->offset(), 64u);
  EXPECT_EQ(copy->dst()->space(), fb::BufferSpace::output);
  EXPECT_EQ(copy->dst()->index(), 1u);
}

TEST(ModuleReader, VerifiesUnalignedBytesByCopying) {
  Bytes b = mlpBytes();
  Bytes shifted(b.size() + 1);
  std::memcpy(shifted.data() + 1, b.data(), b.size());
  Status s = verifyModuleBytes(rt::ByteSpan(shifted.data() + 1, b.size()));
  EXPECT_TRUE(s.ok()) << s.toString();
}

TEST(ModuleReader, FileNotFound) {
  std::shared_ptr<const LoadedModule> m;
  Status s = readModuleFile("/nonexistent/x.dlcm", &m);
  EXPECT_EQ(s.code(), rt::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent/x.dlcm"), std::string::npos);
}

TEST(ModuleWriter, MeshAndCollectivesRoundTripWithTheirHash) {
  ModuleWriter w;
  ASSERT_TRUE(testing::buildAddModule(4, &w).ok());
  // A mesh of 2 devices needs 2 plans: add a second copy of the plan.
  w.setMesh({{"data", 2}});
  PlanDesc second;
  second.arenaSize = 0;
  w.addPlan(second);
  CollectiveDesc c;
  c.op = fb::CollectiveOp::all_reduce;
  c.count = 16;
  c.axes = {"data"};
  w.addCollective(c);
  Bytes b;
  Status s = w.serialize(&b);
  ASSERT_TRUE(s.ok()) << s.toString();
  const fb::Module *m = fb::GetModule(b.data() + 64);
  EXPECT_EQ(m->collectives_hash(), collectivesHash({c}));
  EXPECT_EQ(m->mesh()->Get(0)->size(), 2u);
}

TEST(ModuleWriter, CollectivesHashDependsOnEveryField) {
  CollectiveDesc a;
  a.axes = {"data"};
  uint64_t base = collectivesHash({a});
  EXPECT_EQ(collectivesHash({}), rt::kFnvOffset);
  CollectiveDesc b = a;
  b.count = 1;
  EXPECT_NE(collectivesHash({b}), base);
  b = a;
  b.axes = {"model"};
  EXPECT_NE(collectivesHash({b}), base);
  b = a;
  b.reduce = fb::ReduceOp::max;
  EXPECT_NE(collectivesHash({b}), base);
  b = a;
  b.outer = 4; // strided blocks: hashed where set
  EXPECT_NE(collectivesHash({b}), base);
  EXPECT_NE(collectivesHash({a, a}), base);
}

TEST(ModuleWriter, StridedBlocksMustDivideTheCount) {
  for (auto [op, outer, ok] : {std::make_tuple(fb::CollectiveOp::all_gather, 4, true),
                               std::make_tuple(fb::CollectiveOp::all_gather, 3, false),
                               std::make_tuple(fb::CollectiveOp::all_reduce, 4, false),
                               std::make_tuple(fb::CollectiveOp::reduce_scatter, 0, false)}) {
    ModuleWriter w;
    ASSERT_TRUE(testing::buildAddModule(4, &w).ok());
    w.setMesh({{"data", 2}});
    PlanDesc second;
    w.addPlan(second);
    CollectiveDesc c;
    c.op = op;
    c.count = 16;
    c.outer = outer;
    c.axes = {"data"};
    w.addCollective(c);
    Bytes b;
    Status s = w.serialize(&b);
    EXPECT_EQ(s.ok(), ok) << s.toString();
    if (!ok)
      EXPECT_NE(s.message().find("outer"), std::string::npos) << s.message();
  }
}

TEST(ModuleWriter, RefusesToWriteAModuleTheReaderWouldReject) {
  ModuleWriter w;
  ASSERT_TRUE(testing::buildAddModule(4, &w).ok());
  PlanDesc extra; // a second plan without a mesh
  w.addPlan(extra);
  Bytes b;
  Status s = w.serialize(&b);
  EXPECT_EQ(s.code(), rt::StatusCode::kInvalidModule);
  EXPECT_NE(s.message().find("2 plans for a mesh of 1 device"), std::string::npos) << s.message();
  EXPECT_TRUE(w.serialize(&b, /*verify=*/false).ok());
}

TEST(ModuleWriter, WriteFileThenReadFile) {
  ModuleWriter w;
  ASSERT_TRUE(testing::buildAddModule(4, &w).ok());
  std::string path = ::testing::TempDir() + "/add-roundtrip.dlcm";
  ASSERT_TRUE(w.writeFile(path).ok());
  std::shared_ptr<const LoadedModule> m;
  Status s = readModuleFile(path, &m);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(m->inputs().size(), 2u);
  std::remove(path.c_str());
}


//===----------------------------------------------------------------------===//
// Dynamic dimensions (format 1.3)
//===----------------------------------------------------------------------===//

Bytes dynamicBytes(const testing::DynamicTweaks &t = {}) {
  ModuleWriter w;
  EXPECT_TRUE(testing::buildDynamicModule(8, t, &w).ok());
  Bytes bytes;
  Status s = w.serialize(&bytes);
  EXPECT_TRUE(s.ok()) << s.toString();
  return bytes;
}

TEST(ModuleReader, ReadsDynamicDimensions) {
  Bytes b = dynamicBytes();
  std::shared_ptr<const LoadedModule> m;
  Status s = readModuleMemory(rt::ByteSpan(b.data(), b.size()), &m, "dynamic.dlcm");
  ASSERT_TRUE(s.ok()) << s.toString();
  ASSERT_EQ(m->dynamicDims().size(), 1u);
  EXPECT_EQ(m->dynamicDims()[0].name, "N");
  EXPECT_EQ(m->dynamicDims()[0].min, 1);
  EXPECT_EQ(m->dynamicDims()[0].max, 8);
  ASSERT_EQ(m->inputs().size(), 3u);
  EXPECT_EQ(m->inputs()[0].dynamicDim, 0);
  EXPECT_EQ(m->inputs()[1].dynamicDim, 0);
  EXPECT_EQ(m->inputs()[2].dynamicDim, -1);
  EXPECT_EQ(m->outputs()[0].dynamicDim, 0);
  // x f32[16, 3] at N = 3: 6 rows, 72 bytes; the static b is itself.
  const TensorInfo &x = m->inputs()[0], &bias = m->inputs()[2];
  EXPECT_EQ(x.rowsAt(3, 8), 6);
  EXPECT_EQ(x.bytesAt(3, 8), 72u);
  EXPECT_EQ(x.bytesAt(8, 8), x.bytes);
  EXPECT_EQ(bias.rowsAt(3, 8), 3);
  EXPECT_EQ(bias.bytesAt(3, 8), 12u);
  EXPECT_EQ(m->root().kernels()->Get(0)->cpu()->dynamic_dim(), 0);
  // A static module has none, and its tensors are static.
  Bytes add = mlpBytes();
  ASSERT_TRUE(readModuleMemory(rt::ByteSpan(add.data(), add.size()), &m).ok());
  EXPECT_TRUE(m->dynamicDims().empty());
  EXPECT_EQ(m->inputs()[0].dynamicDim, -1);
}

/// The message a module is refused with (empty when it is accepted).
std::string refusal(const Bytes &b) {
  Status s = verifyModuleBytes(rt::ByteSpan(b.data(), b.size()), "m.dlcm");
  EXPECT_TRUE(s.ok() || s.code() == rt::StatusCode::kInvalidModule) << s.toString();
  return s.ok() ? "" : s.message();
}

/// The dynamic module with `edit` applied to its header, resealed.
template <typename Edit> Bytes editedDynamic(Edit edit) {
  Bytes b = dynamicBytes();
  edit(fb::GetMutableModule(b.data() + kHeaderOffset));
  testing::resealHeader(b);
  return b;
}

TEST(ModuleReader, RefusesDynamicDimensionsItCannotRun) {
  const std::string located = "m.dlcm: section 'header' at byte ";
  struct Case {
    Bytes bytes;
    const char *message;
  };
  std::vector<Case> cases;
  cases.push_back({editedDynamic([](fb::Module *m) {
                     EXPECT_TRUE(m->mutable_dynamic_dims()->GetMutableObject(0)->mutate_min(9));
                   }),
                   "dynamic_dims[0] ('N'): range [9, 8] is not 1 <= min <= max"});
  cases.push_back({editedDynamic([](fb::Module *m) {
                     EXPECT_TRUE(m->mutable_dynamic_dims()->GetMutableObject(0)->mutate_min(0));
                   }),
                   "dynamic_dims[0] ('N'): range [0, 8] is not 1 <= min <= max"});
  cases.push_back({editedDynamic([](fb::Module *m) {
                     EXPECT_TRUE(m->mutable_dynamic_dims()->GetMutableObject(0)->mutate_max(5));
                   }),
                   "inputs[0] ('x'): shape [16, 3] grows with dynamic dimension 'N', but its "
                   "dimension 0 is not a positive multiple of its max 5"});
  cases.push_back({editedDynamic([](fb::Module *m) {
                     EXPECT_TRUE(m->mutable_inputs()->GetMutableObject(2)->mutate_dynamic_dim(1));
                   }),
                   "inputs[2] ('b'): dynamic dimension 1 is out of range (1 dynamic dimensions; "
                   "-1 for none)"});
  cases.push_back({editedDynamic([](fb::Module *m) {
                     EXPECT_TRUE(
                         m->mutable_outputs()->GetMutableObject(0)->mutate_dynamic_dim(-2));
                   }),
                   "outputs[0] ('y'): dynamic dimension -2 is out of range"});
  cases.push_back({editedDynamic([](fb::Module *m) {
                     auto *cpu = m->mutable_kernels()->GetMutableObject(0)->mutable_cpu();
                     EXPECT_TRUE(cpu->mutate_dynamic_dim(3));
                   }),
                   "kernels[0] ('rows'): dynamic dimension 3 is out of range"});
  cases.push_back({editedDynamic([](fb::Module *m) {
                     auto *cpu = m->mutable_kernels()->GetMutableObject(0)->mutable_cpu();
                     EXPECT_TRUE(cpu->mutate_parallel_extent(12));
                   }),
                   "kernels[0] ('rows'): parallel extent 12 grows with dynamic dimension 'N', "
                   "but is not a multiple of its max 8"});
  // Modules the writer builds wrong on purpose.
  auto written = [](auto build) {
    ModuleWriter w;
    build(w);
    Bytes b;
    EXPECT_TRUE(w.serialize(&b, /*verify=*/false).ok());
    return b;
  };
  cases.push_back({written([](ModuleWriter &w) {
                     EXPECT_TRUE(testing::buildDynamicModule(8, {}, &w).ok());
                     w.addDynamicDim({"M", 1, 4});
                   }),
                   "dynamic_dims[1] ('M'): a second dynamic dimension (this runtime runs "
                   "modules with at most one)"});
  cases.push_back({written([](ModuleWriter &w) {
                     EXPECT_TRUE(testing::buildAddModule(4, &w).ok());
                     w.addDynamicDim({"", 1, 4});
                   }),
                   "dynamic_dims[0] (''): empty name"});
  cases.push_back({written([](ModuleWriter &w) {
                     EXPECT_TRUE(testing::buildAddModule(4, &w).ok());
                     w.addDynamicDim({"N", 1, 4});
                     w.addInput({"r", DType::F32, {}, 0});
                   }),
                   "inputs[2] ('r'): shape [] grows with dynamic dimension 'N', but its "
                   "dimension 0 is not a positive multiple of its max 4"});
  cases.push_back({written([](ModuleWriter &w) {
                     EXPECT_TRUE(testing::buildAddModule(4, &w).ok());
                     w.addDynamicDim({"N", 1, 4});
                     w.addOutput({"z", DType::F32, {0, 3}, 0});
                   }),
                   "outputs[1] ('z'): shape [0, 3] grows with dynamic dimension 'N'"});
  cases.push_back({written([](ModuleWriter &w) {
                     EXPECT_TRUE(testing::buildDynamicModule(8, {}, &w).ok());
                     w.setMesh({{"data", 2}});
                     w.addPlan(PlanDesc());
                   }),
                   "2 plans in a module with dynamic dimension 'N' (such a module has exactly "
                   "one)"});
  for (const Case &c : cases) {
    std::string message = refusal(c.bytes);
    EXPECT_EQ(message.rfind(located, 0), 0u) << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
  }
  // The writer refuses them too (it runs the same checks).
  ModuleWriter w;
  ASSERT_TRUE(testing::buildAddModule(4, &w).ok());
  w.addDynamicDim({"N", 4, 2});
  Bytes b;
  EXPECT_EQ(w.serialize(&b).code(), rt::StatusCode::kInvalidModule);
}



// Library GEMMs (format 1.4): a CUDA kernel c = a @ b that cuBLASLt may run.
rt::LibraryGemmCall gemmCall() {
  rt::LibraryGemmCall g;
  g.a = 0, g.b = 1, g.d = 3, g.bias = 2;
  g.m = 4, g.k = 3, g.n = 5;
  g.activation = rt::LibraryGemmCall::Activation::kGeluTanh;
  return g;
}

Bytes libraryGemmBytes(const rt::LibraryGemmCall &g) {
  ModuleWriter w;
  w.setName("gemm");
  w.addInput({"a", DType::F32, {4, 3}});
  w.addInput({"b", DType::F32, {3, 5}});
  w.addInput({"bias", DType::F32, {5}});
  w.addOutput({"c", DType::F32, {4, 5}});
  KernelDesc k;
  k.name = k.entry = "k0_contraction";
  k.target = fb::Target::cuda;
  k.source = "extern \"C\" __global__ void k0_contraction() {}";
  k.args = {{"a", fb::Access::read, 48}, {"b", fb::Access::read, 60},
            {"bias", fb::Access::read, 20}, {"c", fb::Access::write, 80}};
  k.libraryGemm = g;
  uint32_t id = w.addKernel(k);
  PlanDesc plan;
  plan.commands.push_back(LaunchDesc{id,
                                     {inputRef(0, 0, 48), inputRef(1, 0, 60), inputRef(2, 0, 20),
                                      outputRef(0, 0, 80)}});
  w.addPlan(plan);
  Bytes bytes;
  EXPECT_TRUE(w.serialize(&bytes, /*verify=*/false).ok());
  return bytes;
}

TEST(ModuleReader, LibraryGemmRoundTrips) {
  rt::LibraryGemmCall g = gemmCall();
  Bytes b = libraryGemmBytes(g);
  ASSERT_FALSE(b.empty());
  std::shared_ptr<const LoadedModule> m;
  ASSERT_TRUE(readModuleMemory(rt::ByteSpan(b.data(), b.size()), &m).ok());
  std::optional<rt::LibraryGemmCall> read = libraryGemmOf(*m->root().kernels()->Get(0));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->a, 0u);
  EXPECT_EQ(read->b, 1u);
  EXPECT_EQ(read->d, 3u);
  EXPECT_EQ(read->bias, 2);
  EXPECT_EQ(read->c, -1);
  EXPECT_EQ(read->m, 4);
  EXPECT_EQ(read->n, 5);
  EXPECT_EQ(read->k, 3);
  EXPECT_EQ(read->batch, 1);
  EXPECT_EQ(read->activation, rt::LibraryGemmCall::Activation::kGeluTanh);
  EXPECT_EQ(read->operandDtype, DType::F32);
  // A kernel without one has none.
  Bytes plain = mlpBytes();
  ASSERT_TRUE(readModuleMemory(rt::ByteSpan(plain.data(), plain.size()), &m).ok());
  EXPECT_FALSE(libraryGemmOf(*m->root().kernels()->Get(0)).has_value());
}

TEST(ModuleReader, RefusesLibraryGemmsOutsideTheirArguments) {
  struct Case {
    void (*edit)(rt::LibraryGemmCall &);
    const char *message;
  };
  const Case cases[] = {
      {[](rt::LibraryGemmCall &g) { g.b = 7; }, "B is argument 7 of 4"},
      {[](rt::LibraryGemmCall &g) { g.d = 0; }, "D (argument 0) is read-only"},
      {[](rt::LibraryGemmCall &g) { g.k = 4; }, "A spans more bytes than argument 0 (48)"},
      {[](rt::LibraryGemmCall &g) { g.batch = 2, g.strideA = 12; },
       "A spans more bytes than argument 0 (48)"},
      {[](rt::LibraryGemmCall &g) { g.m = 0; }, "batch, m, n and k must be in [1, 2^31]"},
      {[](rt::LibraryGemmCall &g) { g.tf32 = true, g.operandDtype = DType::BF16; },
       "tf32 products of non-f32 operands"},
      {[](rt::LibraryGemmCall &g) { g.operandDtype = DType::I32; },
       "operand and result dtypes must be f32, bf16 or f16"},
      {[](rt::LibraryGemmCall &g) { g.biasDtype = DType::F16; },
       "the bias is neither f32 nor of the result's dtype"},
  };
  EXPECT_EQ(refusal(libraryGemmBytes(gemmCall())), "");
  for (const Case &c : cases) {
    rt::LibraryGemmCall g = gemmCall();
    c.edit(g);
    std::string message = refusal(libraryGemmBytes(g));
    EXPECT_NE(message.find(std::string("kernels[0] ('k0_contraction').library_gemm: ") +
                           c.message),
              std::string::npos)
        << message;
  }
}

Bytes serialized(ModuleWriter &w) {
  Bytes bytes;
  Status s = w.serialize(&bytes);
  EXPECT_TRUE(s.ok()) << s.toString();
  return bytes;
}

Bytes drawnStateBytes() {
  ModuleWriter w;
  EXPECT_TRUE(testing::buildDrawnStateModule(&w).ok());
  return serialized(w);
}

TEST(ModuleReader, DrawnStateRoundTrips) {
  Bytes b = drawnStateBytes();
  std::shared_ptr<const LoadedModule> m;
  Status s = readModuleMemory(rt::ByteSpan(b.data(), b.size()), &m);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(m->minorVersion(), kFormatMinor);
  ASSERT_EQ(m->state().size(), 3u);
  const StateInfo &w = m->state()[0], &zeros = m->state()[1], &he = m->state()[2];
  ASSERT_TRUE(w.draw.has_value());
  EXPECT_EQ(w.draw->kind, InitKind::Normal);
  EXPECT_EQ(w.draw->options.mean, 0.0);
  EXPECT_EQ(w.draw->options.std, 0.02);
  EXPECT_EQ(w.draw->options.seed, 7u);
  EXPECT_EQ(w.initialWeight, -1);
  EXPECT_FALSE(zeros.draw.has_value());
  EXPECT_EQ(zeros.initialWeight, -1);
  ASSERT_TRUE(he.draw.has_value());
  EXPECT_EQ(he.draw->kind, InitKind::He);
  EXPECT_EQ(he.draw->options.seed, 3u);
  EXPECT_TRUE(m->weights().empty()); // nothing of the states is stored
}

TEST(ModuleReader, RefusesDrawsItCannotMake) {
  auto edited = [](auto edit) {
    Bytes b = drawnStateBytes();
    edit(fb::GetMutableModule(b.data() + kHeaderOffset));
    testing::resealHeader(b);
    return b;
  };
  auto state = [](fb::Module *m, uint32_t i) {
    return const_cast<fb::StateSpec *>(m->state()->Get(i));
  };
  EXPECT_EQ(refusal(drawnStateBytes()), "");
  std::string message = refusal(edited([&](fb::Module *m) {
    EXPECT_TRUE(state(m, 0)->mutable_draw()->mutate_kind(static_cast<fb::DrawKind>(9)));
  }));
  EXPECT_NE(message.find("state[0] ('w'): unknown draw kind 9"), std::string::npos) << message;
  message = refusal(edited([&](fb::Module *m) {
    EXPECT_TRUE(state(m, 2)->mutable_draw()->mutate_std(std::nan("")));
  }));
  EXPECT_NE(message.find("state[2] ('h'): a draw option is not finite (mean 0, std nan"),
            std::string::npos)
      << message;
  message = refusal(edited([&](fb::Module *m) {
    EXPECT_TRUE(state(m, 1)->mutate_init(fb::StateInit::drawn));
  }));
  EXPECT_NE(message.find("state[1] ('m'): drawn with no draw"), std::string::npos) << message;
}

/// The add module with a weight drawn when loaded (`dw` f32[5], uniform in
/// [-1, 1), seed 2) and one stored (`sw` f32[2] = {1.5, -2}).
Bytes drawnWeightBytes() {
  ModuleWriter w;
  EXPECT_TRUE(testing::buildAddModule(6, &w).ok());
  Draw uniform{InitKind::Uniform, {}};
  uniform.options.low = -1, uniform.options.seed = 2;
  w.addDrawnWeight({"dw", DType::F32, {5}}, uniform);
  const float stored[2] = {1.5f, -2.0f};
  w.addWeight({"sw", DType::F32, {2}},
              std::vector<uint8_t>(reinterpret_cast<const uint8_t *>(stored),
                                   reinterpret_cast<const uint8_t *>(stored) + 8));
  return serialized(w);
}

TEST(ModuleReader, DrawsADrawnWeightWhenItLoadsTheModule) {
  Bytes b = drawnWeightBytes();
  std::shared_ptr<const LoadedModule> m;
  Status s = readModuleMemory(rt::ByteSpan(b.data(), b.size()), &m);
  ASSERT_TRUE(s.ok()) << s.toString();
  ASSERT_EQ(m->weights().size(), 2u);
  InitOptions uniform;
  uniform.low = -1, uniform.seed = 2;
  HostTensor want = initParam(InitKind::Uniform, uniform, DType::F32, {5});
  rt::ByteSpan drawn = m->weightData(0), stored = m->weightData(1);
  ASSERT_EQ(drawn.size(), 20u);
  EXPECT_EQ(0, std::memcmp(drawn.data(), want.data(), 20));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(drawn.data()) % kSectionAlignment, 0u);
  float got[2];
  ASSERT_EQ(stored.size(), 8u);
  std::memcpy(got, stored.data(), 8);
  EXPECT_EQ(got[0], 1.5f);
  EXPECT_EQ(got[1], -2.0f);
  // The file holds the stored weight's bytes only: its section is 8 bytes.
  for (uint32_t i = 0; i < m->root().sections()->size(); ++i)
    if (m->root().sections()->Get(i)->kind() == fb::SectionKind::weights)
      EXPECT_EQ(m->root().sections()->Get(i)->size(), 8u);
  // A drawn weight placed in the section is refused.
  Bytes moved = b;
  auto *weight = const_cast<fb::Weight *>(
      fb::GetMutableModule(moved.data() + kHeaderOffset)->weights()->Get(0));
  ASSERT_TRUE(weight->mutate_offset(64));
  testing::resealHeader(moved);
  std::string message = refusal(moved);
  EXPECT_NE(message.find("weights[0] ('dw'): a drawn weight at offset 64, not 2^64 - 1"),
            std::string::npos)
      << message;
}

} // namespace
} // namespace dlc::format
