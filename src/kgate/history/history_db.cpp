// The history database (history.hpp): SQLite tables `runs`, `results` and `job_phases`, schema
// in docs/history.md.
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <regex>
#include <set>

#include "kgate/history/history.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate {
namespace {

constexpr int kSchemaVersion = 2;

// How long a connection waits for another's lock before "database is locked": writers take turns
// (one run's rows take well under a second to write), and a writer's commit waits for readers such
// as kgate history changes to finish their query.
constexpr int kBusyTimeoutMs = 60000;

// What each schema version adds to the one before: kSchemaSteps[v] takes a database of version v
// to v + 1, so a new database takes every step and an older one the steps it lacks.
constexpr const char* kSchemaSteps[kSchemaVersion] = {
    // 1: the runs and each one's figures per benchmark and mode.
    R"(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  commit_sha TEXT NOT NULL, dirty INTEGER NOT NULL, date TEXT NOT NULL,
  gpu TEXT NOT NULL, gpu_name TEXT NOT NULL, gpu_uuid TEXT NOT NULL, host TEXT NOT NULL,
  driver_version INTEGER NOT NULL, suite TEXT NOT NULL, timer TEXT NOT NULL,
  source TEXT NOT NULL, added TEXT NOT NULL,
  UNIQUE (commit_sha, date, host, gpu_uuid, suite));
CREATE TABLE IF NOT EXISTS results (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  benchmark TEXT NOT NULL, family TEXT NOT NULL, role TEXT NOT NULL, mode TEXT NOT NULL,
  headline INTEGER NOT NULL, status TEXT NOT NULL,
  median_s REAL, ci_low_s REAL, ci_high_s REAL, samples INTEGER NOT NULL, rel_stddev REAL,
  repetition_medians TEXT NOT NULL, min_detectable_change REAL NOT NULL, timer TEXT NOT NULL,
  sm_clock_mhz REAL,
  PRIMARY KEY (run_id, benchmark, mode)) WITHOUT ROWID;
)",
    // 2: the wall time of the job that made each run, by phase, in the job's order.
    R"(
CREATE TABLE IF NOT EXISTS job_phases (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL, phase TEXT NOT NULL, seconds REAL NOT NULL,
  PRIMARY KEY (run_id, position)) WITHOUT ROWID;
)"};

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail("preparing a query");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) { return check(sqlite3_bind_text(stmt_, i, v.c_str(), -1, SQLITE_TRANSIENT)); }
  Statement& bind(int i, double v) { return check(sqlite3_bind_double(stmt_, i, v)); }
  Statement& bind(int i, std::int64_t v) { return check(sqlite3_bind_int64(stmt_, i, v)); }
  Statement& bind_number_or_null(int i, double v) {
    return check(v > 0 && std::isfinite(v) ? sqlite3_bind_double(stmt_, i, v) : sqlite3_bind_null(stmt_, i));
  }
  // True while there is a row.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail("running a query");
    return false;
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int i) const {
    const unsigned char* t = sqlite3_column_text(stmt_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double number(int i) const { return sqlite3_column_double(stmt_, i); }
  std::int64_t integer(int i) const { return sqlite3_column_int64(stmt_, i); }

 private:
  Statement& check(int rc) {
    if (rc != SQLITE_OK) fail("binding a value");
    return *this;
  }
  [[noreturn]] void fail(const std::string& what) const { throw HistoryError(path_ + ": " + what + ": " + sqlite3_errmsg(db_)); }
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* stmt_ = nullptr;
};

void execute(sqlite3* db, const std::string& sql, const std::string& path) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    throw HistoryError(path + ": " + text);
  }
}

