// The report's words, each said once: the glossary at the end, and the same text on hover over every
// column title and term that uses it.
#include <algorithm>

#include "kgate/report/format.hpp"
#include "report_sections.hpp"

namespace kgate::report {
namespace {

struct Term {
  const char* term;
  const char* meaning;
};

constexpr Term kGlossary[] = {
    {"Speedup", "Baseline median time / new median time: above 1 the new run is faster, 0.943× is 6.0% slower."},
    {"Change", "The change in median time, (new − baseline) / baseline: +6.00% is slower."},
    {"Δ time", "New median time − baseline median time, per call."},
    {"Interval",
     "The 99% confidence interval of the speedup (distribution-free, of the ratio of medians), printed with as many digits as "
     "its ends need to differ."},
    {"Detectable",
     "The minimum detectable change: the smallest change this benchmark's own samples can resolve (the spread between its "
     "repetitions' medians, the sampling error of a median, or the timer's resolution, whichever is largest). The gate never "
     "judges a change smaller than this, whatever the threshold."},
    {"Cycles",
     "The speedup in SM cycles (time × the clock it ran at): a change in time that the cycles do not show is the GPU's clock, "
     "not the code."},
    {"Verdict",
     "What the gate concluded for the benchmark: slower, faster, same, at threshold, noisy, new, missing or failed "
     "(each below)."},
    {"p", "The Mann–Whitney U test's p-value: how likely samples this far apart are when nothing changed."},
    {"slower",
     "Slower by more than the threshold (and the detectable change), significant, in cycles too, in every repetition: "
     "fails the gate (a vendor library's does not)."},
    {"faster", "Faster by more than the threshold, by the same rules as slower."},
    {"same", "The whole interval lies inside the threshold's band."},
    {"at threshold",
     "A precise change whose interval reaches across the threshold: it is as large as the threshold, not provably larger; "
     "listed, not failing the gate."},
    {"noisy", "The samples are too spread to decide: the interval reaches from inside the band to outside it and is wide."},
    {"new", "In this run, not in the baseline."},
    {"missing", "In the baseline, not in this run (or skipped here)."},
    {"failed", "The variant raised an error or gave a wrong result in this run: fails the gate."},
    {"% of roof",
     "The achieved rate against the measured ceiling it comes closest to: the copy bandwidth (a kernel that reads and writes "
     "the same bytes), the read bandwidth, or the bf16 GEMM rate, all measured in this run. † marks a share above 100%: the "
     "copy ceiling moves every byte twice through DRAM, while a kernel that reads more than it writes, or whose output is "
     "still in the L2 cache when it ends (written back after its span), streams faster than a copy."},
    {"memory-bound", "Reaches at least half of the memory roof, and more of it than of the compute roof."},
    {"compute-bound", "Reaches at least half of the GEMM rate, and more of it than of the memory roof."},
    {"latency-bound", "The time the roofline allows for its work is below the launch floor: launches, not bytes or FLOPs, set it."},
    {"below-roofs", "Under half of both roofs: neither memory nor compute limits it; the kernel's own code does."},
    {"Best peer",
     "The fastest other library at this shape (PyTorch eager, torch.compile, cuDNN, Liger-Kernel, ...), timed by kgate's "
     "method on kgate's clock; peers are never gated."},
    {"kgate vs peer",
     "The best peer's median / kgate's fastest variant's: above 1 kgate is faster. A tie when they are within 1% or the "
     "interval of their ratio holds 1."},
    {"Journey", "Each variant's speedup over the variant it follows (the step before it), geomean over the shapes both ran."},
    {"Median",
     "The headline mode's median time per call: cold (L2 flushed and inputs rotated before each sample) or hot "
     "(launches replayed from a CUDA graph)."},
    {"not checked",
     "kgate_bench checks a benchmark's output before timing it when its instance is at most 16 MiB; the correctness suite "
     "checks every variant on small and odd shapes, so a larger instance is covered there."},
    {"axis",
     "A dimension of the shape: b batch, h/hq query heads, hkv/hk key-value heads, d head size, l/s context or sequence "
     "length, m rows, n and k matrix sides, t tokens, i intermediate size."},
};

}  // namespace

std::string term_tip(std::string_view term) {
  const auto it = std::find_if(std::begin(kGlossary), std::end(kGlossary), [&](const Term& t) { return term == t.term; });
  return it == std::end(kGlossary) ? "" : it->meaning;
}

Section glossary_section() {
  Section section{"Glossary", {}};
  Table table;
  table.columns = {{"Term"}, {"Meaning"}};
  for (const Term& t : kGlossary) table.rows.push_back({{"**" + literal(t.term) + "**"}, {literal(t.meaning)}});
  section.blocks.emplace_back(std::move(table));
  return section;
}

}  // namespace kgate::report
