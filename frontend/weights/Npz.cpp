//===- Npz.cpp - .npz (ZIP of .npy) reading and writing --------------------===//
//
// Reader: End Of Central Directory (searched backwards, comment allowed),
// ZIP64 EOCD locator/record, central directory with ZIP64 extended
// information extra fields, local headers; stored and deflated entries; CRC32
// verified. Sizes are taken from the central directory (numpy's savez writes
// local headers with ZIP64 placeholders). Every offset and size is checked
// against the file size before use.
//
// Writer: stored entries with CRC32; ZIP64 records only when needed.
//
//===----------------------------------------------------------------------===//
#include "frontend/weights/ArrayFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

#include <zlib.h>

namespace dlc::weights {
namespace detail {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kEocdSize = 22;
constexpr size_t kZip64EocdSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kCentralSize = 46;
constexpr size_t kLocalSize = 30;

uint16_t rd16(const uint8_t *p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t rd32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t rd64(const uint8_t *p) {
  return static_cast<uint64_t>(rd32(p)) | (static_cast<uint64_t>(rd32(p + 4)) << 32);
}

uint32_t crc32Of(const uint8_t *p, uint64_t n, uint32_t crc = 0) {
  uLong c = crc;
  while (n > 0) {
    uInt chunk = static_cast<uInt>(std::min<uint64_t>(n, 1u << 30));
    c = ::crc32(c, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

bool rangeOk(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t csize = 0;
  uint64_t usize = 0;
  uint64_t localOffset = 0;
  uint64_t cdPos = 0;
};

class ZipReader {
public:
  InputFile file;
  std::vector<ZipEntry> entries;

  bool open(const std::string &path, std::string &error) {
    if (!file.open(path, error))
      return false;
    return readDirectory(error);
  }

  std::string entryPart(const ZipEntry &e) const { return "entry '" + e.name + "'"; }

  std::string fail(const std::string &part, uint64_t off, const std::string &msg,
                   std::string &error) const {
    error = formatError(file.path(), part, off, msg);
    return error;
  }

  // Locates the entry's data via its local header.
  bool dataStart(const ZipEntry &e, uint64_t &start, std::string &error) {
    uint64_t size = file.size();
    std::string part = entryPart(e);
    if (!rangeOk(e.localOffset, kLocalSize, size)) {
      fail(part, e.localOffset,
           "truncated: local header (30 bytes) is past the end of the file (" +
               std::to_string(size) + " bytes)",
           error);
      return false;
    }
    uint8_t lh[kLocalSize];
    if (!file.readAt(e.localOffset, kLocalSize, lh, error))
      return false;
    if (rd32(lh) != kLocalSig) {
      fail(part, e.localOffset, "bad local header signature " + hex32(rd32(lh)), error);
      return false;
    }
    uint64_t nameLen = rd16(lh + 26), extraLen = rd16(lh + 28);
    uint64_t nameOff = e.localOffset + kLocalSize;
    if (!rangeOk(nameOff, nameLen + extraLen, size)) {
      fail(part, nameOff,
           "truncated: local header name/extra fields (" + std::to_string(nameLen + extraLen) +
               " bytes) extend past the end of the file (" + std::to_string(size) + " bytes)",
           error);
      return false;
    }
    std::string localName(nameLen, '\0');
    if (!file.readAt(nameOff, nameLen, &localName[0], error))
      return false;
    if (localName != e.name) {
      fail(part, nameOff,
           "local header names '" + localName + "' but the central directory names '" + e.name +
               "'",
           error);
      return false;
    }
    start = nameOff + nameLen + extraLen;
    if (!rangeOk(start, e.csize, size)) {
      fail(part, start,
           "truncated: entry data needs " + std::to_string(e.csize) + " bytes, file has " +
               std::to_string(size),
           error);
      return false;
    }
    return true;
  }

  // Inflates up to `maxOut` bytes of a deflated entry. With full=true the
  // stream must end exactly at usize bytes.
  bool inflateData(const ZipEntry &e, uint64_t start, uint64_t maxOut, bool full,
                   std::vector<uint8_t> &out, std::string &error) {
    std::string part = entryPart(e);
    z_stream zs;
    std::memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
      fail(part, start, "zlib inflateInit2 failed", error);
      return false;
    }
    struct Guard {
      z_stream *z;
      ~Guard() { inflateEnd(z); }
    } guard{&zs};
    out.resize(static_cast<size_t>(maxOut));
    std::vector<uint8_t> inbuf(static_cast<size_t>(std::min<uint64_t>(e.csize, 1 << 16)) + 1);
    uint64_t consumed = 0;
    uint64_t produced = 0;
    bool ended = false;
    uint8_t scratch[1];
    bool probing = false; // output buffer full: check the stream ends here
    while (true) {
      if (zs.avail_in == 0 && consumed < e.csize) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(e.csize - consumed, inbuf.size()));
        if (!file.readAt(start + consumed, n, inbuf.data(), error))
          return false;
        zs.next_in = inbuf.data();
        zs.avail_in = static_cast<uInt>(n);
        consumed += n;
      }
      if (!probing) {
        if (produced == maxOut) {
          if (!full)
            break;
          probing = true;
        } else {
          zs.next_out = out.data() + produced;
          zs.avail_out = static_cast<uInt>(std::min<uint64_t>(maxOut - produced, 1u << 30));
        }
      }
      if (probing) {
        zs.next_out = scratch;
        zs.avail_out = 1;
      }
      uInt before = zs.avail_out;
      int rc = inflate(&zs, Z_NO_FLUSH);
      uInt made = before - zs.avail_out;
      if (probing && made > 0) {
        fail(part, start,
             "deflate stream inflates to more than the " + std::to_string(e.usize) +
                 " bytes the central directory declares",
             error);
        return false;
      }
      produced += probing ? 0 : made;
      if (rc == Z_STREAM_END) {
        ended = true;
        break;
      }
      if (rc == Z_BUF_ERROR && zs.avail_in == 0 && consumed == e.csize) {
        fail(part, start + consumed,
             "truncated deflate stream (" + std::to_string(e.csize) +
                 " compressed bytes end before the stream does)",
             error);
        return false;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail(part, start + consumed - zs.avail_in,
             std::string("corrupt deflate data: ") + (zs.msg ? zs.msg : "zlib error"), error);
        return false;
      }
    }
    if (ended && full && produced != e.usize) {
      fail(part, start,
           "deflate stream inflates to " + std::to_string(produced) +
               " bytes, the central directory declares " + std::to_string(e.usize),
           error);
      return false;
    }
    out.resize(static_cast<size_t>(produced));
    return true;
  }

  bool readEntry(const ZipEntry &e, std::vector<uint8_t> &out, uint64_t &start,
                 std::string &error) {
    if (!dataStart(e, start, error))
      return false;
    if (e.method == 0) {
      out.resize(static_cast<size_t>(e.usize));
      if (!file.readAt(start, out.size(), out.data(), error))
        return false;
    } else if (!inflateData(e, start, e.usize, true, out, error)) {
      return false;
    }
    uint32_t crc = crc32Of(out.data(), out.size());
    if (crc != e.crc) {
      fail(entryPart(e), start,
           "CRC32 mismatch: data has " + hex32(crc) + ", central directory (record at byte " +
               std::to_string(e.cdPos) + ") says " + hex32(e.crc),
           error);
      return false;
    }
    return true;
  }

  bool readEntryPrefix(const ZipEntry &e, uint64_t start, uint64_t want,
                       std::vector<uint8_t> &out, std::string &error) {
    want = std::min(want, e.usize);
    if (e.method == 0) {
      out.resize(static_cast<size_t>(want));
      return file.readAt(start, out.size(), out.data(), error);
    }
    return inflateData(e, start, want, false, out, error);
  }

  // Name used for the npy image of an entry; offsets inside are absolute for
  // stored entries and relative to the inflated data for deflated ones.
  std::string npyName(const ZipEntry &e) const {
    return file.path() + ": " + entryPart(e) +
           (e.method == 0 ? "" : " (deflated; byte offsets are within the inflated entry)");
  }

private:
  bool readDirectory(std::string &error) {
    uint64_t size = file.size();
    const std::string eocdPart = "zip end of central directory";
    if (size < kEocdSize) {
      fail(eocdPart, 0,
           "file has " + std::to_string(size) +
               " bytes, too small to be a zip/npz archive (needs at least 22)",
           error);
      return false;
    }
    uint64_t tailLen = std::min<uint64_t>(size, kEocdSize + 0xFFFF);
    uint64_t tailStart = size - tailLen;
    std::vector<uint8_t> tail(static_cast<size_t>(tailLen));
    if (!file.readAt(tailStart, tail.size(), tail.data(), error))
      return false;
    int64_t found = -1;
    for (int64_t i = static_cast<int64_t>(tailLen - kEocdSize); i >= 0; --i) {
      const uint8_t *p = tail.data() + i;
      if (rd32(p) != kEocdSig)
        continue;
      uint64_t commentLen = rd16(p + 20);
      if (static_cast<uint64_t>(i) + kEocdSize + commentLen <= tailLen) {
        found = i;
        break;
      }
    }
    if (found < 0) {
      fail(eocdPart, tailStart,
           "signature not found in the last " + std::to_string(tailLen) +
               " bytes (not a zip/npz archive, or truncated)",
           error);
      return false;
    }
    uint64_t eocdPos = tailStart + static_cast<uint64_t>(found);
    const uint8_t *eo = tail.data() + found;
    uint64_t diskNo = rd16(eo + 4), cdDisk = rd16(eo + 6);
    uint64_t entriesOnDisk = rd16(eo + 8), total = rd16(eo + 10);
    uint64_t cdSize = rd32(eo + 12), cdOffset = rd32(eo + 16);
    uint64_t cdLimit = eocdPos; // the central directory must end before this
    bool zip64 = false;
    if (eocdPos >= kZip64LocatorSize) {
      uint64_t locPos = eocdPos - kZip64LocatorSize;
      uint8_t loc[kZip64LocatorSize];
      if (!file.readAt(locPos, kZip64LocatorSize, loc, error))
        return false;
      if (rd32(loc) == kZip64LocatorSig) {
        zip64 = true;
        uint64_t recPos = rd64(loc + 8);
        if (!rangeOk(recPos, kZip64EocdSize, locPos)) {
          fail("zip64 end of central directory locator", locPos,
               "points to byte " + std::to_string(recPos) +
                   ", which is not followed by a 56-byte record before the locator",
               error);
          return false;
        }
        uint8_t rec[kZip64EocdSize];
        if (!file.readAt(recPos, kZip64EocdSize, rec, error))
          return false;
        if (rd32(rec) != kZip64EocdSig) {
          fail("zip64 end of central directory", recPos,
               "bad signature " + hex32(rd32(rec)), error);
          return false;
        }
        diskNo = rd32(rec + 16);
        cdDisk = rd32(rec + 20);
        entriesOnDisk = rd64(rec + 24);
        total = rd64(rec + 32);
        cdSize = rd64(rec + 40);
        cdOffset = rd64(rec + 48);
        cdLimit = recPos;
      }
    }
    const std::string recPart = zip64 ? "zip64 end of central directory" : eocdPart;
    if (diskNo != 0 || cdDisk != 0 || entriesOnDisk != total) {
      fail(recPart, eocdPos, "multi-disk (split) archives are not supported", error);
      return false;
    }
    if (!rangeOk(cdOffset, cdSize, cdLimit)) {
      fail(recPart, eocdPos,
           "central directory (" + std::to_string(cdSize) + " bytes at byte " +
               std::to_string(cdOffset) + ") lies outside the archive (directory must end by byte " +
               std::to_string(cdLimit) + ")",
           error);
      return false;
    }
    if (total > cdSize / kCentralSize) {
      fail(recPart, eocdPos,
           std::to_string(total) + " entries cannot fit in a central directory of " +
               std::to_string(cdSize) + " bytes",
           error);
      return false;
    }
    std::vector<uint8_t> cd(static_cast<size_t>(cdSize));
    if (!file.readAt(cdOffset, cd.size(), cd.data(), error))
      return false;
    const std::string cdPart = "zip central directory";
    uint64_t p = 0;
    std::set<std::string> seen;
    for (uint64_t i = 0; i < total; ++i) {
      uint64_t at = cdOffset + p;
      if (!rangeOk(p, kCentralSize, cdSize)) {
        fail(cdPart, at, "truncated record for entry " + std::to_string(i), error);
        return false;
      }
      const uint8_t *r = cd.data() + p;
      if (rd32(r) != kCentralSig) {
        fail(cdPart, at, "bad signature " + hex32(rd32(r)) + " for entry " + std::to_string(i),
             error);
        return false;
      }
      ZipEntry e;
      e.cdPos = at;
      e.flags = rd16(r + 8);
      e.method = rd16(r + 10);
      e.crc = rd32(r + 16);
      e.csize = rd32(r + 20);
      e.usize = rd32(r + 24);
      uint64_t nameLen = rd16(r + 28), extraLen = rd16(r + 30), commentLen = rd16(r + 32);
      uint32_t diskStart = rd16(r + 34);
      e.localOffset = rd32(r + 42);
      if (!rangeOk(p + kCentralSize, nameLen + extraLen + commentLen, cdSize)) {
        fail(cdPart, at, "record for entry " + std::to_string(i) +
                             " extends past the end of the central directory",
             error);
        return false;
      }
      e.name.assign(reinterpret_cast<const char *>(r + kCentralSize), nameLen);
      const std::string part = "zip central directory, entry '" + e.name + "'";
      // ZIP64 extended information extra field.
      const uint8_t *x = r + kCentralSize + nameLen;
      uint64_t xp = 0;
      bool needU = e.usize == 0xFFFFFFFF, needC = e.csize == 0xFFFFFFFF,
           needO = e.localOffset == 0xFFFFFFFF, needD = diskStart == 0xFFFF;
      bool gotZip64 = false;
      while (xp + 4 <= extraLen) {
        uint16_t id = rd16(x + xp), len = rd16(x + xp + 2);
        uint64_t dataAt = xp + 4;
        if (dataAt + len > extraLen) {
          fail(part, at + kCentralSize + nameLen + xp,
               "extra field of " + std::to_string(len) + " bytes overruns the extra area", error);
          return false;
        }
        if (id == 0x0001) {
          gotZip64 = true;
          uint64_t q = dataAt, end = dataAt + len;
          auto take = [&](bool need, uint64_t &v) {
            if (!need)
              return true;
            if (q + 8 > end)
              return false;
            v = rd64(x + q);
            q += 8;
            return true;
          };
          uint64_t disk64 = 0;
          bool ok = take(needU, e.usize) && take(needC, e.csize) && take(needO, e.localOffset);
          if (ok && needD) {
            ok = q + 4 <= end;
            if (ok)
              disk64 = rd32(x + q);
          }
          if (!ok) {
            fail(part, at + kCentralSize + nameLen + xp,
                 "ZIP64 extra field is too short for the fields marked 0xFFFFFFFF", error);
            return false;
          }
          diskStart = static_cast<uint32_t>(disk64);
        }
        xp += 4 + len;
      }
      if ((needU || needC || needO || needD) && !gotZip64) {
        fail(part, at, "sizes/offset are 0xFFFFFFFF but there is no ZIP64 extra field", error);
        return false;
      }
      if (diskStart != 0) {
        fail(part, at, "entry starts on another disk (split archives are not supported)", error);
        return false;
      }
      if (e.flags & 0x1) {
        fail(part, at, "entry is encrypted (not supported)", error);
        return false;
      }
      if (e.method != 0 && e.method != 8) {
        fail(part, at,
             "compression method " + std::to_string(e.method) +
                 " is not supported (expected 0 = stored or 8 = deflate)",
             error);
        return false;
      }
      if (e.method == 0 && e.csize != e.usize) {
        fail(part, at,
             "stored entry has compressed size " + std::to_string(e.csize) +
                 " != uncompressed size " + std::to_string(e.usize),
             error);
        return false;
      }
      if (!rangeOk(e.localOffset, e.csize, size)) {
        fail(part, at,
             "local header offset " + std::to_string(e.localOffset) + " + " +
                 std::to_string(e.csize) + " compressed bytes is past the end of the file (" +
                 std::to_string(size) + " bytes)",
             error);
        return false;
      }
      // Deflate cannot exceed ~1032:1; refuse sizes that would only serve to
      // make us allocate absurd amounts of memory.
      if (e.method == 8 && e.usize / 1032 > e.csize + 64) {
        fail(part, at,
             "declared uncompressed size " + std::to_string(e.usize) +
                 " is impossible for " + std::to_string(e.csize) + " bytes of deflate data",
             error);
        return false;
      }
      if (!seen.insert(e.name).second) {
        fail(part, at, "duplicate entry name", error);
        return false;
      }
      entries.push_back(std::move(e));
      p += kCentralSize + nameLen + extraLen + commentLen;
    }
    return true;
  }
};

std::string keyOf(const std::string &entryName) {
  return endsWith(entryName, ".npy") ? entryName.substr(0, entryName.size() - 4) : entryName;
}

std::vector<std::string> keysOf(const ZipReader &z) {
  std::vector<std::string> keys;
  for (const ZipEntry &e : z.entries)
    keys.push_back(keyOf(e.name));
  return keys;
}

const ZipEntry *findEntry(const ZipReader &z, const std::string &key, std::string &error) {
  for (const ZipEntry &e : z.entries)
    if (e.name == key + ".npy")
      return &e;
  for (const ZipEntry &e : z.entries)
    if (e.name == key)
      return &e;
  error = z.file.path() + ": no array '" + key + "' in the npz archive; " + listKeys(keysOf(z));
  return nullptr;
}

bool readOneEntry(ZipReader &z, const ZipEntry &e, Array &out, std::string &error) {
  std::vector<uint8_t> data;
  uint64_t start;
  if (!z.readEntry(e, data, start, error))
    return false;
  return readNpyBufferAt(data.data(), data.size(), z.npyName(e), e.method == 0 ? start : 0, out,
                         error);
}

// ---- writer ----------------------------------------------------------------------

struct ByteSink {
  std::FILE *f = nullptr;
  uint64_t offset = 0;
  bool ok = true;
  int err = 0;
  void put(const void *p, size_t n) {
    if (!ok || n == 0)
      return;
    if (std::fwrite(p, 1, n, f) != n) {
      ok = false;
      err = errno ? errno : EIO;
    }
    offset += n;
  }
};

void put16(std::vector<uint8_t> &v, uint64_t x) {
  v.push_back(x & 0xFF);
  v.push_back((x >> 8) & 0xFF);
}
void put32(std::vector<uint8_t> &v, uint64_t x) {
  put16(v, x & 0xFFFF);
  put16(v, (x >> 16) & 0xFFFF);
}
void put64(std::vector<uint8_t> &v, uint64_t x) {
  put32(v, x & 0xFFFFFFFF);
  put32(v, x >> 32);
}

} // namespace

bool readNpzEntry(const std::string &path, const std::string &key, Array &out,
                  std::string &error) {
  ZipReader z;
  if (!z.open(path, error))
    return false;
  const ZipEntry *e = findEntry(z, key, error);
  return e && readOneEntry(z, *e, out, error);
}

bool readNpzHeader(const std::string &path, const std::string &key, ArrayHeader &out,
                   std::string &error) {
  ZipReader z;
  if (!z.open(path, error))
    return false;
  const ZipEntry *e = findEntry(z, key, error);
  if (!e)
    return false;
  uint64_t start;
  if (!z.dataStart(*e, start, error))
    return false;
  std::string name = z.npyName(*e);
  uint64_t base = e->method == 0 ? start : 0;
  std::vector<uint8_t> prefix;
  if (!z.readEntryPrefix(*e, start, 12, prefix, error))
    return false;
  uint64_t headerEnd;
  if (!npyHeaderEnd(prefix.data(), prefix.size(), e->usize, name, base, headerEnd, error))
    return false;
  if (!z.readEntryPrefix(*e, start, headerEnd, prefix, error))
    return false;
  NpyInfo info;
  if (!parseNpyHeader(prefix.data(), prefix.size(), e->usize, name, base, info, error))
    return false;
  out = info.header;
  return true;
}

bool writeNpzImpl(const std::string &path, const std::map<std::string, Array> &arrays,
                  bool forceZip64, std::string &error) {
  for (const auto &kv : arrays) {
    if (kv.first.empty() || kv.first.size() + 4 > 0xFFFF) {
      error = path + ": invalid npz key '" + kv.first + "' (empty or too long)";
      return false;
    }
  }
  errno = 0;
  ByteSink out;
  out.f = std::fopen(path.c_str(), "wb");
  if (!out.f) {
    error = "cannot create '" + path + "': " + std::strerror(errno ? errno : EIO);
    return false;
  }
  struct Written {
    std::string name;
    uint32_t crc;
    uint64_t size, offset;
    bool zip64;
  };
  std::vector<Written> written;
  const uint16_t kDosDate = (0 << 9) | (1 << 5) | 1; // 1980-01-01
  std::vector<uint8_t> npy, hdr;
  for (const auto &kv : arrays) {
    if (!encodeNpy(kv.second, npy, error)) {
      std::fclose(out.f);
      error = path + ": entry '" + kv.first + ".npy': " + error;
      return false;
    }
    Written w{kv.first + ".npy", crc32Of(npy.data(), npy.size()), npy.size(), out.offset, false};
    w.zip64 = forceZip64 || w.size >= 0xFFFFFFFF || w.offset >= 0xFFFFFFFF;
    hdr.clear();
    put32(hdr, kLocalSig);
    put16(hdr, w.zip64 ? 45 : 20);
    put16(hdr, 0); // flags
    put16(hdr, 0); // stored
    put16(hdr, 0); // time
    put16(hdr, kDosDate);
    put32(hdr, w.crc);
    put32(hdr, w.zip64 ? 0xFFFFFFFF : w.size);
    put32(hdr, w.zip64 ? 0xFFFFFFFF : w.size);
    put16(hdr, w.name.size());
    put16(hdr, w.zip64 ? 20 : 0);
    hdr.insert(hdr.end(), w.name.begin(), w.name.end());
    if (w.zip64) {
      put16(hdr, 0x0001);
      put16(hdr, 16);
      put64(hdr, w.size);
      put64(hdr, w.size);
    }
    out.put(hdr.data(), hdr.size());
    out.put(npy.data(), npy.size());
    written.push_back(std::move(w));
  }
  uint64_t cdOffset = out.offset;
  for (const Written &w : written) {
    hdr.clear();
    put32(hdr, kCentralSig);
    put16(hdr, (3 << 8) | (w.zip64 ? 45 : 20)); // made by: unix
    put16(hdr, w.zip64 ? 45 : 20);
    put16(hdr, 0);
    put16(hdr, 0);
    put16(hdr, 0);
    put16(hdr, kDosDate);
    put32(hdr, w.crc);
    put32(hdr, w.zip64 ? 0xFFFFFFFF : w.size);
    put32(hdr, w.zip64 ? 0xFFFFFFFF : w.size);
    put16(hdr, w.name.size());
    put16(hdr, w.zip64 ? 28 : 0);
    put16(hdr, 0); // comment
    put16(hdr, 0); // disk
    put16(hdr, 0); // internal attributes
    put32(hdr, 0100644u << 16);
    put32(hdr, w.zip64 ? 0xFFFFFFFF : w.offset);
    hdr.insert(hdr.end(), w.name.begin(), w.name.end());
    if (w.zip64) {
      put16(hdr, 0x0001);
      put16(hdr, 24);
      put64(hdr, w.size);
      put64(hdr, w.size);
      put64(hdr, w.offset);
    }
    out.put(hdr.data(), hdr.size());
  }
  uint64_t cdSize = out.offset - cdOffset;
  uint64_t count = written.size();
  bool zip64 = forceZip64 || count >= 0xFFFF || cdOffset >= 0xFFFFFFFF || cdSize >= 0xFFFFFFFF;
  hdr.clear();
  if (zip64) {
    uint64_t recPos = out.offset;
    put32(hdr, kZip64EocdSig);
    put64(hdr, kZip64EocdSize - 12);
    put16(hdr, (3 << 8) | 45);
    put16(hdr, 45);
    put32(hdr, 0);
    put32(hdr, 0);
    put64(hdr, count);
    put64(hdr, count);
    put64(hdr, cdSize);
    put64(hdr, cdOffset);
    put32(hdr, kZip64LocatorSig);
    put32(hdr, 0);
    put64(hdr, recPos);
    put32(hdr, 1);
  }
  put32(hdr, kEocdSig);
  put16(hdr, 0);
  put16(hdr, 0);
  put16(hdr, zip64 ? 0xFFFF : count);
  put16(hdr, zip64 ? 0xFFFF : count);
  put32(hdr, zip64 ? 0xFFFFFFFF : cdSize);
  put32(hdr, zip64 ? 0xFFFFFFFF : cdOffset);
  put16(hdr, 0);
  out.put(hdr.data(), hdr.size());
  int closeRc = std::fclose(out.f);
  if (!out.ok || closeRc != 0) {
    error = "cannot write '" + path + "': " + std::strerror(out.err ? out.err : errno ? errno : EIO);
    return false;
  }
  return true;
}

} // namespace detail

using namespace detail;

bool readNpz(const std::string &path, std::map<std::string, Array> &out, std::string &error) {
  ZipReader z;
  if (!z.open(path, error))
    return false;
  std::map<std::string, Array> result;
  for (const ZipEntry &e : z.entries) {
    if (!endsWith(e.name, ".npy")) {
      error = formatError(path, "zip central directory, entry '" + e.name + "'", e.cdPos,
                          "entry is not a .npy file (npz entries must end in .npy)");
      return false;
    }
    std::string key = keyOf(e.name);
    if (result.count(key)) {
      error = formatError(path, "zip central directory, entry '" + e.name + "'", e.cdPos,
                          "duplicate key '" + key + "'");
      return false;
    }
    if (!readOneEntry(z, e, result[key], error))
      return false;
  }
  out = std::move(result);
  return true;
}

bool writeNpz(const std::string &path, const std::map<std::string, Array> &arrays,
              std::string &error) {
  return writeNpzImpl(path, arrays, false, error);
}

} // namespace dlc::weights
