//===- WeightFiles.cpp - dispatch on the extension, shared helpers --------===//

#include "support/weights/Internal.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace dlc::weights {

int64_t TensorHeader::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace detail {

std::string formatError(const std::string &name, const std::string &part,
                        uint64_t offset, const std::string &message) {
  return name + ": " + part + " at byte " + std::to_string(offset) + ": " +
         message;
}

std::string tupleString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string listKeys(const std::vector<std::string> &keys) {
  if (keys.empty())
    return "the file contains no arrays";
  std::string s = "the keys are: ";
  size_t shown = std::min<size_t>(keys.size(), 10);
  for (size_t i = 0; i < shown; ++i)
    s += (i ? ", '" : "'") + keys[i] + "'";
  if (shown < keys.size())
    s += ", ... (" + std::to_string(keys.size()) + " in total)";
  return s;
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
    error = "cannot open '" + path + "': " + std::strerror(errno) +
            " (cannot determine size)";
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
                        "range of " + std::to_string(n) +
                            " bytes is past the end of the file (" +
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

} // namespace detail

using namespace detail;

namespace {

enum class Format { Npy, Npz, Safetensors, Unknown };

Format formatOf(const std::string &path) {
  std::string lower;
  for (char c : path)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto endsWith = [&](const std::string &suffix) {
    return lower.size() >= suffix.size() &&
           lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (endsWith(".npy"))
    return Format::Npy;
  if (endsWith(".npz"))
    return Format::Npz;
  if (endsWith(".safetensors"))
    return Format::Safetensors;
  return Format::Unknown;
}

bool unknownFormat(const std::string &path, std::string &error) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  bool none = dot == std::string::npos || (slash != std::string::npos && dot < slash);
  error = path + ": unknown weight file extension " +
          (none ? std::string("(none)") : "'" + path.substr(dot) + "'") +
          " (expected .npy, .npz or .safetensors)";
  return false;
}

bool npyKeyMustBeEmpty(const std::string &path, const std::string &key,
                       std::string &error) {
  if (key.empty())
    return true;
  error = path + ": a .npy file holds a single array; key '" + key +
          "' must be empty";
  return false;
}

} // namespace

bool readHeader(const std::string &path, const std::string &key,
                TensorHeader &out, std::string &error) {
  switch (formatOf(path)) {
  case Format::Npy:
    return npyKeyMustBeEmpty(path, key, error) && readNpyHeader(path, out, error);
  case Format::Npz: return readNpzHeader(path, key, out, error);
  case Format::Safetensors: return readSafetensorsHeader(path, key, out, error);
  case Format::Unknown: break;
  }
  return unknownFormat(path, error);
}

bool readArray(const std::string &path, const std::string &key, HostTensor &out,
               std::string &error) {
  switch (formatOf(path)) {
  case Format::Npy: return npyKeyMustBeEmpty(path, key, error) && readNpy(path, out, error);
  case Format::Npz: return readNpzEntry(path, key, out, error);
  case Format::Safetensors: return readSafetensorsTensor(path, key, out, error);
  case Format::Unknown: break;
  }
  return unknownFormat(path, error);
}

} // namespace dlc::weights
