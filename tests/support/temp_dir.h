#pragma once
// A temporary directory removed with its contents when the object goes away. Tests only.

#include <filesystem>
#include <string>

namespace rebound::testing {

/// The whole content of a file ("" when missing).
std::string read_file(const std::filesystem::path& path);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// Writes `text` to `name` inside the directory (creating parents) and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;
  /// The whole content of a file inside the directory ("" when missing).
  std::string read(const std::string& name) const;

 private:
  std::filesystem::path path_;
};

}  // namespace rebound::testing
