#pragma once
// A regular file mapped read-only for a search, safe against the file shrinking meanwhile
// (another process truncating it): a read past the new end would raise SIGBUS and kill the
// server. While a MappedFile is alive, a SIGBUS on its pages is answered by mapping zero pages
// over the lost part, so the reader sees NUL bytes there and goes on; `shrank()` tells it did.
// Any other SIGBUS is handed to the handler that was installed before (or the default).

#include <cstddef>
#include <string>
#include <string_view>

namespace rebound::tools {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  /// Maps `size` bytes of the open file `fd`; false with errno set. One per thread at a time.
  bool map(int fd, std::size_t size);
  std::string_view data() const;
  /// Whether part of the mapping was lost to a shrinking file (and reads as NUL bytes).
  bool shrank() const;

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rebound::tools
