#include "kgate/core/registry.hpp"

#include <algorithm>
#include <map>
#include <optional>
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
  std::string name = family->name();
  families_.add(std::move(name), std::move(family));
  return true;
}

bool Registry::add_variant(Variant variant) {
  std::string name = variant.info.full_name();
  variants_.add(std::move(name), std::make_unique<Variant>(std::move(variant)));
  return true;
}

std::vector<const Family*> Registry::families() const { return families_.by_name(); }

const Family* Registry::find_family(std::string_view name) const { return families_.find(name); }

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
  std::vector<const Variant*> out = variants_.in_registration_order();
  std::map<const Variant*, int> step;
  for (const Variant* v : out) step[v] = journey_step(*v);
  std::sort(out.begin(), out.end(), [&](const Variant* a, const Variant* b) {
    return std::tie(a->info.family, a->info.role, step[a], a->info.name) < std::tie(b->info.family, b->info.role, step[b], b->info.name);
  });
  return out;
}

std::vector<const Variant*> Registry::variants_of(std::string_view family) const {
  std::vector<const Variant*> out;
  for (const Variant* v : variants())
    if (v->info.family == family) out.push_back(v);
  return out;
}

const Variant* Registry::find_variant(std::string_view full_name) const { return variants_.find(full_name); }

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
  for (const std::string& name : families_.duplicate_names()) problems += "\n  family '" + name + "' registered twice";
  for (const std::string& name : variants_.duplicate_names()) problems += "\n  variant '" + name + "' registered twice";
  const std::vector<const Variant*> variants = variants_.in_registration_order();
  for (const Variant* v : variants) {
    const std::string name = v->info.full_name();
    if (!find_family(v->info.family))
      problems += "\n  variant '" + name + "' (" + v->info.source_file + ") names unknown family '" + v->info.family + "'";
    if (v->info.name.empty() || v->info.name.find_first_of("/: ") != std::string::npos)
      problems += "\n  variant name '" + v->info.name + "' is empty or contains '/', ':' or ' '";
    if (!v->info.follows.empty() && !find_variant(v->info.family + "/" + v->info.follows))
      problems += "\n  variant '" + name + "' follows '" + v->info.follows + "', which is not a variant of its family";
    else if (journey_step(*v) > static_cast<int>(variants_.size()))
      problems += "\n  variant '" + name + "' follows a chain of variants that goes in a circle";
  }
  for (const Family* f : families_.in_registration_order()) {
    const std::size_t references = std::count_if(variants.begin(), variants.end(), [&](const Variant* v) {
      return v->info.family == f->name() && v->info.role == VariantRole::reference;
    });
    if (references > 1) problems += "\n  family '" + f->name() + "' has more than one reference variant";
    bool host_checked = false, device_checked = false;
    for (const Shape& shape : f->test_shapes()) {
      const std::optional<std::string> reference = f->device_reference(shape);
      (reference ? device_checked : host_checked) = true;
      if (reference && !find_variant(f->name() + "/" + *reference))
        problems += "\n  family '" + f->name() + "' names unregistered variant '" + *reference + "' as its reference at " + shape.id();
    }
    if (device_checked && !host_checked)
      problems += "\n  family '" + f->name() +
                  "' checks every test shape against a device reference: none checks that variant against the host reference";
  }
  if (!problems.empty()) throw std::logic_error("kernel registry is inconsistent:" + problems);
}

}  // namespace kgate
