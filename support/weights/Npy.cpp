//===- Npy.cpp - the .npy format ------------------------------------------===//
//
// An .npy image is a magic string, a version, a header (a Python dict
// literal: descr, fortran_order, shape) padded to a multiple of 64 bytes,
// then the raw data. The header is parsed here by a small recursive-descent
// reader: there is no library for NumPy's dict literal.
//
//===----------------------------------------------------------------------===//

#include "support/weights/Internal.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace dlc::weights {
namespace detail {
namespace {

const char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

template <typename T> T loadLE(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Recursive-descent reader for the Python-literal dict of an npy header.
struct DictParser {
  const char *s;
  size_t n;
  size_t pos = 0;
  uint64_t base; // offset of s[0] in the npy image
  const std::string &name;
  std::string &error;

  bool fail(size_t at, const std::string &msg) {
    error = formatError(name, "npy header", base + at, msg);
    return false;
  }
  void skipWs() {
    while (pos < n && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  bool expect(char c) {
    skipWs();
    if (pos >= n)
      return fail(pos, std::string("expected '") + c + "' but the header ends");
    if (s[pos] != c)
      return fail(pos, std::string("expected '") + c + "', found '" + s[pos] + "'");
    ++pos;
    return true;
  }
  bool parseString(std::string &out) {
    skipWs();
    if (pos >= n || (s[pos] != '\'' && s[pos] != '"'))
      return fail(pos, "expected a quoted string");
    char q = s[pos++];
    size_t start = pos - 1;
    out.clear();
    while (pos < n && s[pos] != q) {
      if (s[pos] == '\\' && pos + 1 < n)
        ++pos;
      out += s[pos++];
    }
    if (pos >= n)
      return fail(start, "unterminated string");
    ++pos;
    return true;
  }
  bool parseBool(bool &out) {
    skipWs();
    if (n - pos >= 4 && std::strncmp(s + pos, "True", 4) == 0) {
      pos += 4;
      out = true;
      return true;
    }
    if (n - pos >= 5 && std::strncmp(s + pos, "False", 5) == 0) {
      pos += 5;
      out = false;
      return true;
    }
    return fail(pos, "expected True or False");
  }
  bool parseShape(std::vector<int64_t> &shape) {
    skipWs();
    if (pos >= n || (s[pos] != '(' && s[pos] != '['))
      return fail(pos, "expected a shape tuple such as (2, 3)");
    char close = s[pos] == '(' ? ')' : ']';
    ++pos;
    shape.clear();
    while (true) {
      skipWs();
      if (pos >= n)
        return fail(pos, "unterminated shape tuple");
      if (s[pos] == close) {
        ++pos;
        return true;
      }
      size_t start = pos;
      if (s[pos] == '-')
        return fail(pos, "negative dimension in shape");
      if (!(s[pos] >= '0' && s[pos] <= '9'))
        return fail(pos, std::string("expected a dimension, found '") + s[pos] + "'");
      uint64_t v = 0;
      while (pos < n && s[pos] >= '0' && s[pos] <= '9') {
        uint64_t digit = static_cast<uint64_t>(s[pos] - '0');
        if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10)
          return fail(start, "dimension does not fit in 64 bits");
        v = v * 10 + digit;
        ++pos;
      }
      if (pos < n && (s[pos] == 'L' || s[pos] == 'l')) // Python 2 long suffix
        ++pos;
      shape.push_back(static_cast<int64_t>(v));
      skipWs();
      if (pos < n && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < n && s[pos] == close)
        continue;
      if (pos >= n)
        return fail(pos, "unterminated shape tuple");
      return fail(pos, std::string("expected ',' or '") + close + "' in shape, found '" + s[pos] +
                           "'");
    }
  }
};

bool descrToType(const std::string &descr, DType &type, bool &bigEndian, std::string &why) {
  static const char *kExpected =
      "expected one of f8,f4,f2,i8,i4,i1,u1,b1, bf16 not in npy";
  if (descr.size() < 2) {
    why = "dtype '" + descr + "' is not supported (" + kExpected + ")";
    return false;
  }
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order != '<' && order != '>' && order != '=' && order != '|') {
    // numpy always writes a byte-order character, but accept a bare code.
    order = '=';
    code = descr;
  }
  struct Entry {
    const char *code;
    DType type;
  };
  static const Entry table[] = {{"f8", DType::F64}, {"f4", DType::F32}, {"f2", DType::F16},
                                {"i8", DType::I64}, {"i4", DType::I32}, {"i1", DType::I8},
                                {"u1", DType::U8},  {"b1", DType::I1}};
  for (const Entry &e : table) {
    if (code != e.code)
      continue;
    type = e.type;
    if (elementSize(type) == 1) {
      bigEndian = false; // byte order is irrelevant
      return true;
    }
    if (order == '|') {
      why = "dtype '" + descr + "' has byte order '|' (not applicable) for a " +
            std::to_string(elementSize(type)) + "-byte type";
      return false;
    }
    bigEndian = order == '>';
    return true;
  }
  why = "dtype '" + descr + "' is not supported (" + kExpected + ")";
  return false;
}

const char *typeToDescr(DType type) {
  switch (type) {
  case DType::F64: return "<f8";
  case DType::F32: return "<f4";
  case DType::F16: return "<f2";
  case DType::I64: return "<i8";
  case DType::I32: return "<i4";
  case DType::I8: return "|i1";
  case DType::U8: return "|u1";
  case DType::I1: return "|b1";
  case DType::BF16: return nullptr;
  }
  return nullptr;
}

void byteSwapInPlace(uint8_t *p, size_t count, size_t es) {
  if (es == 1)
    return;
  for (size_t i = 0; i < count; ++i, p += es)
    for (size_t a = 0, b = es - 1; a < b; ++a, --b)
      std::swap(p[a], p[b]);
}

} // namespace

bool npyHeaderEnd(const uint8_t *data, size_t avail, uint64_t totalSize,
                  const std::string &name, uint64_t &headerEnd, std::string &error) {
  if (totalSize < 10 || avail < 10) {
    if (totalSize >= 6 && avail >= 6 && std::memcmp(data, kNpyMagic, 6) != 0) {
      error = formatError(name, "npy header", 0, "bad magic (not an .npy file)");
      return false;
    }
    error = formatError(name, "npy header", 0,
                        "truncated: an npy file needs at least 10 bytes, have " +
                            std::to_string(totalSize));
    return false;
  }
  if (std::memcmp(data, kNpyMagic, 6) != 0) {
    error = formatError(name, "npy header", 0,
                        "bad magic (expected \\x93NUMPY, not an .npy file)");
    return false;
  }
  uint8_t major = data[6], minor = data[7];
  if (major < 1 || major > 3 || minor != 0) {
    error = formatError(name, "npy header", 6,
                        "unsupported npy format version " + std::to_string(major) + "." +
                            std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
    return false;
  }
  uint64_t hl, hs;
  if (major == 1) {
    hl = loadLE<uint16_t>(data + 8);
    hs = 10;
  } else {
    if (totalSize < 12 || avail < 12) {
      error = formatError(name, "npy header", 8,
                          "truncated: header length field needs 4 bytes, file has " +
                              std::to_string(totalSize));
      return false;
    }
    hl = loadLE<uint32_t>(data + 8);
    hs = 12;
  }
  if (hl > totalSize - hs) {
    error = formatError(name, "npy header", 8,
                        "truncated: header length " + std::to_string(hl) + " at byte " +
                            std::to_string(hs) + " extends past the end (" +
                            std::to_string(totalSize) + " bytes)");
    return false;
  }
  headerEnd = hs + hl;
  return true;
}

bool parseNpyHeader(const uint8_t *data, size_t avail, uint64_t totalSize,
                    const std::string &name, NpyInfo &info, std::string &error) {
  uint64_t headerEnd;
  if (!npyHeaderEnd(data, avail, totalSize, name, headerEnd, error))
    return false;
  if (avail < headerEnd) {
    error = formatError(name, "npy header", 0, "internal: header not fully available");
    return false;
  }
  size_t hs = data[6] == 1 ? 10 : 12;
  DictParser p{reinterpret_cast<const char *>(data) + hs, static_cast<size_t>(headerEnd - hs), 0,
               hs, name, error};
  bool haveDescr = false, haveFortran = false, haveShape = false;
  std::string descr;
  size_t descrPos = 0;
  if (!p.expect('{'))
    return false;
  while (true) {
    p.skipWs();
    if (p.pos < p.n && p.s[p.pos] == '}') {
      ++p.pos;
      break;
    }
    size_t keyPos = p.pos;
    std::string key;
    if (!p.parseString(key) || !p.expect(':'))
      return false;
    if (key == "descr") {
      if (haveDescr)
        return p.fail(keyPos, "duplicate key 'descr'");
      haveDescr = true;
      p.skipWs();
      descrPos = p.pos;
      if (p.pos < p.n && p.s[p.pos] == '[')
        return p.fail(p.pos, "structured dtypes are not supported");
      if (!p.parseString(descr))
        return false;
    } else if (key == "fortran_order") {
      if (haveFortran)
        return p.fail(keyPos, "duplicate key 'fortran_order'");
      haveFortran = true;
      if (!p.parseBool(info.fortranOrder))
        return false;
    } else if (key == "shape") {
      if (haveShape)
        return p.fail(keyPos, "duplicate key 'shape'");
      haveShape = true;
      if (!p.parseShape(info.header.shape))
        return false;
    } else {
      return p.fail(keyPos, "unexpected key '" + key +
                                "' (expected 'descr', 'fortran_order' and 'shape')");
    }
    p.skipWs();
    if (p.pos < p.n && p.s[p.pos] == ',') {
      ++p.pos;
      continue;
    }
    if (!p.expect('}'))
      return false;
    break;
  }
  p.skipWs();
  while (p.pos < p.n && p.s[p.pos] == '\0') // some writers pad with NULs
    ++p.pos;
  p.skipWs();
  if (p.pos != p.n)
    return p.fail(p.pos, "unexpected characters after the header dict");
  if (!haveDescr || !haveFortran || !haveShape)
    return p.fail(0, std::string("header dict lacks key '") +
                         (!haveDescr ? "descr" : !haveFortran ? "fortran_order" : "shape") + "'");
  std::string why;
  if (!descrToType(descr, info.header.dtype, info.bigEndian, why))
    return p.fail(descrPos, why);
  int64_t numel;
  if (!checkedSizes(info.header.dtype, info.header.shape, numel, info.dataBytes))
    return p.fail(0, "shape " + tupleString(info.header.shape) + " of " +
                         dtypeName(info.header.dtype) +
                         " is too large (byte size overflows 64 bits)");
  info.dataOffset = headerEnd;
  uint64_t have = totalSize - headerEnd;
  if (have < info.dataBytes) {
    error = name + ": truncated: data needs " + std::to_string(info.dataBytes) + " bytes at byte " +
            std::to_string(headerEnd) + " (up to byte " +
            std::to_string(headerEnd + info.dataBytes) + "), but only " +
            std::to_string(have) + " are there (the file has " + std::to_string(totalSize) +
            " bytes)";
    return false;
  }
  if (have > info.dataBytes) {
    error = formatError(name, "npy data", headerEnd + info.dataBytes,
                        std::to_string(have - info.dataBytes) +
                            " unexpected trailing bytes after the " +
                            std::to_string(info.dataBytes) + " bytes of data for shape " +
                            tupleString(info.header.shape) + " " +
                            dtypeName(info.header.dtype));
    return false;
  }
  return true;
}

HostTensor decodeNpyData(const NpyInfo &info, const uint8_t *data) {
  const std::vector<int64_t> &shape = info.header.shape;
  size_t es = elementSize(info.header.dtype);
  size_t count = static_cast<size_t>(info.dataBytes / es);
  std::vector<uint8_t> bytes;
  if (!info.fortranOrder || shape.size() < 2 || count == 0) {
    bytes.assign(data, data + info.dataBytes);
  } else {
    bytes.resize(static_cast<size_t>(info.dataBytes));
    size_t rank = shape.size();
    std::vector<uint64_t> fstride(rank);
    uint64_t s = 1;
    for (size_t k = 0; k < rank; ++k) {
      fstride[k] = s;
      s *= static_cast<uint64_t>(shape[k]);
    }
    std::vector<int64_t> idx(rank, 0);
    uint64_t src = 0;
    uint8_t *dst = bytes.data();
    for (size_t i = 0; i < count; ++i, dst += es) {
      std::memcpy(dst, data + src * es, es);
      // increment the C-order multi-index (last dim fastest)
      for (size_t k = rank; k-- > 0;) {
        if (++idx[k] < shape[k]) {
          src += fstride[k];
          break;
        }
        src -= fstride[k] * static_cast<uint64_t>(shape[k] - 1);
        idx[k] = 0;
      }
    }
  }
  if (info.bigEndian)
    byteSwapInPlace(bytes.data(), count, es);
  return HostTensor(info.header.dtype, shape, std::move(bytes));
}

/// Reads and parses the header of the .npy file `f`, never allocating more
/// than the header itself before the sizes have been checked.
static bool readNpyInfo(InputFile &f, NpyInfo &info, std::string &error) {
  uint8_t pre[12];
  size_t preLen = static_cast<size_t>(std::min<uint64_t>(f.size(), 12));
  if (!f.readAt(0, preLen, pre, error))
    return false;
  uint64_t headerEnd;
  if (!npyHeaderEnd(pre, preLen, f.size(), f.path(), headerEnd, error))
    return false;
  std::vector<uint8_t> head(static_cast<size_t>(headerEnd));
  return f.readAt(0, head.size(), head.data(), error) &&
         parseNpyHeader(head.data(), head.size(), f.size(), f.path(), info, error);
}

bool readNpyHeader(const std::string &path, TensorHeader &out, std::string &error) {
  InputFile f;
  NpyInfo info;
  if (!f.open(path, error) || !readNpyInfo(f, info, error))
    return false;
  out = info.header;
  return true;
}

bool encodeNpyHeader(const HostTensor &tensor, std::vector<uint8_t> &out,
                     std::string &error) {
  const char *descr = typeToDescr(tensor.dtype());
  if (!descr) {
    error = "npy: element type bf16 cannot be stored in .npy (numpy has no bfloat16 dtype); "
            "use .safetensors or convert to f32";
    return false;
  }
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': " + tupleString(tensor.shape()) +
                     ", }";
  // numpy: total header (preamble + dict + padding + '\n') is a multiple of 64.
  size_t preamble = 10;
  size_t total = preamble + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  if (padded - preamble > 0xFFFF) {
    preamble = 12;
    total = preamble + dict.size() + 1;
    padded = (total + 63) / 64 * 64;
  }
  dict.append(padded - total, ' ');
  dict += '\n';
  out.assign(kNpyMagic, kNpyMagic + 6);
  out.push_back(preamble == 10 ? 1 : 2);
  out.push_back(0);
  uint32_t hl = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < preamble - 8; ++i)
    out.push_back(static_cast<uint8_t>(hl >> (8 * i)));
  out.insert(out.end(), dict.begin(), dict.end());
  return true;
}

} // namespace detail

using namespace detail;

bool readNpyBuffer(const uint8_t *data, size_t size, const std::string &name,
                   HostTensor &out, std::string &error) {
  NpyInfo info;
  if (!parseNpyHeader(data, size, size, name, info, error))
    return false;
  out = decodeNpyData(info, data + info.dataOffset);
  return true;
}

bool readNpy(const std::string &path, HostTensor &out, std::string &error) {
  InputFile f;
  NpyInfo info;
  if (!f.open(path, error) || !readNpyInfo(f, info, error))
    return false;
  std::vector<uint8_t> raw(static_cast<size_t>(info.dataBytes));
  if (!f.readAt(info.dataOffset, raw.size(), raw.data(), error))
    return false;
  if (!info.fortranOrder && !info.bigEndian)
    out = HostTensor(info.header.dtype, info.header.shape, std::move(raw));
  else
    out = decodeNpyData(info, raw.data());
  return true;
}

bool encodeNpy(const HostTensor &tensor, std::vector<uint8_t> &out, std::string &error) {
  if (!encodeNpyHeader(tensor, out, error))
    return false;
  out.insert(out.end(), tensor.data(), tensor.data() + tensor.byteSize());
  return true;
}

bool writeNpy(const std::string &path, const HostTensor &tensor, std::string &error) {
  std::vector<uint8_t> bytes;
  if (!encodeNpy(tensor, bytes, error)) {
    error = path + ": " + error;
    return false;
  }
  return writeWholeFile(path, bytes, error);
}

} // namespace dlc::weights
