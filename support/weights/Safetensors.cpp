//===- Safetensors.cpp - the .safetensors format --------------------------===//
//
// Layout: 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...,
//    "__metadata__": {"key": "string value", ...}}
// then the data section; data_offsets are relative to its start (8 + N).
//
// nlohmann-json parses the header through a SAX handler, which keeps only
// what the schema needs (so a hostile 100 MB header cannot make us allocate
// a document tree many times its size), bounds the nesting, and notes where
// each value starts, so that errors give its byte offset in the file.
//
//===----------------------------------------------------------------------===//

#include "support/weights/Internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <set>

namespace dlc::weights {
namespace detail {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull * 1024 * 1024;
constexpr size_t kMaxDepth = 64;
constexpr size_t kMaxItems = 1024; // of a shape or data_offsets array

struct DtypeName {
  const char *name;
  DType dtype;
};
const DtypeName kDtypes[] = {{"F64", DType::F64}, {"F32", DType::F32},
                             {"F16", DType::F16}, {"BF16", DType::BF16},
                             {"I64", DType::I64}, {"I32", DType::I32},
                             {"I8", DType::I8},   {"U8", DType::U8},
                             {"BOOL", DType::I1}};

const char *safetensorsName(DType dtype) {
  for (const DtypeName &d : kDtypes)
    if (d.dtype == dtype)
      return d.name;
  return "?";
}

// ---- the header's JSON ---------------------------------------------------------

enum class JsonKind { Null, Bool, Int, Number, String, Array, Object };

const char *kindName(JsonKind kind) {
  switch (kind) {
  case JsonKind::Null: return "null";
  case JsonKind::Bool: return "a boolean";
  case JsonKind::Int: return "an integer";
  case JsonKind::Number: return "a non-integer number";
  case JsonKind::String: return "a string";
  case JsonKind::Array: return "an array";
  case JsonKind::Object: return "an object";
  }
  return "?";
}

/// A value the schema looks at, and where it starts in the JSON text.
struct JsonValue {
  explicit JsonValue(JsonKind kind = JsonKind::Null) : kind(kind) {}
  JsonKind kind;
  uint64_t pos = 0;
  bool negative = false; // Int
  uint64_t magnitude = 0; // Int
  std::string text;       // String
  /// Array (below a tensor field only): its first kMaxItems items.
  std::vector<JsonValue> items;
  bool capped = false; // more than kMaxItems items
};

/// A tensor's member of the header.
struct TensorEntry {
  std::string name;
  JsonValue value; // must be an object holding the three fields
  std::optional<JsonValue> dtype, shape, offsets;
};

/// A char iterator that records how far the JSON lexer has read.
class CountingIterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  CountingIterator(const char *p, const char *begin, size_t *consumed)
      : p_(p), begin_(begin), consumed_(consumed) {}
  reference operator*() const { return *p_; }
  CountingIterator &operator++() {
    *consumed_ = static_cast<size_t>(++p_ - begin_);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator &o) const { return p_ == o.p_; }
  bool operator!=(const CountingIterator &o) const { return p_ != o.p_; }

private:
  const char *p_;
  const char *begin_;
  size_t *consumed_;
};

/// Collects the root object's members: the tensors' fields and the
/// __metadata__ object, whose values must be strings.
class HeaderHandler : public nlohmann::json_sax<nlohmann::json> {
public:
  HeaderHandler(const std::string &json, const size_t &consumed)
      : json_(json), consumed_(consumed) {}

  JsonValue root;
  std::optional<JsonValue> metadata;
  /// The __metadata__ object's members.
  std::map<std::string, std::string> metadataValues;
  std::vector<TensorEntry> tensors;
  /// Set when the handler stops the parse, or from the parser's error.
  uint64_t errorPos = 0;
  std::string errorMessage;

