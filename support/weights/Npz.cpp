//===- Npz.cpp - the .npz format: a ZIP archive of .npy images ------------===//
//
// The archive goes through libzip (stored and deflated entries, ZIP64, CRC
// checks); each entry is an .npy image, parsed as in Npy.cpp. NumPy names
// the entry of key `w` "w.npy". An entry is read in bounded chunks, so a
// size declared in a hostile archive is never allocated before the data
// is really there.
//
//===----------------------------------------------------------------------===//

#include "support/weights/Internal.h"

#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace dlc::weights {
namespace detail {
namespace {

std::string zipErrorMessage(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string message = zip_error_strerror(&error);
  zip_error_fini(&error);
  return message;
}

bool endsWithNpy(const std::string &name) {
  return name.size() >= 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
}

struct Entry {
  zip_uint64_t index = 0;
  std::string name;
  uint64_t size = 0; // uncompressed
};

/// An .npz archive open for reading, its entries checked.
class NpzReader {
public:
  NpzReader() = default;
  NpzReader(const NpzReader &) = delete;
  NpzReader &operator=(const NpzReader &) = delete;
  ~NpzReader() {
    if (zip_)
      zip_discard(zip_);
  }

  bool open(const std::string &path, std::string &error);
  const std::vector<Entry> &entries() const { return entries_; }
  /// The entry "<key>.npy", or else "<key>".
  const Entry *find(const std::string &key, std::string &error) const;
  /// The first min(limit, size) bytes of the entry; reading it whole also
  /// checks its CRC32 and that it has no more bytes than declared.
  bool read(const Entry &entry, uint64_t limit, std::vector<uint8_t> &out,
            std::string &error);
  /// The name of the entry's .npy image in messages.
  std::string entryName(const Entry &entry) const {
    return path_ + ": entry '" + entry.name + "'";
  }

private:
  bool fail(const std::string &part, const std::string &message,
            std::string &error) const {
    error = path_ + ": " + part + ": " + message;
    return false;
  }

  std::string path_;
  zip_t *zip_ = nullptr;
  std::vector<Entry> entries_;
};

bool NpzReader::open(const std::string &path, std::string &error) {
  path_ = path;
  errno = 0;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd < 0 || ::fstat(fd, &info) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno ? errno : EIO);
    if (fd >= 0)
      ::close(fd);
    return false;
  }
  uint64_t fileSize = static_cast<uint64_t>(info.st_size);
  int code = 0;
  // ZIP_CHECKCONS: the local headers must agree with the central directory.
  zip_ = zip_fdopen(fd, ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!zip_) {
    ::close(fd); // zip_fdopen owns the descriptor only when it succeeds
    return fail("zip archive", zipErrorMessage(code), error);
  }
  zip_int64_t count = zip_get_num_entries(zip_, 0);
  std::set<std::string> names;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    if (zip_stat_index(zip_, static_cast<zip_uint64_t>(i), 0, &st) != 0)
      return fail("zip archive", zip_strerror(zip_), error);
    const uint64_t needed = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
                            ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
    if ((st.valid & needed) != needed)
      return fail("zip archive",
                  "entry " + std::to_string(i) + " lacks its name, sizes or method",
                  error);
    Entry entry{static_cast<zip_uint64_t>(i), st.name, st.size};
    const std::string part = "entry '" + entry.name + "'";
    if (st.encryption_method != ZIP_EM_NONE)
      return fail(part, "entry is encrypted (not supported)", error);
    if (!zip_compression_method_supported(st.comp_method, 0))
      return fail(part,
                  "compression method " + std::to_string(st.comp_method) +
                      " is not supported",
                  error);
    if (st.comp_size > fileSize)
      return fail(part,
                  std::to_string(st.comp_size) +
                      " compressed bytes cannot fit in a file of " +
                      std::to_string(fileSize),
                  error);
    // Deflate cannot exceed ~1032:1; refuse sizes that would only serve to
    // make us read absurd amounts of data.
    if (st.comp_method == ZIP_CM_DEFLATE && st.size / 1032 > st.comp_size + 64)
      return fail(part,
                  "declared uncompressed size " + std::to_string(st.size) +
                      " is impossible for " + std::to_string(st.comp_size) +
                      " bytes of deflate data",
                  error);
    if (!names.insert(entry.name).second)
      return fail(part, "duplicate entry name", error);
    entries_.push_back(std::move(entry));
  }
  return true;
}