// Every write is a transaction begun IMMEDIATE: it takes the write lock first, waiting for other
// writers as long as the busy timeout allows. A plain (deferred) BEGIN reads first and asks for the
// write lock later, and SQLite refuses that upgrade at once ("database is locked") when another
// connection is writing, without waiting: concurrent adds into a new database failed so.
void write_transaction(sqlite3* db, const std::string& path, const std::function<void()>& work) {
  execute(db, "BEGIN IMMEDIATE", path);
  try {
    work();
    execute(db, "COMMIT", path);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::int64_t schema_version(sqlite3* db, const std::string& path) {
  Statement version(db, "PRAGMA user_version", path);
  version.step();
  return version.integer(0);
}

// Creates the tables of a new database, or adds those of the later versions to a database of an
// earlier one; returns the version it is then. Under the write lock, the version is read again:
// another process may have created or upgraded it while this one waited.
std::int64_t update_schema(sqlite3* db, const std::string& path) {
  std::int64_t version = 0;
  write_transaction(db, path, [&] {
    version = schema_version(db, path);
    if (version >= kSchemaVersion) return;
    if (version == 0) {
      Statement tables(db, "SELECT count(*) FROM sqlite_master", path);
      tables.step();
      if (tables.integer(0) > 0) throw HistoryError(path + ": not a kgate history database (it has other tables)");
    }
    std::string steps;
    for (; version < kSchemaVersion; ++version) steps += kSchemaSteps[version];
    execute(db, steps + "PRAGMA user_version = " + std::to_string(kSchemaVersion) + ";", path);
  });
  return version;
}

// Throws unless every table has every column kgate reads and writes.
void check_schema(sqlite3* db, const std::string& path) {
  for (const char* query : {"SELECT id, commit_sha, dirty, date, gpu, gpu_name, gpu_uuid, host, driver_version, suite, timer, source, "
                            "added FROM runs LIMIT 0",
                            "SELECT run_id, benchmark, family, role, mode, headline, status, median_s, ci_low_s, ci_high_s, samples, "
                            "rel_stddev, repetition_medians, min_detectable_change, timer, sm_clock_mhz FROM results LIMIT 0",
                            "SELECT run_id, position, phase, seconds FROM job_phases LIMIT 0"}) {
    sqlite3_stmt* statement = nullptr;
    const int rc = sqlite3_prepare_v2(db, query, -1, &statement, nullptr);
    sqlite3_finalize(statement);
    if (rc != SQLITE_OK)
      throw HistoryError(path + ": not a kgate history database of schema version " + std::to_string(kSchemaVersion) + ": " +
                         sqlite3_errmsg(db));
  }
}

// SQLite's integrity check: empty when the database is sound, else its first finding. A damaged
// database makes kgate history show fail ("database disk image is malformed"); adding to it would
// bury more runs in it.
std::string damage(sqlite3* db, const std::string& path) {
  std::string found;
  try {
    Statement check(db, "PRAGMA integrity_check(1)", path);
    check.step();
    found = check.text(0) == "ok" ? "" : check.text(0);
  } catch (const HistoryError&) {
    return sqlite3_errmsg(db);
  }
  // One line: "*** in database main ***\nOn tree page 32 cell 7: ..." -> "On tree page 32 cell 7: ...".
  if (const std::string heading = "*** in database main ***\n"; found.starts_with(heading)) found.erase(0, heading.size());
  std::replace(found.begin(), found.end(), '\n', ' ');
  return found;
}

std::string join_numbers(const std::vector<double>& values) {
  nlohmann::json array = nlohmann::json::array();
  for (const double v : values) array.push_back(v);
  return array.dump();
}

std::vector<double> split_numbers(const std::string& text) {
  std::vector<double> values;
  const nlohmann::json array = nlohmann::json::parse(text, nullptr, false);
  if (array.is_array())
    for (const auto& v : array)
      if (v.is_number()) values.push_back(v.get<double>());
  return values;
}

// "rmsnorm/vectorized/m:4096/n:4096/bf16" -> family, variant, shape.
void split_name(BenchmarkRecord& r) {
  const std::size_t first = r.name.find('/'), second = first == std::string::npos ? first : r.name.find('/', first + 1);
  r.variant = first == std::string::npos ? r.name : r.name.substr(first + 1, second == std::string::npos ? second : second - first - 1);
  r.shape = second == std::string::npos ? "" : r.name.substr(second + 1);
}

constexpr const char* kRunColumns = "id, commit_sha, dirty, date, gpu, gpu_name, host, driver_version, suite, timer, source";

}  // namespace

std::string HistoryRun::label() const { return date.substr(0, 10) + " " + (commit.empty() ? "unknown" : commit.substr(0, 7)); }

HistoryDb::HistoryDb(const std::string& path, bool create) : path_(path) {
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string reason = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw HistoryError(path + ": cannot open the history database: " + reason + (create ? "" : " (kgate history add creates it)"));
  }
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  try {
    std::int64_t found = schema_version(db_, path_);
    if (found > 0 && found < kSchemaVersion && sqlite3_db_readonly(db_, "main") == 1)
      throw HistoryError(path + ": history schema version " + std::to_string(found) + " is upgraded to version " +
                         std::to_string(kSchemaVersion) + " when opened, and the file is read-only here: make it writable");
    if (found < kSchemaVersion) found = update_schema(db_, path_);
    if (found > kSchemaVersion)
      throw HistoryError(path + ": history schema version " + std::to_string(found) + " is newer than this kgate's (" +
                         std::to_string(kSchemaVersion) + ")");
    check_schema(db_, path_);
    execute(db_, "PRAGMA foreign_keys = ON", path_);
    load_runs();
  } catch (const std::exception& e) {
    sqlite3_close(db_);
    // sqlite3 reports a file that is not a database on the first query.
    throw HistoryError(std::string(e.what()).starts_with(path) ? e.what() : path + ": " + e.what());
  }
}