  bool null() override { return scalar(JsonValue(JsonKind::Null)); }
  bool boolean(bool) override { return scalar(JsonValue(JsonKind::Bool)); }
  bool number_integer(number_integer_t v) override {
    JsonValue value(JsonKind::Int);
    value.negative = v < 0;
    value.magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    return scalar(std::move(value));
  }
  bool number_unsigned(number_unsigned_t v) override {
    JsonValue value(JsonKind::Int);
    value.magnitude = v;
    return scalar(std::move(value));
  }
  bool number_float(number_float_t, const string_t &) override {
    return scalar(JsonValue(JsonKind::Number));
  }
  bool string(string_t &s) override {
    JsonValue value(JsonKind::String);
    value.text = s;
    return scalar(std::move(value));
  }
  bool binary(binary_t &) override { return false; } // not in JSON
  bool start_object(std::size_t) override { return open(JsonKind::Object); }
  bool start_array(std::size_t) override { return open(JsonKind::Array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t &k) override {
    uint64_t pos = valueStart();
    Frame &frame = stack_.back();
    if ((frame.role == Role::Root || frame.role == Role::Tensor ||
         frame.role == Role::Metadata) &&
        !frame.keys.insert(k).second)
      return fail(pos, "malformed JSON: duplicate key \"" + k + "\"");
    frame.key = k;
    lastEnd_ = consumed_;
    return true;
  }
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &e) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 6:
    // syntax error ..." -> "syntax error ...". `position` counts the
    // characters read, the offending one included.
    std::string what = e.what();
    size_t column = what.find("column ");
    size_t colon = column == std::string::npos ? column : what.find(": ", column);
    errorPos = position ? position - 1 : 0;
    errorMessage = "malformed JSON: " +
                   (colon == std::string::npos ? what : what.substr(colon + 2));
    return false;
  }

private:
  /// What a container is to the schema.
  enum class Role { Root, Metadata, Tensor, Items, Ignored };
  struct Frame {
    Role role = Role::Ignored;
    std::string key;            // the current member's key, in an object
    std::set<std::string> keys; // Root, Tensor, Metadata: for duplicate keys
    JsonValue *items = nullptr; // Items: the array collecting them
  };

  bool fail(uint64_t pos, std::string message) {
    errorPos = pos;
    errorMessage = std::move(message);
    return false;
  }

  /// Where the value (or key) just read starts: after the end of the
  /// previous token, past whitespace and separators. (After a number the
  /// lexer has read one character ahead; that is a separator too.)
  uint64_t valueStart() const {
    auto separator = [](char c) {
      return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':';
    };
    size_t p = lastEnd_;
    while (p < json_.size() && separator(json_[p]))
      ++p;
    return p;
  }

  bool scalar(JsonValue &&value) {
    Frame unused;
    return accept(std::move(value), unused);
  }
  bool open(JsonKind kind) {
    Frame frame;
    if (!accept(JsonValue(kind), frame))
      return false;
    stack_.push_back(std::move(frame));
    return true;
  }
  bool close() {
    stack_.pop_back();
    lastEnd_ = consumed_;
    return true;
  }

  /// Checks `value` against where it stands and files it; `opened` says
  /// what the container it opens (if it is one) is to the schema.
  bool accept(JsonValue &&value, Frame &opened) {
    value.pos = valueStart();
    lastEnd_ = consumed_;
    if (stack_.size() > kMaxDepth)
      return fail(value.pos, "malformed JSON: JSON nested deeper than " +
                                 std::to_string(kMaxDepth) + " levels");
    if (stack_.empty()) {
      root = value;
      opened.role = value.kind == JsonKind::Object ? Role::Root : Role::Ignored;
      return true;
    }
    Frame &parent = stack_.back();
    bool isObject = value.kind == JsonKind::Object;
    switch (parent.role) {
    case Role::Root:
      if (parent.key == "__metadata__") {
        metadata = value;
        opened.role = isObject ? Role::Metadata : Role::Ignored;
      } else {
        tensors.push_back({parent.key, value, {}, {}, {}});
        opened.role = isObject ? Role::Tensor : Role::Ignored;
      }
      return true;
    case Role::Metadata:
      if (value.kind != JsonKind::String)
        return fail(value.pos, "__metadata__ value for \"" + parent.key +
                                   "\" must be a string, found " +
                                   kindName(value.kind));
      metadataValues[parent.key] = std::move(value.text);
      return true;
    case Role::Tensor: {
      TensorEntry &tensor = tensors.back();
      std::optional<JsonValue> *field = parent.key == "dtype"   ? &tensor.dtype
                                        : parent.key == "shape" ? &tensor.shape
                                        : parent.key == "data_offsets"
                                            ? &tensor.offsets
                                            : nullptr;
      if (field) {
        *field = std::move(value);
        if ((*field)->kind == JsonKind::Array) {
          opened.role = Role::Items;
          opened.items = &**field;
        }
      }
      return true;
    }
    case Role::Items:
      if (parent.items->items.size() < kMaxItems)
        parent.items->items.push_back(std::move(value));
      else
        parent.items->capped = true;
      return true;
    case Role::Ignored:
      return true;
    }
    return true;
  }

