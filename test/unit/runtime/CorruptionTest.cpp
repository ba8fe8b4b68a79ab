//===- CorruptionTest.cpp - Corrupt and hostile modules are refused -------===//
//
// Every file here must be refused with INVALID_MODULE and a message naming
// the section and the byte offset, and nothing may crash (these tests also
// run under ASan and UBSan: scripts/test.sh). Truncations, bit flips in each
// section, absurd dimensions and offsets, out-of-range indices, a wrong
// identifier and version; then header edits resealed with valid checksums,
// which reach the semantic checks.
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/Session.h"
#include "runtime/format/ModuleReader.h"
#include "test/unit/runtime/TestModules.h"

#include <gtest/gtest.h>

#include <regex>

namespace dlc::format {
namespace {

using testing::Bytes;

Bytes variant(const std::string &name) {
  Bytes b;
  Status s = testing::buildVariant(name, &b);
  EXPECT_TRUE(s.ok()) << s.toString();
  return b;
}

Status verify(const Bytes &b) {
  return verifyModuleBytes(rt::ByteSpan(b.data(), b.size()), "m.dlcm");
}

/// Refused, naming `section` (any when empty) and a byte offset.
::testing::AssertionResult refusedIn(const Bytes &b, const std::string &section) {
  Status s = verify(b);
  if (s.ok())
    return ::testing::AssertionFailure() << "accepted";
  if (s.code() != rt::StatusCode::kInvalidModule)
    return ::testing::AssertionFailure() << "wrong code: " << s.toString();
  static const std::regex located("^m\\.dlcm: section '([^']+)' at byte [0-9]+: .+");
  std::smatch match;
  if (!std::regex_match(s.message(), match, located))
    return ::testing::AssertionFailure() << "no section and byte in: " << s.message();
  if (!section.empty() && match[1] != section)
    return ::testing::AssertionFailure() << "names section '" << match[1] << "', expected '"
                                         << section << "': " << s.message();
  return ::testing::AssertionSuccess();
}

/// The message, for a module that must be refused.
std::string refusal(const Bytes &b) {
  Status s = verify(b);
  EXPECT_FALSE(s.ok());
  return s.message();
}

TEST(Corruption, ValidModulesPass) {
  for (const char *name : {"add", "mlp"})
    EXPECT_TRUE(verify(variant(name)).ok()) << name;
}

TEST(Corruption, TruncatedAtEveryOffsetIsRefused) {
  const Bytes full = variant("mlp");
  // Every offset through the prelude, the header and the weights; then a
  // stride through the kernel binary.
  const fb::Module *m = fb::GetModule(full.data() + kHeaderOffset);
  const uint64_t denseUntil = m->sections()->Get(1)->offset() + 256;
  size_t tried = 0;
  for (size_t size = 0; size < full.size(); size += size < denseUntil ? 1 : 97) {
    Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(size));
    ASSERT_TRUE(refusedIn(cut, "prelude")) << "truncated to " << size;
    ++tried;
  }
  EXPECT_GT(tried, 1000u);
  EXPECT_NE(refusal(Bytes(full.begin(), full.begin() + 1000)).find("(truncated)"),
            std::string::npos);
}

TEST(Corruption, ExtendedFileIsRefused) {
  Bytes b = variant("add");
  b.push_back(0);
  EXPECT_TRUE(refusedIn(b, "prelude"));
}

/// Flips one bit at `count` evenly spaced bytes of [begin, end) and expects
/// each to be refused in `section`.
void flipEach(const Bytes &full, uint64_t begin, uint64_t end, const std::string &section,
              uint64_t count = 300) {
  ASSERT_LT(begin, end);
  uint64_t step = std::max<uint64_t>(1, (end - begin) / count);
  for (uint64_t at = begin; at < end; at += step) {
    Bytes b = full;
    b[at] ^= static_cast<uint8_t>(1u << (at % 8));
    ASSERT_TRUE(refusedIn(b, section)) << "bit flipped at byte " << at;
  }
}

TEST(Corruption, BitFlipsInEachSectionAreRefusedNamingIt) {
  const Bytes full = variant("mlp");
  const Prelude p = decodePrelude(full.data());
  const uint64_t headerEnd = kHeaderOffset + p.headerSize;
  flipEach(full, 0, kPreludeSize, "prelude", 64);
  flipEach(full, kHeaderOffset, headerEnd, "header", 2000);
  const fb::Module *m = fb::GetModule(full.data() + kHeaderOffset);
  uint64_t cursor = headerEnd;
  for (const fb::Section *s : *m->sections()) {
    if (cursor < s->offset())
      flipEach(full, cursor, s->offset(), "padding");
    flipEach(full, s->offset(), s->offset() + s->size(), s->name()->str());
    cursor = s->offset() + s->size();
  }
}

TEST(Corruption, EmptyAndTinyFiles) {
  EXPECT_TRUE(refusedIn(Bytes(), "prelude"));
  EXPECT_TRUE(refusedIn(Bytes{'D', 'L', 'C'}, "prelude"));
  EXPECT_TRUE(refusedIn(Bytes{'D', 'L', 'C', 'M'}, "prelude"));
  EXPECT_TRUE(refusedIn(Bytes(64, 0), "prelude"));
}

TEST(Corruption, AbsurdPreludeSizesWithValidChecksum) {
  const Bytes full = variant("add");
  for (uint64_t headerSize : {uint64_t(0), uint64_t(7), UINT64_MAX, uint64_t(full.size())}) {
    Bytes b = full;
    Prelude p = decodePrelude(b.data());
    p.headerSize = headerSize;
    encodePrelude(p, b.data());
    EXPECT_NE(refusal(b).find("section 'prelude' at byte 16: header size"), std::string::npos)
        << refusal(b);
  }
  Bytes b = full;
  Prelude p = decodePrelude(b.data());
  p.fileSize = UINT64_MAX;
  encodePrelude(p, b.data());
  EXPECT_NE(refusal(b).find("section 'prelude' at byte 24"), std::string::npos);
}

struct Expected {
  const char *variant;
  const char *message; ///< a substring of the refusal
};

class HostileModule : public ::testing::TestWithParam<Expected> {};

TEST_P(HostileModule, IsRefusedWithItsReason) {
  Bytes b = variant(GetParam().variant);
  ASSERT_TRUE(refusedIn(b, ""));
  EXPECT_NE(refusal(b).find(GetParam().message), std::string::npos) << refusal(b);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, HostileModule,
    ::testing::Values(
        Expected{"bad-identifier", "section 'prelude' at byte 0: identifier 'XLCM' is not 'DLCM'"},
        Expected{"bad-version", "section 'prelude' at byte 4: format version 2."},
        Expected{"huge-dims", "inputs[0] ('x'): shape [1099511627776, 1099511627776] of f32 is "
                              "over the 2^48-byte limit"},
        Expected{"negative-dim", "inputs[0] ('x'): dimension 1 is negative (-5)"},
        Expected{"weight-offset-max", "weights[1] ('b'): offset 18446744073709551552 + size 20 "
                                      "goes past the end of the weights section"},
        Expected{"section-past-end", "sections[1] ('kernels.so'): offset"},
        Expected{"kernel-index", "plans[0].commands[1]: kernel index 7 is out of range (2 kernels)"},
        Expected{"unknown-command", "plans[0].commands[2]: unknown command type 42"},
        Expected{"arena-ref-past-end", "plans[0].commands[0].args[2]: offset 64 + 80 bytes goes "
                                       "past the end of arena 0 (64 bytes)"},
        Expected{"args-mismatch", "2 buffers for kernel 'add', which takes 3"},
        Expected{"empty-entry", "kernels[0] ('add'): empty entry symbol"},
        Expected{"write-to-input", "kernel 'add' writes to input 1, which is read-only"},
        Expected{"status-ref-offset", "plans[0].commands[0].args[3]: the status words are index "
                                      "0, offset 0, 32 bytes (0, 8, 32 given)"},
        Expected{"check-kernel-index", "checks[0]: kernel index 9 is out of range (1 kernels)"}),
    [](const ::testing::TestParamInfo<Expected> &info) {
      std::string name = info.param.variant;
      for (char &c : name)
        if (c == '-')
          c = '_';
      return name;
    });

/// Modules that load but fail against the device: at session creation, with
/// a status and before running anything.
TEST(Corruption, DeviceChecksRefuseAtSessionCreation) {
  struct Case {
    const char *variant;
    rt::StatusCode code;
    const char *message;
  };
  for (const Case &c : {
           Case{"missing-symbol", rt::StatusCode::kInvalidModule,
                "entry symbol 'dlc_no_such_kernel' is not in binary 'kernels.so'"},
           Case{"huge-arena", rt::StatusCode::kResourceExhausted,
                "arena of 140737488355328 bytes is over the memory limit of device 'cpu'"},
           Case{"library-call", rt::StatusCode::kUnimplemented,
                "plans[0].commands[1] is a LibraryCall"},
       }) {
    Bytes b = variant(c.variant);
    std::shared_ptr<const LoadedModule> m;
    Status s = readModuleMemory(rt::ByteSpan(b.data(), b.size()), &m, "m.dlcm");
    ASSERT_TRUE(s.ok()) << c.variant << ": " << s.toString();
    std::unique_ptr<rt::Session> session;
    s = rt::Session::create(m, "cpu", {}, &session);
    EXPECT_EQ(s.code(), c.code) << c.variant << ": " << s.toString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

/// Every byte of the header changed and resealed (valid checksums), so the
/// verifier and the semantic checks see it: refused with a located message,
/// or accepted as a still-consistent module; never a crash.
TEST(Corruption, ResealedHeaderEditsNeverCrash) {
  const Bytes full = variant("mlp");
  const Prelude p = decodePrelude(full.data());
  size_t refused = 0, accepted = 0;
  for (uint64_t at = kHeaderOffset; at < kHeaderOffset + p.headerSize; ++at) {
    for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xFF)}) {
      Bytes b = full;
      b[at] ^= mask;
      testing::resealHeader(b);
      Status s = verify(b);
      if (!s.ok()) {
        ASSERT_TRUE(refusedIn(b, "")) << "byte " << at;
        ++refused;
        continue;
      }
      ++accepted;
      std::shared_ptr<const LoadedModule> m;
      ASSERT_TRUE(readModuleMemory(rt::ByteSpan(b.data(), b.size()), &m).ok());
      std::unique_ptr<rt::Session> session;
      rt::SessionOptions options;
      options.device.numThreads = 1;
      (void)rt::Session::create(m, "cpu", options, &session);
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(accepted, 0u); // e.g. a changed character of the kernel source
}

} // namespace
} // namespace dlc::format
