#pragma once
// What every prefill variant's launch function does before its own launch: refuse the shapes no
// variant handles, and pick the kernel compiled for the shape's head_dim (64 or 128). Host code.
#include <string>

#include "prefill_attention.hpp"

namespace kgate::kernels::prefill {

// Calls launch_for.template operator()<D>() with D = a.head_dim; `variant` names the refusals.
template <class LaunchFor>
void dispatch_head_dim(const PrefillAttentionArgs& a, const std::string& variant, LaunchFor&& launch_for) {
  if (a.kv_heads < 1 || a.heads % a.kv_heads != 0)
    throw UnsupportedShape(std::to_string(a.heads) + " query heads do not divide into " + std::to_string(a.kv_heads) + " KV heads");
  switch (a.head_dim) {
    case 64: return launch_for.template operator()<64>();
    case 128: return launch_for.template operator()<128>();
    default: throw UnsupportedShape("head_dim " + std::to_string(a.head_dim) + ": " + variant + " is built for 64 and 128");
  }
}

}  // namespace kgate::kernels::prefill