  const std::string &json_;
  const size_t &consumed_;
  size_t lastEnd_ = 0;
  std::vector<Frame> stack_;
};

// ---- the header's schema ---------------------------------------------------------

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::string dtypeError; // non-empty: unsupported dtype (reported when the tensor is used)
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

class SafetensorsFile {
public:
  bool open(const std::string &path, std::string &error);
  const TensorInfo *find(const std::string &key, std::string &error) const;
  bool read(const TensorInfo &t, HostTensor &out, std::string &error);
  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  const std::map<std::string, std::string> &metadata() const { return metadata_; }

private:
  bool check(const TensorEntry &entry, TensorInfo &t, std::string &error);

  InputFile file_;
  uint64_t dataStart_ = 0;
  uint64_t dataSize_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

bool SafetensorsFile::open(const std::string &path, std::string &error) {
  if (!file_.open(path, error))
    return false;
  uint64_t size = file_.size();
  const std::string part = "safetensors header";
  if (size < 8) {
    error = formatError(path, part, 0,
                        "truncated: file has " + std::to_string(size) +
                            " bytes, needs at least 8 for the header length");
    return false;
  }
  uint8_t lenBytes[8];
  if (!file_.readAt(0, 8, lenBytes, error))
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
  std::string json(static_cast<size_t>(n), '\0');
  if (!file_.readAt(8, json.size(), &json[0], error))
    return false;
  dataStart_ = 8 + n;
  dataSize_ = size - dataStart_;
  size_t consumed = 0;
  HeaderHandler handler(json, consumed);
  const char *text = json.data();
  if (!nlohmann::json::sax_parse(CountingIterator(text, text, &consumed),
                                 CountingIterator(text + json.size(), text, &consumed),
                                 &handler)) {
    error = formatError(path, part, 8 + handler.errorPos, handler.errorMessage);
    return false;
  }
  if (handler.root.kind != JsonKind::Object) {
    error = formatError(path, part, 8 + handler.root.pos,
                        std::string("expected a JSON object, found ") +
                            kindName(handler.root.kind));
    return false;
  }
  if (handler.metadata && handler.metadata->kind != JsonKind::Object) {
    error = formatError(path, part, 8 + handler.metadata->pos,
                        std::string("__metadata__ must be an object, found ") +
                            kindName(handler.metadata->kind));
    return false;
  }
  metadata_ = std::move(handler.metadataValues);
  for (const TensorEntry &entry : handler.tensors) {
    TensorInfo t;
    if (!check(entry, t, error))
      return false;
    tensors_.push_back(std::move(t));
  }
  // As the format requires: the tensors tile the data section, in some
  // order, with no byte shared and none left over (an overlap would alias
  // two parameters; a gap is data no tensor owns).
  std::vector<const TensorInfo *> byOffset;
  for (const TensorInfo &t : tensors_)
    byOffset.push_back(&t);
  std::stable_sort(byOffset.begin(), byOffset.end(), [](const TensorInfo *a, const TensorInfo *b) {
    return a->begin < b->begin;
  });
  uint64_t covered = 0;
  const TensorInfo *previous = nullptr;
  for (const TensorInfo *t : byOffset) {
    if (t->begin != covered) {
      error = formatError(path, "safetensors header, tensor '" + t->name + "'",
                          dataStart_ + t->begin,
                          t->begin < covered
                              ? "its data_offsets [" + std::to_string(t->begin) + ", " +
                                    std::to_string(t->end) + "] overlap tensor '" +
                                    previous->name + "' (which ends at " +
                                    std::to_string(covered) + ")"
                              : "bytes [" + std::to_string(covered) + ", " +
                                    std::to_string(t->begin) +
                                    ") of the data section belong to no tensor");
      return false;
    }
    covered = t->end;
    previous = t;
  }
  if (covered != dataSize_) {
    error = formatError(path, "safetensors data section", dataStart_ + covered,
                        "bytes [" + std::to_string(covered) + ", " + std::to_string(dataSize_) +
                            ") of the data section belong to no tensor");
    return false;
  }
  return true;
}

bool SafetensorsFile::check(const TensorEntry &entry, TensorInfo &t,
                            std::string &error) {
  const std::string &path = file_.path();
  const std::string part = "safetensors header, tensor '" + entry.name + "'";
  auto fail = [&](const std::string &where, const JsonValue &at,
                  const std::string &message) {
    error = formatError(path, where, 8 + at.pos, message);
    return false;
  };
  t.name = entry.name;
  if (entry.value.kind != JsonKind::Object)
    return fail(part, entry.value,
                std::string("expected an object, found ") + kindName(entry.value.kind));
  if (!entry.dtype || !entry.shape || !entry.offsets)
    return fail(part, entry.value,
                std::string("missing \"") +
                    (!entry.dtype ? "dtype" : !entry.shape ? "shape" : "data_offsets") +
                    "\"");
  const JsonValue &dtype = *entry.dtype, &shape = *entry.shape,
                  &offsets = *entry.offsets;
  if (dtype.kind != JsonKind::String)
    return fail(part, dtype,
                std::string("\"dtype\" must be a string, found ") + kindName(dtype.kind));
  bool known = false;
  for (const DtypeName &d : kDtypes)
    if (dtype.text == d.name) {
      t.dtype = d.dtype;
      known = true;
    }
  if (!known)
    t.dtypeError = formatError(path, "tensor '" + entry.name + "'", 8 + dtype.pos,
                               "dtype '" + dtype.text +
                                   "' is not supported (expected one of "
                                   "F64,F32,F16,BF16,I64,I32,I8,U8,BOOL)");
  if (shape.kind != JsonKind::Array)
    return fail(part, shape,
                std::string("\"shape\" must be an array, found ") + kindName(shape.kind));
  if (shape.capped)
    return fail(part, shape,
                "shape has more than " + std::to_string(kMaxItems) + " dimensions");
  for (const JsonValue &d : shape.items) {
    if (d.kind != JsonKind::Int || d.negative ||
        d.magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail(part, d, "shape entries must be non-negative integers that fit in 64 bits");
    t.shape.push_back(static_cast<int64_t>(d.magnitude));
  }
  if (offsets.kind != JsonKind::Array || offsets.items.size() != 2)
    return fail(part, offsets, "\"data_offsets\" must be an array of two integers [begin, end]");
  for (const JsonValue &o : offsets.items)
    if (o.kind != JsonKind::Int || o.negative)
      return fail(part, o, "data_offsets entries must be non-negative integers");
  t.begin = offsets.items[0].magnitude;
  t.end = offsets.items[1].magnitude;
  const std::string offs =
      "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
  if (t.end < t.begin)
    return fail(part, offsets, offs + ": end is before begin");
  if (t.end > dataSize_)
    return fail("tensor '" + entry.name + "'", offsets,
                offs + " extend past the end of the data section (" +
                    std::to_string(dataSize_) + " bytes starting at byte " +
                    std::to_string(dataStart_) + "; file has " +
                    std::to_string(file_.size()) + " bytes)");
  if (known) {
    int64_t numel;
    uint64_t nbytes;
    if (!checkedSizes(t.dtype, t.shape, numel, nbytes))
      return fail(part, shape,
                  "shape " + tupleString(t.shape) + " of " + dtype.text +
                      " is too large (byte size overflows 64 bits)");
    if (t.end - t.begin != nbytes)
      return fail(part, offsets,
                  offs + " span " + std::to_string(t.end - t.begin) + " bytes but shape " +
                      tupleString(t.shape) + " of " + dtype.text + " needs " +
                      std::to_string(nbytes));
  }
  return true;
}

const TensorInfo *SafetensorsFile::find(const std::string &key,
                                        std::string &error) const {
  for (const TensorInfo &t : tensors_)
    if (t.name == key)
      return &t;
  std::vector<std::string> keys;
  for (const TensorInfo &t : tensors_)
    keys.push_back(t.name);
  error = file_.path() + ": no tensor '" + key + "' in the safetensors file; " +
          listKeys(keys);
  return nullptr;
}

bool SafetensorsFile::read(const TensorInfo &t, HostTensor &out, std::string &error) {
  if (!t.dtypeError.empty()) {
    error = t.dtypeError;
    return false;
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(t.end - t.begin));
  if (!file_.readAt(dataStart_ + t.begin, bytes.size(), bytes.data(), error))
    return false;
  out = HostTensor(t.dtype, t.shape, std::move(bytes));
  return true;
}

} // namespace

bool readSafetensorsTensor(const std::string &path, const std::string &key,
                           HostTensor &out, std::string &error) {
  SafetensorsFile f;
  if (!f.open(path, error))
    return false;
  const TensorInfo *t = f.find(key, error);
  return t && f.read(*t, out, error);
}

bool readSafetensorsHeader(const std::string &path, const std::string &key,
                           TensorHeader &out, std::string &error) {
  SafetensorsFile f;
  if (!f.open(path, error))
    return false;
  const TensorInfo *t = f.find(key, error);
  if (!t)
    return false;
  if (!t->dtypeError.empty()) {
    error = t->dtypeError;
    return false;
  }
  out.dtype = t->dtype;
  out.shape = t->shape;
  return true;
}

} // namespace detail

