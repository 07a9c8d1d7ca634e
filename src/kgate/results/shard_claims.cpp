#include "kgate/results/shard_claims.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "kgate/results/results_io.hpp"

namespace kgate {
namespace {

constexpr std::size_t kMaxFileName = 200;  // below the 255 bytes of common file systems, with room for the hash

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

}  // namespace

std::string claim_file_name(const std::string& benchmark) {
  std::string name;
  for (const unsigned char c : benchmark) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (plain) {
      name += static_cast<char>(c);
    } else {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      name += escaped;
    }
  }
  if (name == "." || name == "..") name = "%2E" + name.substr(1);
  if (name.size() <= kMaxFileName) return name;
  char hash[20];
  std::snprintf(hash, sizeof hash, "~%016llx", static_cast<unsigned long long>(fnv1a(benchmark)));
  return name.substr(0, kMaxFileName - 17) + hash;
}

ShardClaims::ShardClaims(std::string folder, std::string shard) : folder_(std::move(folder)), shard_(std::move(shard)) {
  std::error_code error;
  std::filesystem::create_directories(folder_, error);
  if (error) throw ResultsError(folder_ + ": cannot make the shards' claims folder: " + error.message());
}

bool ShardClaims::claim(const std::string& benchmark) const { return claim_file(claim_file_name(benchmark), benchmark); }

bool ShardClaims::claim_run_step(const std::string& step) const { return claim_file("~" + step, "the run's " + step); }

std::string ShardClaims::offer_path(const std::string& benchmark) const { return path_of(claim_file_name(benchmark) + "~offered"); }

void ShardClaims::offer(const std::string& benchmark) const {
  const std::string path = offer_path(benchmark);
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) throw ResultsError(path + ": cannot offer " + benchmark + "'s last round for shard " + shard_ + ": " + std::strerror(errno));
  close(fd);
}

bool ShardClaims::offered(const std::string& benchmark) const { return access(offer_path(benchmark).c_str(), F_OK) == 0; }

bool ShardClaims::claim_last_round(const std::string& benchmark) const {
  return claim_file(claim_file_name(benchmark) + "~last", benchmark + "'s last round");
}

bool ShardClaims::claim_file(const std::string& file, const std::string& what) const {
  const std::string path = path_of(file);
  const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw ResultsError(path + ": cannot claim " + what + " for shard " + shard_ + ": " + std::strerror(errno));
  }
  const std::string owner = shard_ + "\n";
  const bool written = write(fd, owner.data(), owner.size()) == static_cast<ssize_t>(owner.size());
  close(fd);
  if (!written) throw ResultsError(path + ": cannot write shard " + shard_ + "'s claim of " + what);
  return true;
}

}  // namespace kgate
