#pragma once
// A list of named entries, each registered once at static initialization: what the kernel registry
// (families and variants, core/registry.hpp) and the workload registry (workloads and models,
// workload.hpp) have in common. Each adds, finds by name, lists by name and, in its validate(),
// names what was registered twice; what makes an entry valid stays with its registry. Each entry
// registers itself with one line of its own file (KGATE_REGISTER_AT_STARTUP, under the registries'
// KGATE_REGISTER_* macros).
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kgate {

template <class Entry>
class NamedRegistry {
 public:
  // The name is taken once, as the entry is added: a family's name() is virtual, a variant's is
  // built from its family's and its own. Entries are held by pointer, so what find() and the
  // listings return stays valid as others are added.
  void add(std::string name, std::unique_ptr<Entry> entry) { entries_.push_back({std::move(name), std::move(entry)}); }

  // The first entry registered under `name`, or null.
  const Entry* find(std::string_view name) const {
    const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Named& e) { return e.name == name; });
    return it == entries_.end() ? nullptr : it->entry.get();
  }

  std::vector<const Entry*> in_registration_order() const {
    std::vector<const Entry*> out;
    for (const Named& e : entries_) out.push_back(e.entry.get());
    return out;
  }

  // By name; entries of the same name (an invalid registry) in the order they were registered.
  std::vector<const Entry*> by_name() const {
    std::vector<const Named*> named;
    for (const Named& e : entries_) named.push_back(&e);
    std::stable_sort(named.begin(), named.end(), [](const Named* a, const Named* b) { return a->name < b->name; });
    std::vector<const Entry*> out;
    for (const Named* e : named) out.push_back(e->entry.get());
    return out;
  }

  // Every name registered more than once, once each, in the order of its second registration.
  std::vector<std::string> duplicate_names() const {
    std::set<std::string_view> seen, reported;
    std::vector<std::string> out;
    for (const Named& e : entries_)
      if (!seen.insert(e.name).second && reported.insert(e.name).second) out.push_back(e.name);
    return out;
  }

  std::size_t size() const { return entries_.size(); }

 private:
  struct Named {
    std::string name;
    std::unique_ptr<Entry> entry;
  };
  std::vector<Named> entries_;
};

}  // namespace kgate

#define KGATE_CONCAT_INNER(a, b) a##b
#define KGATE_CONCAT(a, b) KGATE_CONCAT_INNER(a, b)

// KGATE_REGISTER_AT_STARTUP(family, <an add to a registry, true>): the add runs as the program
// starts, before main, through a file-local variable named after the kind and the line
// (kgate_family_42), so a file may register several entries.
#define KGATE_REGISTER_AT_STARTUP(kind, ...) [[maybe_unused]] static const bool KGATE_CONCAT(kgate_##kind##_, __LINE__) = __VA_ARGS__
