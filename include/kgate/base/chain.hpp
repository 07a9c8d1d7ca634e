#pragma once
// Walking a chain backwards, where each element names the one before it: the journeys of a
// family's variants (VariantInfo::follows), in the registry and again in the report, which has
// only the results.
#include <cstddef>
#include <optional>

namespace kgate {

// How many links lead from `start` back to an element with nothing before it; `before(element)`
// gives the element before, or nothing. A chain that goes in a circle is cut after `limit` links
// and counted as limit + 1.
template <class Element, class Before>
std::size_t links_to_start(const Element& start, Before&& before, std::size_t limit) {
  std::size_t links = 0;
  for (std::optional<Element> at = before(start); at && links <= limit; at = before(*at)) ++links;
  return links;
}

}  // namespace kgate
