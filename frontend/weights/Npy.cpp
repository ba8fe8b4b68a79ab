//===- Npy.cpp - element types, .npy format, shared helpers ---------------===//
#include "frontend/weights/ArrayFile.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dlc::weights assumes a little-endian host"
#endif

namespace dlc::weights {

// ---- element types -----------------------------------------------------------

const char *elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F64: return "f64";
  case ElementType::F32: return "f32";
  case ElementType::F16: return "f16";
  case ElementType::BF16: return "bf16";
  case ElementType::I64: return "i64";
  case ElementType::I32: return "i32";
  case ElementType::I8: return "i8";
  case ElementType::U8: return "u8";
  case ElementType::Bool: return "bool";
  }
  return "?";
}

bool parseElementTypeName(const std::string &name, ElementType &out) {
  static const ElementType all[] = {ElementType::F64, ElementType::F32, ElementType::F16,
                                    ElementType::BF16, ElementType::I64, ElementType::I32,
                                    ElementType::I8,  ElementType::U8,  ElementType::Bool};
  for (ElementType t : all)
    if (name == elementTypeName(t)) {
      out = t;
      return true;
    }
  return false;
}

size_t elementSize(ElementType type) {
  switch (type) {
  case ElementType::F64:
  case ElementType::I64: return 8;
  case ElementType::F32:
  case ElementType::I32: return 4;
  case ElementType::F16:
  case ElementType::BF16: return 2;
  case ElementType::I8:
  case ElementType::U8:
  case ElementType::Bool: return 1;
  }
  return 1;
}

// ---- half / bfloat16 ----------------------------------------------------------

namespace {
double decodeSmallFloat(uint16_t bits, int mantBits, int expBits) {
  int bias = (1 << (expBits - 1)) - 1;
  bool neg = (bits >> 15) & 1;
  int exp = (bits >> mantBits) & ((1 << expBits) - 1);
  int mant = bits & ((1 << mantBits) - 1);
  double v;
  if (exp == (1 << expBits) - 1)
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0)
    v = std::ldexp(static_cast<double>(mant), 1 - bias - mantBits);
  else
    v = std::ldexp(static_cast<double>(mant | (1 << mantBits)), exp - bias - mantBits);
  return neg ? -v : v;
}

// Round-to-nearest-even from double. All scalings are by powers of two and
// therefore exact; std::nearbyint rounds half to even in the default mode.
uint16_t encodeSmallFloat(double value, int mantBits, int expBits) {
  const int bias = (1 << (expBits - 1)) - 1;
  const uint16_t expMask = static_cast<uint16_t>(((1 << expBits) - 1) << mantBits);
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value))
    return static_cast<uint16_t>(sign | expMask | (1 << (mantBits - 1)));
  double a = std::fabs(value);
  if (std::isinf(a))
    return sign | expMask;
  if (a == 0)
    return sign;
  int ex;
  std::frexp(a, &ex);
  int e = ex - 1; // a in [2^e, 2^(e+1))
  if (e > bias)
    return sign | expMask;
  uint32_t bits;
  if (e < 1 - bias) { // subnormal (or rounds up to the smallest normal)
    double m = std::nearbyint(std::ldexp(a, bias - 1 + mantBits));
    bits = static_cast<uint32_t>(m);
  } else {
    double m = std::nearbyint(std::ldexp(a, mantBits - e)); // in [2^mb, 2^(mb+1)]
    bits = (static_cast<uint32_t>(e + bias) << mantBits) +
           (static_cast<uint32_t>(m) - (1u << mantBits));
  }
  if (bits >= expMask)
    return sign | expMask; // rounded up to infinity
  return static_cast<uint16_t>(sign | bits);
}

