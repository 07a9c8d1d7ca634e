// base's NamedRegistry (named_registry.hpp), the list under the kernel registry's families and
// variants and the workload registry's workloads and models: entries found by name, listed as
// registered or by name, the names registered twice said once each, and the registration lines
// (KGATE_REGISTER_AT_STARTUP) run before main.
#include "kgate/base/named_registry.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

struct SyntheticEntry {
  std::string name;
  int registered;  // which add() it came from, 1 first
};

std::vector<int> registered(const std::vector<const SyntheticEntry*>& entries) {
  std::vector<int> order;
  for (const SyntheticEntry* e : entries) order.push_back(e->registered);
  return order;
}

kgate::NamedRegistry<SyntheticEntry> synthetic_registry(const std::vector<std::string>& names) {
  kgate::NamedRegistry<SyntheticEntry> registry;
  int count = 0;
  for (const std::string& name : names) registry.add(name, std::make_unique<SyntheticEntry>(SyntheticEntry{name, ++count}));
  return registry;
}

TEST(NamedRegistry, FindsTheFirstEntryOfAName) {
  const auto registry = synthetic_registry({"gemv", "rmsnorm", "gemv"});
  ASSERT_NE(registry.find("rmsnorm"), nullptr);
  EXPECT_EQ(registry.find("rmsnorm")->registered, 2);
  EXPECT_EQ(registry.find("gemv")->registered, 1);
  EXPECT_EQ(registry.find("rope"), nullptr);
  EXPECT_EQ(registry.find("gem"), nullptr) << "a prefix is not the name";
  EXPECT_EQ(registry.size(), 3u);
}

TEST(NamedRegistry, ListsAsRegisteredOrByNameKeepingTiesInOrder) {
  const auto registry = synthetic_registry({"silu_and_mul", "gemv", "rope", "gemv", "decode_attention"});
  EXPECT_EQ(registered(registry.in_registration_order()), (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(registered(registry.by_name()), (std::vector<int>{5, 2, 4, 3, 1}));
  EXPECT_TRUE(kgate::NamedRegistry<SyntheticEntry>().by_name().empty());
}

TEST(NamedRegistry, EntriesStayWhereTheyAreAsOthersAreAdded) {
  kgate::NamedRegistry<SyntheticEntry> registry;
  registry.add("first", std::make_unique<SyntheticEntry>(SyntheticEntry{"first", 1}));
  const SyntheticEntry* first = registry.find("first");
  for (int i = 2; i <= 100; ++i) registry.add(std::to_string(i), std::make_unique<SyntheticEntry>(SyntheticEntry{"", i}));
  EXPECT_EQ(registry.find("first"), first);
}

TEST(NamedRegistry, DuplicateNamesAreSaidOnceEachInTheOrderOfTheirSecondRegistration) {
  EXPECT_TRUE(synthetic_registry({"a", "b", "c"}).duplicate_names().empty());
  EXPECT_EQ(synthetic_registry({"b", "a", "a", "b", "a", "c"}).duplicate_names(), (std::vector<std::string>{"a", "b"}));
}

// Two registration lines of one kind in one file, as a family's variants register themselves.
kgate::NamedRegistry<SyntheticEntry>& startup_registry() {
  static kgate::NamedRegistry<SyntheticEntry> registry;
  return registry;
}
bool add_at_startup(const std::string& name) {
  startup_registry().add(name, std::make_unique<SyntheticEntry>(SyntheticEntry{name, static_cast<int>(startup_registry().size()) + 1}));
  return true;
}
KGATE_REGISTER_AT_STARTUP(synthetic, add_at_startup("synthetic-first"));
KGATE_REGISTER_AT_STARTUP(synthetic, add_at_startup("synthetic-second"));

TEST(NamedRegistry, RegistrationLinesRunBeforeMain) {
  ASSERT_EQ(startup_registry().size(), 2u);
  EXPECT_EQ(startup_registry().find("synthetic-first")->registered, 1);
  EXPECT_EQ(startup_registry().find("synthetic-second")->registered, 2);
}

}  // namespace