using namespace detail;

bool readSafetensors(const std::string &path, std::map<std::string, HostTensor> &out,
                     std::string &error, SafetensorsMetadata *metadata) {
  SafetensorsFile f;
  if (!f.open(path, error))
    return false;
  std::map<std::string, HostTensor> result;
  for (const TensorInfo &t : f.tensors())
    if (!f.read(t, result[t.name], error))
      return false;
  out = std::move(result);
  if (metadata)
    *metadata = f.metadata();
  return true;
}

bool writeSafetensors(const std::string &path,
                      const std::map<std::string, HostTensor> &tensors,
                      std::string &error, const SafetensorsMetadata *metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (metadata && !metadata->empty())
    header["__metadata__"] = *metadata;
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    if (name == "__metadata__") {
      error = path + ": '__metadata__' is reserved and cannot be a tensor name";
      return false;
    }
    header[name] = {{"dtype", safetensorsName(tensor.dtype())},
                    {"shape", tensor.shape()},
                    {"data_offsets", {offset, offset + tensor.byteSize()}}};
    offset += tensor.byteSize();
  }
  std::string json;
  try {
    json = header.dump();
  } catch (const nlohmann::json::type_error &e) {
    error = path + ": a tensor name or metadata string is not valid UTF-8 (" +
            e.what() + ")";
    return false;
  }
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
  bool ok = std::fwrite(len, 1, 8, f) == 8 &&
            std::fwrite(json.data(), 1, json.size(), f) == json.size();
  for (const auto &[name, tensor] : tensors)
    if (ok && tensor.byteSize())
      ok = std::fwrite(tensor.data(), 1, tensor.byteSize(), f) == tensor.byteSize();
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