template <typename T> T loadLE(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void storeLE(uint8_t *p, T v) { std::memcpy(p, &v, sizeof(T)); }

template <typename T> T saturate(double v) {
  if (std::isnan(v))
    return 0;
  v = std::nearbyint(v);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  // 2^63 is exactly representable; anything >= it saturates.
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
} // namespace

double halfBitsToDouble(uint16_t bits) { return decodeSmallFloat(bits, 10, 5); }
uint16_t doubleToHalfBits(double value) { return encodeSmallFloat(value, 10, 5); }
double bf16BitsToDouble(uint16_t bits) { return decodeSmallFloat(bits, 7, 8); }
uint16_t doubleToBf16Bits(double value) { return encodeSmallFloat(value, 7, 8); }

// ---- Array --------------------------------------------------------------------

static int64_t shapeNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t ArrayHeader::numel() const { return shapeNumel(shape); }
int64_t Array::numel() const { return shapeNumel(shape); }

std::vector<double> Array::toDoubles() const {
  size_t es = elementSize(type);
  size_t n = bytes.size() / es;
  std::vector<double> out(n);
  const uint8_t *p = bytes.data();
  for (size_t i = 0; i < n; ++i, p += es) {
    switch (type) {
    case ElementType::F64: out[i] = loadLE<double>(p); break;
    case ElementType::F32: out[i] = loadLE<float>(p); break;
    case ElementType::F16: out[i] = halfBitsToDouble(loadLE<uint16_t>(p)); break;
    case ElementType::BF16: out[i] = bf16BitsToDouble(loadLE<uint16_t>(p)); break;
    case ElementType::I64: out[i] = static_cast<double>(loadLE<int64_t>(p)); break;
    case ElementType::I32: out[i] = loadLE<int32_t>(p); break;
    case ElementType::I8: out[i] = static_cast<int8_t>(*p); break;
    case ElementType::U8: out[i] = *p; break;
    case ElementType::Bool: out[i] = *p ? 1.0 : 0.0; break;
    }
  }
  return out;
}

Array Array::fromDoubles(ElementType type, std::vector<int64_t> shape,
                         const std::vector<double> &values) {
  int64_t numel;
  uint64_t nbytes;
  if (!detail::checkedSizes(shape, type, numel, nbytes))
    throw std::invalid_argument("Array::fromDoubles: invalid shape " +
                                detail::shapeToString(shape));
  if (static_cast<uint64_t>(numel) != values.size())
    throw std::invalid_argument("Array::fromDoubles: shape " + detail::shapeToString(shape) +
                                " has " + std::to_string(numel) + " elements, got " +
                                std::to_string(values.size()) + " values");
  Array a;
  a.type = type;
  a.shape = std::move(shape);
  size_t es = elementSize(type);
  a.bytes.resize(static_cast<size_t>(nbytes));
  uint8_t *p = a.bytes.data();
  for (size_t i = 0; i < values.size(); ++i, p += es) {
    double v = values[i];
    switch (type) {
    case ElementType::F64: storeLE<double>(p, v); break;
    case ElementType::F32: storeLE<float>(p, static_cast<float>(v)); break;
    case ElementType::F16: storeLE<uint16_t>(p, doubleToHalfBits(v)); break;
    case ElementType::BF16: storeLE<uint16_t>(p, doubleToBf16Bits(v)); break;
    case ElementType::I64: storeLE<int64_t>(p, saturate<int64_t>(v)); break;
    case ElementType::I32: storeLE<int32_t>(p, saturate<int32_t>(v)); break;
    case ElementType::I8: *p = static_cast<uint8_t>(saturate<int8_t>(v)); break;
    case ElementType::U8: *p = saturate<uint8_t>(v); break;
    case ElementType::Bool: *p = v != 0 ? 1 : 0; break; // NaN is true, as in numpy
    }
  }
  return a;
}

// ---- shared helpers ---------------------------------------------------------------

namespace detail {

std::string formatError(const std::string &name, const std::string &part, uint64_t offset,
                        const std::string &message) {
  return name + ": " + part + " at byte " + std::to_string(offset) + ": " + message;
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

bool checkedSizes(const std::vector<int64_t> &shape, ElementType type, int64_t &numel,
                  uint64_t &numBytes) {
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t n = 1;
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d == 0)
      zero = true;
  }
  if (!zero) {
    for (int64_t d : shape) {
      uint64_t ud = static_cast<uint64_t>(d);
      if (ud != 0 && n > limit / ud)
        return false;
      n *= ud;
    }
  } else {
    n = 0;
  }
  uint64_t es = elementSize(type);
  if (n > limit / es)
    return false;
  numel = static_cast<int64_t>(n);
  numBytes = n * es;
  if (numBytes > static_cast<uint64_t>(std::numeric_limits<size_t>::max()))
    return false;
  return true;
}

std::string listKeys(const std::vector<std::string> &keys) {
  if (keys.empty())
    return "the file contains no arrays";
  std::string s = "the keys are: ";
  size_t shown = std::min<size_t>(keys.size(), 10);
  for (size_t i = 0; i < shown; ++i) {
    if (i)
      s += ", ";
    s += "'" + keys[i] + "'";
  }
  if (shown < keys.size())
    s += ", ... (" + std::to_string(keys.size()) + " in total)";
  return s;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

InputFile::~InputFile() {
  if (file_)
    std::fclose(file_);
}

bool InputFile::open(const std::string &path, std::string &error) {
  path_ = path;
  errno = 0;
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) {
    error = "cannot open '" + path + "': " + std::strerror(errno ? errno : ENOENT);
    return false;
  }
  if (fseeko(file_, 0, SEEK_END) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno) + " (not seekable)";
    return false;
  }
  off_t end = ftello(file_);
  if (end < 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno) + " (cannot determine size)";
    return false;
  }
  size_ = static_cast<uint64_t>(end);
  return true;
}

