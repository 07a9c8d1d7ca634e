// Shards claiming benchmarks as they run (kgate/results/shard_claims.hpp): each benchmark goes to
// exactly one claimer, even when many race for it, and every name has a file of its own; so does a
// step of the whole run.
#include "kgate/results/shard_claims.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "kgate/results/results_io.hpp"
#include "synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;

TEST(ShardClaims, TheFirstClaimWinsAndSaysWhoseItIs) {
  const syn::TempDir dir;
  const kgate::ShardClaims first(dir.file("claims"), "0/2"), second(dir.file("claims"), "1/2");
  EXPECT_TRUE(second.claim("rope/token_block/t:1/hq:32/hk:8/d:128/max_pos:131072/bf16"));
  EXPECT_FALSE(first.claim("rope/token_block/t:1/hq:32/hk:8/d:128/max_pos:131072/bf16"));
  EXPECT_FALSE(second.claim("rope/token_block/t:1/hq:32/hk:8/d:128/max_pos:131072/bf16"));
  EXPECT_TRUE(first.claim("rope/token_block/t:16/hq:32/hk:8/d:128/max_pos:131072/bf16"));
  EXPECT_EQ(syn::read_text(dir.file("claims/" + kgate::claim_file_name("rope/token_block/t:1/hq:32/hk:8/d:128/max_pos:131072/bf16"))),
            "1/2\n");
}

TEST(ShardClaims, EveryNameHasAFileOfItsOwn) {
  EXPECT_EQ(kgate::claim_file_name("rmsnorm/vectorized/m:1/n:4096/bf16"), "rmsnorm%2Fvectorized%2Fm%3A1%2Fn%3A4096%2Fbf16");
  EXPECT_NE(kgate::claim_file_name("a/b"), kgate::claim_file_name("a%2Fb")) << "the escape character is escaped too";
  EXPECT_EQ(kgate::claim_file_name(".."), "%2E.");
  const std::string long_name(300, 'x');
  const std::string file = kgate::claim_file_name(long_name);
  EXPECT_LE(file.size(), 200u);
  EXPECT_NE(file, kgate::claim_file_name(long_name + "y")) << "names alike for 200 bytes differ by their hash";
  const syn::TempDir dir;
  const kgate::ShardClaims claims(dir.file("claims"), "0/1");
  EXPECT_TRUE(claims.claim(long_name));
  EXPECT_TRUE(claims.claim(long_name + "y"));
  EXPECT_TRUE(claims.claim("workload/llama3-8b-decode/b:64/l:4096/bf16"));
}

TEST(ShardClaims, AStepOfTheRunIsClaimedOnceAndApartFromAnyBenchmark) {
  const syn::TempDir dir;
  const kgate::ShardClaims first(dir.file("claims"), "2/4"), second(dir.file("claims"), "0/4");
  EXPECT_TRUE(first.claim("~calibration")) << "a benchmark of the step's name has a claim of its own";
  EXPECT_TRUE(first.claim_run_step("calibration"));
  EXPECT_FALSE(second.claim_run_step("calibration"));
  EXPECT_FALSE(first.claim_run_step("calibration"));
  EXPECT_TRUE(second.claim_run_step("other"));
  EXPECT_EQ(syn::read_text(dir.file("claims/~calibration")), "2/4\n");
}

TEST(ShardClaims, ALastRoundIsOfferedByItsShardAndTakenOnceByAnyShard) {
  const syn::TempDir dir;
  const kgate::ShardClaims own(dir.file("claims"), "0/2"), other(dir.file("claims"), "1/2");
  const std::string name = "rope/token_block/t:1/hq:32/hk:8/d:128/max_pos:131072/bf16";
  ASSERT_TRUE(own.claim(name));
  EXPECT_FALSE(other.offered(name)) << "not offered before its shard's last process starts";
  own.offer(name);
  own.offer(name);  // a process restarted after a fault offers again
  EXPECT_TRUE(other.offered(name));
  EXPECT_TRUE(other.claim_last_round(name));
  EXPECT_FALSE(own.claim_last_round(name));
  EXPECT_FALSE(other.claim_last_round(name));
  EXPECT_FALSE(other.claim(name)) << "the first round's claim stays its own shard's";
  EXPECT_EQ(syn::read_text(dir.file("claims/" + kgate::claim_file_name(name) + "~last")), "1/2\n");
  EXPECT_TRUE(own.claim_last_round("gemv/naive/m:1/n:4096/k:4096/bf16")) << "each benchmark's last round apart";
}

TEST(ShardClaims, ManyClaimersRacingGetEachBenchmarkOnce) {
  const syn::TempDir dir;
  constexpr int kClaimers = 8, kBenchmarks = 200;
  std::vector<std::vector<int>> won(kClaimers);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClaimers; ++c)
    threads.emplace_back([&, c] {
      const kgate::ShardClaims claims(dir.file("claims"), std::to_string(c) + "/" + std::to_string(kClaimers));
      while (!go) std::this_thread::yield();
      for (int b = 0; b < kBenchmarks; ++b)
        if (claims.claim("family/variant/n:" + std::to_string(b))) won[static_cast<std::size_t>(c)].push_back(b);
    });
  go = true;
  for (std::thread& t : threads) t.join();
  std::multiset<int> all;
  for (const std::vector<int>& w : won) all.insert(w.begin(), w.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kBenchmarks));
  EXPECT_EQ(std::set<int>(all.begin(), all.end()).size(), static_cast<std::size_t>(kBenchmarks));
}

TEST(ShardClaims, AFolderThatCannotBeMadeOrWrittenIsAResultsError) {
  const syn::TempDir dir;
  dir.write("file", "");
  EXPECT_THROW(kgate::ShardClaims(dir.file("file/claims"), "0/2"), kgate::ResultsError);
  const kgate::ShardClaims claims(dir.file("claims"), "0/2");
  std::filesystem::remove_all(dir.file("claims"));
  EXPECT_THROW(claims.claim("rope/naive/t:1"), kgate::ResultsError);
}

}  // namespace