const Entry *NpzReader::find(const std::string &key, std::string &error) const {
  for (const std::string &name : {key + ".npy", key})
    for (const Entry &entry : entries_)
      if (entry.name == name)
        return &entry;
  std::vector<std::string> keys;
  for (const Entry &entry : entries_)
    keys.push_back(endsWithNpy(entry.name)
                       ? entry.name.substr(0, entry.name.size() - 4)
                       : entry.name);
  error = path_ + ": no array '" + key + "' in the npz archive; " + listKeys(keys);
  return nullptr;
}

bool NpzReader::read(const Entry &entry, uint64_t limit,
                     std::vector<uint8_t> &out, std::string &error) {
  const std::string part = "entry '" + entry.name + "'";
  zip_file_t *file = zip_fopen_index(zip_, entry.index, 0);
  if (!file)
    return fail(part, zip_strerror(zip_), error);
  auto readError = [&] {
    fail(part, zip_error_strerror(zip_file_get_error(file)), error);
    zip_fclose(file);
    return false;
  };
  const uint64_t want = std::min(limit, entry.size);
  const uint64_t kChunk = 1 << 20;
  out.clear();
  while (out.size() < want) {
    size_t at = out.size();
    out.resize(at + static_cast<size_t>(std::min(want - at, kChunk)));
    zip_int64_t n = zip_fread(file, out.data() + at, out.size() - at);
    if (n < 0)
      return readError();
    out.resize(at + static_cast<size_t>(n));
    if (n == 0)
      break;
  }
  if (out.size() < want) {
    zip_fclose(file);
    return fail(part,
                "the data ends after " + std::to_string(out.size()) +
                    " bytes, the archive declares " + std::to_string(entry.size),
                error);
  }
  if (want == entry.size) {
    // Reading past the end is where libzip checks the CRC32.
    uint8_t extra;
    zip_int64_t n = zip_fread(file, &extra, 1);
    if (n < 0)
      return readError();
    if (n > 0) {
      zip_fclose(file);
      return fail(part,
                  "the data is longer than the " + std::to_string(entry.size) +
                      " bytes the archive declares",
                  error);
    }
  }
  zip_fclose(file);
  return true;
}

bool readEntry(NpzReader &reader, const Entry &entry, HostTensor &out,
               std::string &error) {
  std::vector<uint8_t> image;
  return reader.read(entry, entry.size, image, error) &&
         readNpyBuffer(image.data(), image.size(), reader.entryName(entry), out,
                       error);
}

} // namespace

bool readNpzEntry(const std::string &path, const std::string &key,
                  HostTensor &out, std::string &error) {
  NpzReader reader;
  if (!reader.open(path, error))
    return false;
  const Entry *entry = reader.find(key, error);
  return entry && readEntry(reader, *entry, out, error);
}

bool readNpzHeader(const std::string &path, const std::string &key,
                   TensorHeader &out, std::string &error) {
  NpzReader reader;
  if (!reader.open(path, error))
    return false;
  const Entry *entry = reader.find(key, error);
  if (!entry)
    return false;
  const std::string name = reader.entryName(*entry);
  std::vector<uint8_t> prefix;
  uint64_t headerEnd;
  NpyInfo info;
  if (!reader.read(*entry, 12, prefix, error) ||
      !npyHeaderEnd(prefix.data(), prefix.size(), entry->size, name, headerEnd,
                    error) ||
      !reader.read(*entry, headerEnd, prefix, error) ||
      !parseNpyHeader(prefix.data(), prefix.size(), entry->size, name, info,
                      error))
    return false;
  out = info.header;
  return true;
}

} // namespace detail