HistoryDb::~HistoryDb() { sqlite3_close(db_); }

void HistoryDb::load_runs() {
  runs_.clear();
  Statement query(db_, std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY date, id", path_);
  while (query.step())
    runs_.push_back({.id = query.integer(0),
                     .commit = query.text(1),
                     .date = query.text(3),
                     .gpu = query.text(4),
                     .gpu_name = query.text(5),
                     .host = query.text(6),
                     .suite = query.text(8),
                     .timer = query.text(9),
                     .source = query.text(10),
                     .dirty = query.integer(2) != 0,
                     .driver_version = static_cast<int>(query.integer(7)),
                     .job_s = {}});
  std::map<std::int64_t, HistoryRun*> run_by_id;
  for (HistoryRun& r : runs_) run_by_id[r.id] = &r;
  Statement phases(db_, "SELECT run_id, phase, seconds FROM job_phases ORDER BY run_id, position", path_);
  // A run added since the query above, or deleted behind kgate's back, is not among them.
  while (phases.step())
    if (const auto run = run_by_id.find(phases.integer(0)); run != run_by_id.end())
      run->second->job_s.push_back({phases.text(1), phases.number(2)});
}

HistoryDb::Added HistoryDb::add(const RunResults& run, const std::string& source) {
  const RunContext& c = run.context;
  if (c.date.empty()) throw HistoryError(source + ": the run has no date (context.kgate.provenance.date): it cannot be ordered");
  if (c.gpu_name.empty()) throw HistoryError(source + ": the run does not name its GPU");

  Added added;
  added.run = {.commit = c.git_commit,
               .date = c.date,
               .gpu = gpu_slug(c.gpu_name),
               .gpu_name = c.gpu_name,
               .host = c.host,
               .suite = c.suite,
               .timer = {},
               .source = source,
               .dirty = c.git_dirty,
               .driver_version = c.driver_version,
               .job_s = c.job_s};
  std::set<std::string> timers;
  for (const BenchmarkRecord& r : run.benchmarks)
    if (r.status == BenchmarkStatus::ok && r.headline()) timers.insert(r.headline()->timer);
  added.run.timer = timers.size() == 1 ? *timers.begin() : timers.empty() ? TimingRecord{}.timer : "mixed";

  if (!checked_intact_) {
    if (const std::string found = damage(db_, path_); !found.empty())
      throw HistoryError(path_ + ": the database is damaged (SQLite's integrity check: " + found +
                         "), so kgate history add does not write into it: restore a copy, or salvage it with sqlite3's .recover");
    checked_intact_ = true;
  }
  write_transaction(db_, path_, [&] {
    Statement insert_run(db_,
                         "INSERT OR IGNORE INTO runs (commit_sha, dirty, date, gpu, gpu_name, gpu_uuid, host, driver_version, "
                         "suite, timer, source, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         path_);
    insert_run.bind(1, c.git_commit).bind(2, std::int64_t{c.git_dirty}).bind(3, c.date).bind(4, added.run.gpu);
    insert_run.bind(5, c.gpu_name).bind(6, c.gpu_uuid).bind(7, c.host).bind(8, std::int64_t{c.driver_version});
    insert_run.bind(9, c.suite).bind(10, added.run.timer).bind(11, source).bind(12, utc_now_iso8601());
    insert_run.step();
    added.added = sqlite3_changes(db_) == 1;
    if (added.added) {
      added.run.id = sqlite3_last_insert_rowid(db_);
      Statement insert(db_,
                       "INSERT INTO results (run_id, benchmark, family, role, mode, headline, status, median_s, ci_low_s, "
                       "ci_high_s, samples, rel_stddev, repetition_medians, min_detectable_change, timer, sm_clock_mhz) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       path_);
      for (const BenchmarkRecord& r : run.benchmarks)
        for (const auto& [mode, timing] : {std::pair{"cold", &r.cold}, std::pair{"hot", &r.hot}}) {
          if (!timing->has_value() && !(r.status != BenchmarkStatus::ok && mode == r.headline_mode)) continue;
          const TimingRecord empty;
          const TimingRecord& t = timing->has_value() ? **timing : empty;
          const MedianInterval interval = t.samples_s.empty() ? MedianInterval{} : median_interval(t.samples_s, 0.95);
          const std::string status = r.status != BenchmarkStatus::ok ? to_string(r.status) : t.summary.count > 0 ? "ok" : "no-samples";
          const bool ok = status == "ok";
          insert.bind(1, added.run.id).bind(2, r.name).bind(3, r.family).bind(4, r.role).bind(5, std::string(mode));
          insert.bind(6, std::int64_t{mode == r.headline_mode}).bind(7, status);
          insert.bind_number_or_null(8, ok ? t.summary.median : 0).bind_number_or_null(9, ok ? interval.low : 0);
          insert.bind_number_or_null(10, ok ? interval.high : 0).bind(11, static_cast<std::int64_t>(t.summary.count));
          insert.bind_number_or_null(12, t.summary.rel_stddev()).bind(13, join_numbers(t.repetition_medians_s));
          insert.bind(14, t.min_detectable_change).bind(15, t.timer).bind_number_or_null(16, t.sm_clock_mhz);
          insert.step();
          insert.reset();
          ++added.rows;
        }
      Statement insert_phase(db_, "INSERT INTO job_phases (run_id, position, phase, seconds) VALUES (?, ?, ?, ?)", path_);
      for (std::size_t i = 0; i < c.job_s.size(); ++i) {
        insert_phase.bind(1, added.run.id).bind(2, static_cast<std::int64_t>(i)).bind(3, c.job_s[i].phase).bind(4, c.job_s[i].seconds);
        insert_phase.step();
        insert_phase.reset();
      }
    }
  });
  if (!added.added) {
    // The run that is already there, for the caller's message.
    Statement existing(db_,
                       std::string("SELECT id FROM runs WHERE commit_sha = ? AND date = ? AND host = ? AND gpu_uuid = ? AND suite = ?"),
                       path_);
    existing.bind(1, c.git_commit).bind(2, c.date).bind(3, c.host).bind(4, c.gpu_uuid).bind(5, c.suite);
    if (existing.step()) added.run.id = existing.integer(0);
  }
  load_runs();
  return added;
}

std::vector<HistorySeries> HistoryDb::series(const SeriesQuery& query) const {
  std::map<std::int64_t, const HistoryRun*> run_by_id;
  for (const HistoryRun& r : runs_) run_by_id[r.id] = &r;
  const std::regex pattern(query.benchmark_regex.empty() ? "." : query.benchmark_regex);
  std::map<std::pair<std::string, std::string>, HistorySeries> by_key;  // (gpu, benchmark)
  Statement rows(db_,
                 "SELECT results.run_id, runs.gpu, benchmark, family, role, mode, median_s, ci_low_s, ci_high_s, samples, "
                 "rel_stddev, repetition_medians, min_detectable_change, results.timer, sm_clock_mhz "
                 "FROM results JOIN runs ON runs.id = results.run_id "
                 "WHERE headline = 1 AND status = 'ok' AND (?1 = '' OR runs.gpu = ?1)",
                 path_);
  rows.bind(1, query.gpu.value_or(""));
  std::map<std::string, bool> name_matches;  // each name's regex search once
  while (rows.step()) {
    const std::string name = rows.text(2);
    auto [match, fresh] = name_matches.try_emplace(name, false);
    if (fresh) match->second = std::regex_search(name, pattern);
    if (!match->second) continue;
    HistorySeries& s = by_key[{rows.text(1), name}];
    if (s.points.empty()) s = {rows.text(1), name, rows.text(3), rows.text(4), rows.text(5), {}};
    s.points.push_back({.run = run_by_id.at(rows.integer(0)),
                        .median_s = rows.number(6),
                        .ci_low_s = rows.number(7),
                        .ci_high_s = rows.number(8),
                        .rel_stddev = rows.number(10),
                        .min_detectable_change = rows.number(12),
                        .sm_clock_mhz = rows.number(14),
                        .samples = static_cast<std::size_t>(rows.integer(9)),
                        .repetition_medians_s = split_numbers(rows.text(11)),
                        .timer = rows.text(13)});
  }
  // Runs are ordered by (date, id), which runs_ holds: sort each series by position in it.
  std::map<const HistoryRun*, std::size_t> position;
  for (std::size_t i = 0; i < runs_.size(); ++i) position[&runs_[i]] = i;
  std::vector<HistorySeries> all;
  for (auto& [key, s] : by_key) {
    std::sort(s.points.begin(), s.points.end(),
              [&](const HistoryPoint& a, const HistoryPoint& b) { return position.at(a.run) < position.at(b.run); });
    if (query.last && s.points.size() > *query.last)
      s.points.erase(s.points.begin(), s.points.end() - static_cast<std::ptrdiff_t>(*query.last));
    all.push_back(std::move(s));
  }
  return all;
}

std::vector<std::pair<HistoryRun, RunResults>> HistoryDb::runs_as_results(const std::string& gpu, const std::string& suite,
                                                                          std::size_t last) const {
  std::vector<const HistoryRun*> chosen;
  for (const HistoryRun& r : runs_)
    if (r.gpu == gpu && r.suite == suite) chosen.push_back(&r);
  if (chosen.size() > last) chosen.erase(chosen.begin(), chosen.end() - static_cast<std::ptrdiff_t>(last));
  std::vector<std::pair<HistoryRun, RunResults>> out;
  Statement rows(db_,
                 "SELECT benchmark, family, role, mode, median_s, repetition_medians, sm_clock_mhz FROM results "
                 "WHERE run_id = ? AND headline = 1 AND status = 'ok' ORDER BY benchmark",
                 path_);
  for (const HistoryRun* r : chosen) {
    RunResults results;
    results.context.gpu_name = r->gpu_name;
    results.context.suite = r->suite;
    results.context.git_commit = r->commit;
    results.context.git_dirty = r->dirty;
    results.context.date = r->date;
    results.context.host = r->host;
    results.context.driver_version = r->driver_version;
    results.context.job_s = r->job_s;
    rows.bind(1, r->id);
    while (rows.step()) {
      BenchmarkRecord b;
      b.name = rows.text(0);
      b.family = rows.text(1);
      b.role = rows.text(2);
      split_name(b);
      b.headline_mode = rows.text(3);
      TimingRecord t;
      t.repetition_medians_s = split_numbers(rows.text(5));
      t.samples_s = t.repetition_medians_s.empty() ? std::vector<double>{rows.number(4)} : t.repetition_medians_s;
      t.summary = summarize(t.samples_s);
      t.summary.median = rows.number(4);
      t.sm_clock_mhz = rows.number(6);
      (b.headline_mode == "hot" ? b.hot : b.cold) = std::move(t);
      results.benchmarks.push_back(std::move(b));
    }
    rows.reset();
    out.emplace_back(*r, std::move(results));
  }
  return out;
}

}  // namespace kgate
