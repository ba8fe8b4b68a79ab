//===- Safetensors.cpp - .safetensors reading and writing -----------------===//
//
// Layout: 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...,
//    "__metadata__": {...}}
// then the data section; data_offsets are relative to its start (8 + N).
//
// Contains a small strict JSON parser (objects, arrays, strings with escapes,
// numbers, true/false/null) with a nesting limit, so hostile headers cannot
// exhaust the stack.
//
//===----------------------------------------------------------------------===//
#include "frontend/weights/ArrayFile.h"

#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

namespace dlc::weights {
namespace detail {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull * 1024 * 1024;
constexpr int kMaxDepth = 64;

// ---- JSON ---------------------------------------------------------------------------

struct JValue {
  enum Kind { Null, Bool, Int, Number, String, Array, Object } kind = Null;
  bool negative = false; // Int: sign
  uint64_t u = 0;        // Int: magnitude
  bool b = false;
  std::string s;
  std::vector<JValue> items;
  std::vector<std::pair<std::string, JValue>> members;
  bool itemsCapped = false; // Array: more than kMaxKeptItems items (the rest not kept)
  size_t pos = 0;           // offset of the value in the JSON text
};

// How much of a parsed value is kept in memory. Only what the safetensors
// schema needs is kept (root members, tensor fields, short arrays below
// them), so a hostile 100 MB header cannot make the parser allocate
// gigabytes of JValue nodes.
enum class Keep { All, Nothing, MetadataMap };
constexpr size_t kMaxKeptItems = 1024;

const char *kindName(JValue::Kind k) {
  switch (k) {
  case JValue::Null: return "null";
  case JValue::Bool: return "a boolean";
  case JValue::Int: return "an integer";
  case JValue::Number: return "a non-integer number";
  case JValue::String: return "a string";
  case JValue::Array: return "an array";
  case JValue::Object: return "an object";
  }
  return "?";
}

class JsonParser {
public:
  JsonParser(const char *s, size_t n) : s_(s), n_(n) {}
  size_t errorPos = 0;
  std::string errorMsg;
  bool errorIsSchema = false; // a __metadata__ type error rather than bad JSON

  bool parseDocument(JValue &v) {
    skipWs();
    if (!parseValue(v, 0, Keep::All))
      return false;
    skipWs();
    if (pos_ != n_)
      return fail(pos_, "unexpected characters after the JSON value");
    return true;
  }

private:
  const char *s_;
  size_t n_;
  size_t pos_ = 0;