using namespace detail;

bool readNpz(const std::string &path, std::map<std::string, HostTensor> &out,
             std::string &error) {
  NpzReader reader;
  if (!reader.open(path, error))
    return false;
  std::map<std::string, HostTensor> result;
  for (const Entry &entry : reader.entries()) {
    if (!endsWithNpy(entry.name)) {
      error = reader.entryName(entry) +
              ": entry is not a .npy file (npz entries must end in .npy)";
      return false;
    }
    std::string key = entry.name.substr(0, entry.name.size() - 4);
    if (!readEntry(reader, entry, result[key], error))
      return false;
  }
  out = std::move(result);
  return true;
}

bool writeNpz(const std::string &path,
              const std::map<std::string, HostTensor> &tensors,
              std::string &error, NpzCompression compression) {
  // Every .npy header first: a tensor .npy cannot hold fails before the
  // file is touched.
  std::vector<std::vector<uint8_t>> headers;
  for (const auto &[key, tensor] : tensors) {
    if (key.empty() || key.size() + 4 > 0xFFFF) {
      error = path + ": invalid npz key '" + key + "' (empty or too long)";
      return false;
    }
    headers.emplace_back();
    if (!encodeNpyHeader(tensor, headers.back(), error)) {
      error = path + ": entry '" + key + ".npy': " + error;
      return false;
    }
  }
  // libzip writes no file for an archive without entries; NumPy writes the
  // 22-byte end of central directory record alone.
  if (tensors.empty()) {
    std::vector<uint8_t> empty(22, 0);
    std::memcpy(empty.data(), "PK\x05\x06", 4);
    return writeWholeFile(path, empty, error);
  }
  int code = 0;
  zip_t *zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!zip) {
    error = "cannot create '" + path + "': " + zipErrorMessage(code);
    return false;
  }
  // Dated 1980-01-01 00:00 (the first DOS date), as NumPy dates its entries,
  // so that the same tensors make the same file.
  std::tm epoch{};
  epoch.tm_year = 80;
  epoch.tm_mday = 1;
  epoch.tm_isdst = -1;
  const std::time_t mtime = std::mktime(&epoch);
  size_t i = 0;
  for (const auto &[key, tensor] : tensors) {
    const std::vector<uint8_t> &header = headers[i++];
    // The data is read from the caller's tensors when zip_close writes.
    zip_buffer_fragment_t fragments[] = {
        {const_cast<uint8_t *>(header.data()), header.size()},
        {const_cast<uint8_t *>(tensor.data()), tensor.byteSize()}};
    zip_source_t *source = zip_source_buffer_fragment(
        zip, fragments, tensor.byteSize() ? 2 : 1, 0);
    zip_int64_t index =
        source ? zip_file_add(zip, (key + ".npy").c_str(), source, 0) : -1;
    if (index < 0 && source)
      zip_source_free(source);
    if (index < 0 ||
        zip_set_file_compression(zip, static_cast<zip_uint64_t>(index),
                                 compression == NpzCompression::Stored
                                     ? ZIP_CM_STORE
                                     : ZIP_CM_DEFLATE,
                                 0) != 0 ||
        zip_file_set_mtime(zip, static_cast<zip_uint64_t>(index), mtime, 0) != 0) {
      error = path + ": entry '" + key + ".npy': " + zip_strerror(zip);
      zip_discard(zip);
      return false;
    }
  }
  if (zip_close(zip) != 0) {
    error = "cannot write '" + path + "': " + zip_strerror(zip);
    zip_discard(zip);
    return false;
  }
  return true;
}

} // namespace dlc::weights