bool InputFile::readAt(uint64_t offset, size_t n, void *dst, std::string &error) {
  if (n == 0)
    return true;
  if (offset > size_ || n > size_ - offset) {
    error = formatError(path_, "read", offset,
                        "range of " + std::to_string(n) + " bytes is past the end of the file (" +
                            std::to_string(size_) + " bytes)");
    return false;
  }
  if (fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0 ||
      std::fread(dst, 1, n, file_) != n) {
    error = formatError(path_, "read", offset,
                        "I/O error reading " + std::to_string(n) + " bytes: " +
                            std::strerror(errno ? errno : EIO));
    return false;
  }
  return true;
}

bool writeWholeFile(const std::string &path, const std::vector<uint8_t> &bytes,
                    std::string &error) {
  errno = 0;
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    error = "cannot create '" + path + "': " + std::strerror(errno ? errno : EIO);
    return false;
  }
  bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  int saved = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    error = "cannot write '" + path + "': " + std::strerror(saved ? saved : EIO);
    return false;
  }
  return true;
}

// ---- npy header parsing -----------------------------------------------------------

namespace {

const char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

// Recursive-descent reader for the Python-literal dict of an npy header.
struct DictParser {
  const char *s;
  size_t n;
  size_t pos = 0;
  uint64_t base; // file offset of s[0]
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

bool descrToType(const std::string &descr, ElementType &type, bool &bigEndian, std::string &why) {
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
    ElementType type;
  };
  static const Entry table[] = {{"f8", ElementType::F64}, {"f4", ElementType::F32},
                                {"f2", ElementType::F16}, {"i8", ElementType::I64},
                                {"i4", ElementType::I32}, {"i1", ElementType::I8},
                                {"u1", ElementType::U8},  {"b1", ElementType::Bool}};
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

const char *typeToDescr(ElementType type) {
  switch (type) {
  case ElementType::F64: return "<f8";
  case ElementType::F32: return "<f4";
  case ElementType::F16: return "<f2";
  case ElementType::I64: return "<i8";
  case ElementType::I32: return "<i4";
  case ElementType::I8: return "|i1";
  case ElementType::U8: return "|u1";
  case ElementType::Bool: return "|b1";
  case ElementType::BF16: return nullptr;
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

bool npyHeaderEnd(const uint8_t *data, size_t avail, uint64_t totalSize, const std::string &name,
                  uint64_t base, uint64_t &headerEnd, std::string &error) {
  if (totalSize < 10 || avail < 10) {
    if (totalSize >= 6 && avail >= 6 && std::memcmp(data, kNpyMagic, 6) != 0) {
      error = formatError(name, "npy header", base, "bad magic (not an .npy file)");
      return false;
    }
    error = formatError(name, "npy header", base,
                        "truncated: an npy file needs at least 10 bytes, have " +
                            std::to_string(totalSize));
    return false;
  }
  if (std::memcmp(data, kNpyMagic, 6) != 0) {
    error = formatError(name, "npy header", base,
                        "bad magic (expected \\x93NUMPY, not an .npy file)");
    return false;
  }
  uint8_t major = data[6], minor = data[7];
  if (major < 1 || major > 3 || minor != 0) {
    error = formatError(name, "npy header", base + 6,
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
      error = formatError(name, "npy header", base + 8,
                          "truncated: header length field needs 4 bytes, file has " +
                              std::to_string(totalSize));
      return false;
    }
    hl = loadLE<uint32_t>(data + 8);
    hs = 12;
  }
  if (hl > totalSize - hs) {
    error = formatError(name, "npy header", base + 8,
                        "truncated: header length " + std::to_string(hl) + " at byte " +
                            std::to_string(base + hs) + " extends past the end (" +
                            std::to_string(totalSize) + " bytes)");
    return false;
  }
  headerEnd = hs + hl;
  return true;
}

bool parseNpyHeader(const uint8_t *data, size_t avail, uint64_t totalSize, const std::string &name,
                    uint64_t base, NpyInfo &info, std::string &error) {
  uint64_t headerEnd;
  if (!npyHeaderEnd(data, avail, totalSize, name, base, headerEnd, error))
    return false;
  if (avail < headerEnd) {
    error = formatError(name, "npy header", base, "internal: header not fully available");
    return false;
  }
  size_t hs = data[6] == 1 ? 10 : 12;
  DictParser p{reinterpret_cast<const char *>(data) + hs, static_cast<size_t>(headerEnd - hs), 0,
               base + hs, name, error};
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
  if (!descrToType(descr, info.header.type, info.bigEndian, why))
    return p.fail(descrPos, why);
  int64_t numel;
  if (!checkedSizes(info.header.shape, info.header.type, numel, info.dataBytes))
    return p.fail(0, "shape " + shapeToString(info.header.shape) + " of " +
                         elementTypeName(info.header.type) +
                         " is too large (byte size overflows 64 bits)");
  info.dataOffset = headerEnd;
  uint64_t have = totalSize - headerEnd;
  if (have < info.dataBytes) {
    error = name + ": truncated: data needs " + std::to_string(info.dataBytes) + " bytes at byte " +
            std::to_string(base + headerEnd) + " (up to byte " +
            std::to_string(base + headerEnd + info.dataBytes) + "), but only " +
            std::to_string(have) + " are there" +
            (base == 0 ? " (the file has " + std::to_string(totalSize) + " bytes)" : "");
    return false;
  }
  if (have > info.dataBytes) {
    error = formatError(name, "npy data", base + headerEnd + info.dataBytes,
                        std::to_string(have - info.dataBytes) +
                            " unexpected trailing bytes after the " +
                            std::to_string(info.dataBytes) + " bytes of data for shape " +
                            shapeToString(info.header.shape) + " " +
                            elementTypeName(info.header.type));
    return false;
  }
  return true;
}

void decodeNpyData(const NpyInfo &info, const uint8_t *data, Array &out) {
  out.type = info.header.type;
  out.shape = info.header.shape;
  size_t es = elementSize(out.type);
  size_t count = static_cast<size_t>(info.dataBytes / es);
  const auto &shape = out.shape;
  if (!info.fortranOrder || shape.size() < 2 || count == 0) {
    out.bytes.assign(data, data + info.dataBytes);
  } else {
    out.bytes.resize(static_cast<size_t>(info.dataBytes));
    size_t rank = shape.size();
    std::vector<uint64_t> fstride(rank);
    uint64_t s = 1;
    for (size_t k = 0; k < rank; ++k) {
      fstride[k] = s;
      s *= static_cast<uint64_t>(shape[k]);
    }
    std::vector<int64_t> idx(rank, 0);
    uint64_t src = 0;
    uint8_t *dst = out.bytes.data();
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
    byteSwapInPlace(out.bytes.data(), count, es);
}

bool readNpyBufferAt(const uint8_t *data, size_t size, const std::string &name, uint64_t base,
                     Array &out, std::string &error) {
  NpyInfo info;
  if (!parseNpyHeader(data, size, size, name, base, info, error))
    return false;
  decodeNpyData(info, data + info.dataOffset, out);
  return true;
}

static bool validateArray(const Array &a, const std::string &what, std::string &error) {
  int64_t numel;
  uint64_t nbytes;
  if (!checkedSizes(a.shape, a.type, numel, nbytes)) {
    error = what + ": invalid shape " + shapeToString(a.shape) + " (negative or overflowing)";
    return false;
  }
  if (nbytes != a.bytes.size()) {
    error = what + ": shape " + shapeToString(a.shape) + " of " + elementTypeName(a.type) +
            " needs " + std::to_string(nbytes) + " bytes but the array holds " +
            std::to_string(a.bytes.size());
    return false;
  }
  return true;
}

} // namespace detail

using namespace detail;

bool readNpyBuffer(const uint8_t *data, size_t size, const std::string &name, Array &out,
                   std::string &error) {
  return readNpyBufferAt(data, size, name, 0, out, error);
}

bool readNpy(const std::string &path, Array &out, std::string &error) {
  InputFile f;
  if (!f.open(path, error))
    return false;
  // Parse the header first so a hostile size never turns into an allocation.
  uint8_t pre[12];
  size_t preLen = static_cast<size_t>(std::min<uint64_t>(f.size(), 12));
  if (!f.readAt(0, preLen, pre, error))
    return false;
  uint64_t headerEnd;
  if (!npyHeaderEnd(pre, preLen, f.size(), path, 0, headerEnd, error))
    return false;
  std::vector<uint8_t> head(static_cast<size_t>(headerEnd));
  if (!f.readAt(0, head.size(), head.data(), error))
    return false;
  NpyInfo info;
  if (!parseNpyHeader(head.data(), head.size(), f.size(), path, 0, info, error))
    return false;
  std::vector<uint8_t> raw(static_cast<size_t>(info.dataBytes));
  if (!f.readAt(info.dataOffset, raw.size(), raw.data(), error))
    return false;
  if (!info.fortranOrder && !info.bigEndian) {
    out.type = info.header.type;
    out.shape = info.header.shape;
    out.bytes = std::move(raw);
    return true;
  }
  decodeNpyData(info, raw.data(), out);
  return true;
}

bool encodeNpy(const Array &array, std::vector<uint8_t> &out, std::string &error) {
  if (!validateArray(array, "npy", error))
    return false;
  const char *descr = typeToDescr(array.type);
  if (!descr) {
    error = "npy: element type bf16 cannot be stored in .npy (numpy has no bfloat16 dtype); "
            "use .safetensors or convert to f32";
    return false;
  }
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': " + shapeToString(array.shape) + ", }";
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
  out.clear();
  out.reserve(padded + array.bytes.size());
  out.insert(out.end(), kNpyMagic, kNpyMagic + 6);
  out.push_back(preamble == 10 ? 1 : 2);
  out.push_back(0);
  uint32_t hl = static_cast<uint32_t>(dict.size());
  out.push_back(hl & 0xFF);
  out.push_back((hl >> 8) & 0xFF);
  if (preamble == 12) {
    out.push_back((hl >> 16) & 0xFF);
    out.push_back((hl >> 24) & 0xFF);
  }
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), array.bytes.begin(), array.bytes.end());
  return true;
}

bool writeNpy(const std::string &path, const Array &array, std::string &error) {
  std::vector<uint8_t> bytes;
  if (!encodeNpy(array, bytes, error)) {
    error = path + ": " + error;
    return false;
  }
  return writeWholeFile(path, bytes, error);
}

// ---- generic entry points -----------------------------------------------------------

static bool npyReadHeaderOnly(const std::string &path, ArrayHeader &out, std::string &error) {
  InputFile f;
  if (!f.open(path, error))
    return false;
  uint8_t pre[12];
  size_t preLen = static_cast<size_t>(std::min<uint64_t>(f.size(), 12));
  if (!f.readAt(0, preLen, pre, error))
    return false;
  uint64_t headerEnd;
  if (!npyHeaderEnd(pre, preLen, f.size(), path, 0, headerEnd, error))
    return false;
  std::vector<uint8_t> head(static_cast<size_t>(headerEnd));
  if (!f.readAt(0, head.size(), head.data(), error))
    return false;
  NpyInfo info;
  if (!parseNpyHeader(head.data(), head.size(), f.size(), path, 0, info, error))
    return false;
  out = info.header;
  return true;
}

namespace {
enum class Format { Npy, Npz, Safetensors, Unknown };
Format formatOf(const std::string &path) {
  std::string lower;
  for (char c : path)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (endsWith(lower, ".npy"))
    return Format::Npy;
  if (endsWith(lower, ".npz"))
    return Format::Npz;
  if (endsWith(lower, ".safetensors"))
    return Format::Safetensors;
  return Format::Unknown;
}
std::string extensionOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return "";
  return path.substr(dot);
}
bool unknownFormat(const std::string &path, std::string &error) {
  std::string ext = extensionOf(path);
  error = path + ": unknown weight file extension " +
          (ext.empty() ? std::string("(none)") : "'" + ext + "'") +
          " (expected .npy, .npz or .safetensors)";
  return false;
}
bool npyKeyMustBeEmpty(const std::string &path, const std::string &key, std::string &error) {
  if (key.empty())
    return true;
  error = path + ": a .npy file holds a single array; key '" + key +
          "' must be empty";
  return false;
}
} // namespace

bool readHeader(const std::string &path, const std::string &key, ArrayHeader &out,
                std::string &error) {
  switch (formatOf(path)) {
  case Format::Npy:
    return npyKeyMustBeEmpty(path, key, error) && npyReadHeaderOnly(path, out, error);
  case Format::Npz: return readNpzHeader(path, key, out, error);
  case Format::Safetensors: return readSafetensorsHeader(path, key, out, error);
  case Format::Unknown: break;
  }
  return unknownFormat(path, error);
}

bool readArray(const std::string &path, const std::string &key, Array &out, std::string &error) {
  switch (formatOf(path)) {
  case Format::Npy: return npyKeyMustBeEmpty(path, key, error) && readNpy(path, out, error);
  case Format::Npz: return readNpzEntry(path, key, out, error);
  case Format::Safetensors: return readSafetensorsTensor(path, key, out, error);
  case Format::Unknown: break;
  }
  return unknownFormat(path, error);
}

} // namespace dlc::weights