  bool fail(size_t at, const std::string &msg) {
    errorPos = at;
    errorMsg = msg;
    return false;
  }
  std::string here() const {
    if (pos_ >= n_)
      return "end of header";
    unsigned char c = static_cast<unsigned char>(s_[pos_]);
    if (c >= 0x20 && c < 0x7f)
      return std::string("'") + static_cast<char>(c) + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
  }
  void skipWs() {
    while (pos_ < n_ && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool literal(const char *word) {
    size_t len = std::strlen(word);
    if (n_ - pos_ >= len && std::memcmp(s_ + pos_, word, len) == 0) {
      pos_ += len;
      return true;
    }
    return false;
  }
  bool parseValue(JValue &v, int depth, Keep keep) {
    if (depth > kMaxDepth)
      return fail(pos_, "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
    v.pos = pos_;
    if (pos_ >= n_)
      return fail(pos_, "expected a JSON value, found end of header");
    char c = s_[pos_];
    if (c == '{')
      return parseObject(v, depth, keep);
    if (c == '[')
      return parseArray(v, depth, keep);
    if (c == '"') {
      v.kind = JValue::String;
      return parseString(v.s);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(v);
    if (literal("true")) {
      v.kind = JValue::Bool;
      v.b = true;
      return true;
    }
    if (literal("false")) {
      v.kind = JValue::Bool;
      return true;
    }
    if (literal("null")) {
      v.kind = JValue::Null;
      return true;
    }
    return fail(pos_, "expected a JSON value, found " + here());
  }
  bool parseObject(JValue &v, int depth, Keep keep) {
    v.kind = JValue::Object;
    ++pos_; // '{'
    skipWs();
    if (pos_ < n_ && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    std::set<std::string> keys;
    while (true) {
      skipWs();
      size_t keyPos = pos_;
      if (pos_ >= n_ || s_[pos_] != '"')
        return fail(pos_, "expected a string key, found " + here());
      std::string key;
      if (!parseString(key))
        return false;
      if (keep == Keep::All && !keys.insert(key).second)
        return fail(keyPos, "duplicate key \"" + key + "\"");
      skipWs();
      if (pos_ >= n_ || s_[pos_] != ':')
        return fail(pos_, "expected ':', found " + here());
      ++pos_;
      skipWs();
      Keep childKeep = Keep::Nothing;
      if (keep == Keep::All && depth == 0 && key == "__metadata__")
        childKeep = Keep::MetadataMap;
      else if (keep == Keep::All &&
               (depth == 0 || (depth == 1 && (key == "dtype" || key == "shape" ||
                                              key == "data_offsets"))))
        childKeep = Keep::All;
      JValue scratch;
      JValue &child = childKeep == Keep::Nothing
                          ? scratch
                          : (v.members.emplace_back(key, JValue()), v.members.back().second);
      if (!parseValue(child, depth + 1, childKeep))
        return false;
      if (keep == Keep::MetadataMap && child.kind != JValue::String) {
        errorIsSchema = true;
        return fail(child.pos, "__metadata__ value for \"" + key + "\" must be a string, found " +
                                   kindName(child.kind));
      }
      skipWs();
      if (pos_ < n_ && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < n_ && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail(pos_, "expected ',' or '}', found " + here());
    }
  }
  bool parseArray(JValue &v, int depth, Keep keep) {
    v.kind = JValue::Array;
    ++pos_; // '['
    skipWs();
    if (pos_ < n_ && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skipWs();
      JValue scratch;
      bool kept = keep == Keep::All && depth <= 2 && v.items.size() < kMaxKeptItems;
      if (keep == Keep::All && depth <= 2 && !kept)
        v.itemsCapped = true;
      JValue &item = kept ? (v.items.emplace_back(), v.items.back()) : scratch;
      if (!parseValue(item, depth + 1, kept ? Keep::All : Keep::Nothing))
        return false;
      skipWs();
      if (pos_ < n_ && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < n_ && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail(pos_, "expected ',' or ']', found " + here());
    }
  }
  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool hex4(uint32_t &out) {
    if (n_ - pos_ < 4)
      return fail(pos_, "truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_ + i];
      uint32_t d;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else
        return fail(pos_ + i, "invalid hex digit in \\u escape");
      out = out * 16 + d;
    }
    pos_ += 4;
    return true;
  }
  bool parseString(std::string &out) {
    size_t start = pos_;
    ++pos_; // opening quote
    out.clear();
    while (true) {
      if (pos_ >= n_)
        return fail(start, "unterminated string");
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20)
        return fail(pos_, "unescaped control character in string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      size_t escPos = pos_;
      ++pos_;
      if (pos_ >= n_)
        return fail(start, "unterminated string");
      char e = s_[pos_++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return fail(escPos, "unpaired low surrogate in \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (n_ - pos_ < 2 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u')
            return fail(escPos, "unpaired high surrogate in \\u escape");
          pos_ += 2;
          if (!hex4(lo))
            return false;
          if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(escPos, "invalid surrogate pair in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return fail(escPos, std::string("invalid escape '\\") + e + "'");
      }
    }
  }
  bool parseNumber(JValue &v) {
    size_t start = pos_;
    v.kind = JValue::Int;
    if (s_[pos_] == '-') {
      v.negative = true;
      ++pos_;
    }
    if (pos_ >= n_ || !(s_[pos_] >= '0' && s_[pos_] <= '9'))
      return fail(start, "invalid number");
    if (s_[pos_] == '0' && pos_ + 1 < n_ && s_[pos_ + 1] >= '0' && s_[pos_ + 1] <= '9')
      return fail(start, "invalid number (leading zero)");
    bool overflow = false;
    while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9') {
      uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
      if (v.u > (std::numeric_limits<uint64_t>::max() - d) / 10)
        overflow = true;
      else
        v.u = v.u * 10 + d;
      ++pos_;
    }
    bool fractional = false;
    if (pos_ < n_ && s_[pos_] == '.') {
      fractional = true;
      ++pos_;
      if (pos_ >= n_ || !(s_[pos_] >= '0' && s_[pos_] <= '9'))
        return fail(start, "invalid number (digits expected after '.')");
      while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9')
        ++pos_;
    }
    if (pos_ < n_ && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      fractional = true;
      ++pos_;
      if (pos_ < n_ && (s_[pos_] == '+' || s_[pos_] == '-'))
        ++pos_;
      if (pos_ >= n_ || !(s_[pos_] >= '0' && s_[pos_] <= '9'))
        return fail(start, "invalid number (digits expected in exponent)");
      while (pos_ < n_ && s_[pos_] >= '0' && s_[pos_] <= '9')
        ++pos_;
    }
    if (fractional || overflow)
      v.kind = JValue::Number;
    return true;
  }
};

// ---- safetensors header ------------------------------------------------------------

struct DtypeName {
  const char *name;
  ElementType type;
};
const DtypeName kDtypes[] = {{"F64", ElementType::F64},   {"F32", ElementType::F32},
                             {"F16", ElementType::F16},   {"BF16", ElementType::BF16},
                             {"I64", ElementType::I64},   {"I32", ElementType::I32},
                             {"I8", ElementType::I8},     {"U8", ElementType::U8},
                             {"BOOL", ElementType::Bool}};

const char *dtypeName(ElementType t) {
  for (const DtypeName &d : kDtypes)
    if (d.type == t)
      return d.name;
  return "?";
}

struct TensorInfo {
  std::string name;
  ElementType type = ElementType::F32;
  std::string typeError; // non-empty: unsupported dtype (reported when the tensor is used)
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
  uint64_t pos = 0; // file offset of the tensor's JSON value
};

struct SafetensorsFile {
  InputFile file;
  uint64_t dataStart = 0;
  uint64_t dataSize = 0;
  std::vector<TensorInfo> tensors;

  bool open(const std::string &path, std::string &error) {
    if (!file.open(path, error))
      return false;
    uint64_t size = file.size();
    const std::string part = "safetensors header";
    if (size < 8) {
      error = formatError(path, part, 0,
                          "truncated: file has " + std::to_string(size) +
                              " bytes, needs at least 8 for the header length");
      return false;
    }
    uint8_t lenBytes[8];
    if (!file.readAt(0, 8, lenBytes, error))
      return false;
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
      n = (n << 8) | lenBytes[i];
    if (n > size - 8) {
      error = formatError(path, part, 0,
                          "truncated: header length " + std::to_string(n) +
                              " extends past the end of the file (" + std::to_string(size) +
                              " bytes, at most " + std::to_string(size - 8) + " available)");
      return false;
    }
    if (n > kMaxHeaderBytes) {
      error = formatError(path, part, 0,
                          "header length " + std::to_string(n) + " exceeds the " +
                              std::to_string(kMaxHeaderBytes) + "-byte limit");
      return false;
    }
    if (n < 2) {
      error = formatError(path, part, 8, "header of " + std::to_string(n) +
                                             " bytes cannot hold a JSON object");
      return false;
    }
    std::string json(static_cast<size_t>(n), '\0');
    if (!file.readAt(8, json.size(), &json[0], error))
      return false;
    dataStart = 8 + n;
    dataSize = size - dataStart;
    JsonParser parser(json.data(), json.size());
    JValue root;
    if (!parser.parseDocument(root)) {
      error = formatError(path, part, 8 + parser.errorPos,
                          (parser.errorIsSchema ? "" : "malformed JSON: ") + parser.errorMsg);
      return false;
    }
    if (root.kind != JValue::Object) {
      error = formatError(path, part, 8 + root.pos,
                          std::string("expected a JSON object, found ") + kindName(root.kind));
      return false;
    }
    for (const auto &m : root.members) {
      const JValue &v = m.second;
      if (m.first == "__metadata__") {
        if (v.kind != JValue::Object) {
          error = formatError(path, part, 8 + v.pos,
                              std::string("__metadata__ must be an object, found ") +
                                  kindName(v.kind));
          return false;
        }
        continue; // string values were checked while parsing
      }
      TensorInfo t;
      if (!parseTensor(m.first, v, t, error))
        return false;
      tensors.push_back(std::move(t));
    }
    return true;
  }

  bool parseTensor(const std::string &name, const JValue &v, TensorInfo &t, std::string &error) {
    const std::string &path = file.path();
    const std::string part = "safetensors header, tensor '" + name + "'";
    t.name = name;
    t.pos = 8 + v.pos;
    if (v.kind != JValue::Object) {
      error = formatError(path, part, t.pos,
                          std::string("expected an object, found ") + kindName(v.kind));
      return false;
    }
    const JValue *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (const auto &m : v.members) {
      if (m.first == "dtype")
        dtype = &m.second;
      else if (m.first == "shape")
        shape = &m.second;
      else if (m.first == "data_offsets")
        offsets = &m.second;
    }
    if (!dtype || !shape || !offsets) {
      error = formatError(path, part, t.pos,
                          std::string("missing \"") +
                              (!dtype ? "dtype" : !shape ? "shape" : "data_offsets") + "\"");
      return false;
    }
    if (dtype->kind != JValue::String) {
      error = formatError(path, part, 8 + dtype->pos,
                          std::string("\"dtype\" must be a string, found ") + kindName(dtype->kind));
      return false;
    }
    bool known = false;
    for (const DtypeName &d : kDtypes)
      if (dtype->s == d.name) {
        t.type = d.type;
        known = true;
      }
    if (!known)
      t.typeError = formatError(path, "tensor '" + name + "'", 8 + dtype->pos,
                                "dtype '" + dtype->s +
                                    "' is not supported (expected one of "
                                    "F64,F32,F16,BF16,I64,I32,I8,U8,BOOL)");
    if (shape->kind != JValue::Array) {
      error = formatError(path, part, 8 + shape->pos,
                          std::string("\"shape\" must be an array, found ") + kindName(shape->kind));
      return false;
    }
    if (shape->itemsCapped) {
      error = formatError(path, part, 8 + shape->pos,
                          "shape has more than " + std::to_string(kMaxKeptItems) + " dimensions");
      return false;
    }
    for (const JValue &d : shape->items) {
      if (d.kind != JValue::Int || d.negative ||
          d.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        error = formatError(path, part, 8 + d.pos,
                            "shape entries must be non-negative integers that fit in 64 bits");
        return false;
      }
      t.shape.push_back(static_cast<int64_t>(d.u));
    }
    if (offsets->kind != JValue::Array || offsets->items.size() != 2) {
      error = formatError(path, part, 8 + offsets->pos,
                          "\"data_offsets\" must be an array of two integers [begin, end]");
      return false;
    }
    for (const JValue &o : offsets->items)
      if (o.kind != JValue::Int || o.negative) {
        error = formatError(path, part, 8 + o.pos,
                            "data_offsets entries must be non-negative integers");
        return false;
      }
    t.begin = offsets->items[0].u;
    t.end = offsets->items[1].u;
    const std::string offs =
        "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
    if (t.end < t.begin) {
      error = formatError(path, part, 8 + offsets->pos, offs + ": end is before begin");
      return false;
    }
    if (t.end > dataSize) {
      error = formatError(path, "tensor '" + name + "'", 8 + offsets->pos,
                          offs + " extend past the end of the data section (" +
                              std::to_string(dataSize) + " bytes starting at byte " +
                              std::to_string(dataStart) + "; file has " +
                              std::to_string(file.size()) + " bytes)");
      return false;
    }
    if (known) {
      int64_t numel;
      uint64_t nbytes;
      if (!checkedSizes(t.shape, t.type, numel, nbytes)) {
        error = formatError(path, part, 8 + shape->pos,
                            "shape " + shapeToString(t.shape) + " of " + dtype->s +
                                " is too large (byte size overflows 64 bits)");
        return false;
      }
      if (t.end - t.begin != nbytes) {
        error = formatError(path, part, 8 + offsets->pos,
                            offs + " span " + std::to_string(t.end - t.begin) +
                                " bytes but shape " + shapeToString(t.shape) + " of " + dtype->s +
                                " needs " + std::to_string(nbytes));
        return false;
      }
    }
    return true;
  }

  const TensorInfo *find(const std::string &key, std::string &error) const {
    for (const TensorInfo &t : tensors)
      if (t.name == key)
        return &t;
    std::vector<std::string> keys;
    for (const TensorInfo &t : tensors)
      keys.push_back(t.name);
    error = file.path() + ": no tensor '" + key + "' in the safetensors file; " + listKeys(keys);
    return nullptr;
  }

  bool read(const TensorInfo &t, Array &out, std::string &error) {
    if (!t.typeError.empty()) {
      error = t.typeError;
      return false;
    }
    Array a;
    a.type = t.type;
    a.shape = t.shape;
    a.bytes.resize(static_cast<size_t>(t.end - t.begin));
    if (!file.readAt(dataStart + t.begin, a.bytes.size(), a.bytes.data(), error))
      return false;
    out = std::move(a);
    return true;
  }
};

void appendJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

} // namespace

bool readSafetensorsTensor(const std::string &path, const std::string &key, Array &out,
                           std::string &error) {
  SafetensorsFile f;
  if (!f.open(path, error))
    return false;
  const TensorInfo *t = f.find(key, error);
  return t && f.read(*t, out, error);
}

bool readSafetensorsHeader(const std::string &path, const std::string &key, ArrayHeader &out,
                           std::string &error) {
  SafetensorsFile f;
  if (!f.open(path, error))
    return false;
  const TensorInfo *t = f.find(key, error);
  if (!t)
    return false;
  if (!t->typeError.empty()) {
    error = t->typeError;
    return false;
  }
  out.type = t->type;
  out.shape = t->shape;
  return true;
}

} // namespace detail

using namespace detail;

bool readSafetensors(const std::string &path, std::map<std::string, Array> &out,
                     std::string &error) {
  SafetensorsFile f;
  if (!f.open(path, error))
    return false;
  std::map<std::string, Array> result;
  for (const TensorInfo &t : f.tensors)
    if (!f.read(t, result[t.name], error))
      return false;
  out = std::move(result);
  return true;
}

bool writeSafetensors(const std::string &path, const std::map<std::string, Array> &arrays,
                      std::string &error) {
  std::string json = "{";
  uint64_t offset = 0;
  bool first = true;
  for (const auto &kv : arrays) {
    const Array &a = kv.second;
    if (kv.first == "__metadata__") {
      error = path + ": '__metadata__' is reserved and cannot be a tensor name";
      return false;
    }
    int64_t numel;
    uint64_t nbytes;
    if (!checkedSizes(a.shape, a.type, numel, nbytes) || nbytes != a.bytes.size()) {
      error = path + ": tensor '" + kv.first + "': shape " + shapeToString(a.shape) + " of " +
              elementTypeName(a.type) + " does not match the " + std::to_string(a.bytes.size()) +
              " bytes of data";
      return false;
    }
    if (!first)
      json += ',';
    first = false;
    appendJsonString(json, kv.first);
    json += ":{\"dtype\":\"";
    json += dtypeName(a.type);
    json += "\",\"shape\":[";
    for (size_t i = 0; i < a.shape.size(); ++i) {
      if (i)
        json += ',';
      json += std::to_string(a.shape[i]);
    }
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(offset + nbytes) + "]}";
    offset += nbytes;
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');
  errno = 0;
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    error = "cannot create '" + path + "': " + std::strerror(errno ? errno : EIO);
    return false;
  }
  uint8_t len[8];
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<uint8_t>(n >> (8 * i));
  bool ok = std::fwrite(len, 1, 8, f) == 8 && std::fwrite(json.data(), 1, json.size(), f) == json.size();
  for (const auto &kv : arrays)
    if (ok && !kv.second.bytes.empty())
      ok = std::fwrite(kv.second.bytes.data(), 1, kv.second.bytes.size(), f) ==
           kv.second.bytes.size();
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

} // namespace dlc::weights
