#include "kgate/core/registry.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "kgate/base/chain.hpp"

namespace kgate {

std::string_view to_string(VariantRole role) {
  switch (role) {
    case VariantRole::candidate: return "candidate";
    case VariantRole::reference: return "reference";
    case VariantRole::vendor: return "vendor";
  }
  return "?";
}

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

bool Registry::add_family(std::unique_ptr<Family> family) {
  families_.push_back(std::move(family));
  return true;
}

bool Registry::add_variant(Variant variant) {
  variants_.push_back(std::move(variant));
  return true;
}

std::vector<const Family*> Registry::families() const {
  std::vector<const Family*> out;
  for (const auto& f : families_) out.push_back(f.get());
  std::sort(out.begin(), out.end(), [](const Family* a, const Family* b) { return a->name() < b->name(); });
  return out;
}

const Family* Registry::find_family(std::string_view name) const {
  for (const auto& f : families_)
    if (f->name() == name) return f.get();
  return nullptr;
}

// How many `follows` lead from `v` back to a first step; a chain that names an unknown variant
// ends there, and one that goes in a circle stops after as many steps as there are variants
// (validate() reports both).
int Registry::journey_step(const Variant& v) const {
  const auto before = [&](const Variant* at) -> std::optional<const Variant*> {
    const Variant* previous = at->info.follows.empty() ? nullptr : find_variant(at->info.family + "/" + at->info.follows);
    return previous ? std::optional(previous) : std::nullopt;
  };
  return static_cast<int>(links_to_start(&v, before, variants_.size()));
}

std::vector<const Variant*> Registry::variants() const {
  std::vector<const Variant*> out;
  for (const auto& v : variants_) out.push_back(&v);
  std::map<const Variant*, int> step;
  for (const Variant* v : out) step[v] = journey_step(*v);
  std::sort(out.begin(), out.end(), [&](const Variant* a, const Variant* b) {
    return std::tie(a->info.family, a->info.role, step[a], a->info.name) <
           std::tie(b->info.family, b->info.role, step[b], b->info.name);
  });
  return out;
}

std::vector<const Variant*> Registry::variants_of(std::string_view family) const {
  std::vector<const Variant*> out;
  for (const Variant* v : variants())
    if (v->info.family == family) out.push_back(v);
  return out;
}

const Variant* Registry::find_variant(std::string_view full_name) const {
  for (const auto& v : variants_)
    if (v.info.full_name() == full_name) return &v;
  return nullptr;
}

const Variant* Registry::device_reference(const Family& family, const Shape& shape) const {
  const std::optional<std::string> name = family.device_reference(shape);
  if (!name) return nullptr;
  const Variant* variant = find_variant(family.name() + "/" + *name);
  if (!variant)
    throw std::logic_error("family '" + family.name() + "' names '" + *name + "' as its reference at " + shape.id() +
                           ", which is not a registered variant of it");
  return variant;
}

void Registry::validate() const {
  std::string problems;
  std::set<std::string> seen_families, seen_variants;
  for (const auto& f : families_)
    if (!seen_families.insert(f->name()).second) problems += "\n  family '" + f->name() + "' registered twice";
  for (const auto& v : variants_) {
    const std::string name = v.info.full_name();
    if (!find_family(v.info.family))
      problems += "\n  variant '" + name + "' (" + v.info.source_file + ") names unknown family '" + v.info.family + "'";
    if (!seen_variants.insert(name).second) problems += "\n  variant '" + name + "' registered twice";
    if (v.info.name.empty() || v.info.name.find_first_of("/: ") != std::string::npos)
      problems += "\n  variant name '" + v.info.name + "' is empty or contains '/', ':' or ' '";
    if (!v.info.follows.empty() && !find_variant(v.info.family + "/" + v.info.follows))
      problems += "\n  variant '" + name + "' follows '" + v.info.follows + "', which is not a variant of its family";
    else if (journey_step(v) > static_cast<int>(variants_.size()))
      problems += "\n  variant '" + name + "' follows a chain of variants that goes in a circle";
  }
  for (const auto& f : families_) {
    const std::size_t references = std::count_if(variants_.begin(), variants_.end(), [&](const Variant& v) {
      return v.info.family == f->name() && v.info.role == VariantRole::reference;
    });
    if (references > 1) problems += "\n  family '" + f->name() + "' has more than one reference variant";
    bool host_checked = false, device_checked = false;
    for (const Shape& shape : f->test_shapes()) {
      const std::optional<std::string> reference = f->device_reference(shape);
      (reference ? device_checked : host_checked) = true;
      if (reference && !find_variant(f->name() + "/" + *reference))
        problems += "\n  family '" + f->name() + "' names unregistered variant '" + *reference + "' as its reference at " +
                    shape.id();
    }
    if (device_checked && !host_checked)
      problems += "\n  family '" + f->name() +
                  "' checks every test shape against a device reference: none checks that variant against the host reference";
  }
  if (!problems.empty()) throw std::logic_error("kernel registry is inconsistent:" + problems);
}

}  // namespace kgate
