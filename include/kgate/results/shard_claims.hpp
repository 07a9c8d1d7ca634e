#pragma once
// The shards of one host taking the suite's benchmarks as they run, first come first served
// (kgate shard-run). Each shard's first timing process claims a benchmark just before measuring it,
// by creating a file named for it in a folder every shard of the run shares; the later processes
// measure what their first one claimed, but for the last process's round: each shard's last process
// offers the benchmarks it still has to time, and a shard that has timed all of its own takes
// others' that nobody has started (claim_last_round), so that the shards end together. A step of
// the whole run that one shard takes (the run's ceilings, measured by the first shard done) is
// claimed the same way. The static split (shard.hpp) balances by durations
// recorded elsewhere: on a 4x H200 host, with the H200 baseline's durations (one H200 of another
// host) equal to within 0.1 s a shard, the shards' timing took 18.5-23.3 s (docs/ci.md).
#include <string>

namespace kgate {

class ShardClaims {
 public:
  // Claims in `folder` (created when missing) for the shard `shard` ("1/4", written into each claim
  // for whoever looks). Throws ResultsError when the folder cannot be made.
  ShardClaims(std::string folder, std::string shard);

  // True when this shard now owns `benchmark`: no shard had claimed it. Exclusive across
  // processes (O_CREAT | O_EXCL). Throws ResultsError when the claim can be neither made nor found.
  bool claim(const std::string& benchmark) const;
  // True when this shard now owns `step`, a step of the whole run that one shard takes: its file is
  // "~<step>", a name no benchmark's claim has ('~' is escaped there). Throws as claim() does.
  bool claim_run_step(const std::string& step) const;

  // The last timing process's round ("<name>~last"): its own shard offers a benchmark when that
  // process starts (offer), and whoever claims it first times it, its own shard or another that has
  // timed all of its own. A benchmark not offered (its shard's last process has not started) is
  // not another shard's to take. Throw as claim() does.
  void offer(const std::string& benchmark) const;
  bool offered(const std::string& benchmark) const;
  bool claim_last_round(const std::string& benchmark) const;

  const std::string& folder() const { return folder_; }

 private:
  bool claim_file(const std::string& file, const std::string& what) const;
  std::string path_of(const std::string& file) const { return folder_ + "/" + file; }
  std::string offer_path(const std::string& benchmark) const;  // "<name>~offered"

  std::string folder_, shard_;
};

// The claim's file name for a benchmark: its name with every byte but [A-Za-z0-9._-] written as
// %XX, so that two names never share a file; a name longer than the file system allows ends in a
// hash of the whole.
std::string claim_file_name(const std::string& benchmark);

}  // namespace kgate
