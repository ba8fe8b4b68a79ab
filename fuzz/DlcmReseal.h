//===- DlcmReseal.h - Checksums made right for fuzzed modules ---*- C++ -*-===//
//
// A mutated .dlcm almost always fails its CRCs, so the checks behind them
// would never see it. resealModule() writes, in place, what a writer would
// have: each section's CRC (when the FlatBuffers header verifies), the
// collectives' hash, the header's CRC, the file size and the prelude's CRC.
// Everything else stays as the fuzzer made it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/base/Checksum.h"
#include "runtime/format/ModuleFormat.h"

#include <vector>

namespace dlc::fuzz {

inline void resealModule(std::vector<uint8_t> &bytes) {
  using namespace dlc::format;
  if (bytes.size() < kPreludeSize)
    return;
  Prelude p = decodePrelude(bytes.data());
  p.fileSize = bytes.size();
  const uint64_t room = bytes.size() - kHeaderOffset;
  if (p.headerOffset == kHeaderOffset && p.headerSize >= 8 && p.headerSize <= room) {
    uint8_t *header = bytes.data() + kHeaderOffset;
    flatbuffers::Verifier verifier(header, static_cast<size_t>(p.headerSize), 64, 1000000);
    if (flatbuffers::BufferHasIdentifier(header, fb::ModuleIdentifier()) &&
        fb::VerifyModuleBuffer(verifier)) {
      fb::Module *m = fb::GetMutableModule(header);
      if (auto *sections = m->mutable_sections()) {
        for (uint32_t i = 0; i < sections->size(); ++i) {
          fb::Section *s = sections->GetMutableObject(i);
          if (s->offset() <= bytes.size() && s->size() <= bytes.size() - s->offset())
            s->mutate_crc32(
                rt::crc32(rt::ByteSpan(bytes.data() + s->offset(), s->size())));
        }
      }
      std::vector<CollectiveDesc> descs;
      bool known = true;
      for (uint32_t i = 0; m->collectives() && i < m->collectives()->size(); ++i) {
        const fb::CollectiveInfo *c = m->collectives()->Get(i);
        auto dtype = dtypeFromWire(c->dtype());
        if (!dtype) {
          known = false;
          break;
        }
        CollectiveDesc d;
        d.op = c->op();
        d.reduce = c->reduce();
        d.dtype = *dtype;
        d.count = c->count();
        d.peer = c->peer();
        d.outer = c->outer();
        for (uint32_t a = 0; c->axes() && a < c->axes()->size(); ++a)
          d.axes.push_back(c->axes()->Get(a)->str());
        descs.push_back(std::move(d));
      }
      if (known && !descs.empty())
        m->mutate_collectives_hash(collectivesHash(descs));
    }
    p.headerCrc32 = rt::crc32(rt::ByteSpan(header, p.headerSize));
  }
  encodePrelude(p, bytes.data());
}

} // namespace dlc::fuzz
