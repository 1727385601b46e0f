// The C ABI from C++17: the whole life cycle of an index, a multi-threaded part, a batch, the
// text source callback, and misuse. Built and run by tests/ffi_cpp.rs (also under valgrind).
//
// usage: lifecycle <pages.bin> <workdir> <verdicts.tsv>
//   pages.bin     pages written by tests/ffi_cpp.rs (format below)
//   workdir       an empty directory for the indexes
//   verdicts.tsv  where the verdicts of the sequential inserts go, for comparison with Rust
//
// pages.bin: "NDPAGES1", u32 count, then per page: key, url, host as (u32 length, bytes),
// i64 time, html as (u32 length, bytes); little-endian.
//
// Exit status 0 and "lifecycle: ok" on stdout when every expectation holds.

#include "neardup.h"

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

#define EXPECT(cond)                                                                     \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: expected %s (last error: %s)\n", __FILE__, __LINE__, \
                   #cond, nd_last_error());                                              \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

#define EXPECT_STATUS(call, want)                                                         \
  do {                                                                                    \
    nd_status got_ = (call);                                                              \
    if (got_ != (want)) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n",       \
                   __FILE__, __LINE__, #call, nd_status_name(got_), nd_status_name(want), \
                   nd_last_error());                                                      \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

#define OK(call) EXPECT_STATUS(call, ND_OK)

struct Page {
  std::string key, url, host, html;
  int64_t time = 0;
};

std::vector<Page> read_pages(const char* path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT(in.good());
  char magic[8];
  in.read(magic, 8);
  EXPECT(std::memcmp(magic, "NDPAGES1", 8) == 0);
  auto u32 = [&]() {
    uint32_t v = 0;
    in.read(reinterpret_cast<char*>(&v), 4);
    return v;
  };
  auto str = [&]() {
    std::string s(u32(), '\0');
    in.read(s.data(), static_cast<std::streamsize>(s.size()));
    return s;
  };
  std::vector<Page> pages(u32());
  for (auto& p : pages) {
    p.key = str();
    p.url = str();
    p.host = str();
    in.read(reinterpret_cast<char*>(&p.time), 8);
    p.html = str();
  }
  EXPECT(in.good());
  return pages;
}

nd_page to_nd(const Page& p) {
  nd_page q{};
  q.key = p.key.data();
  q.key_len = p.key.size();
  q.url = p.url.data();
  q.url_len = p.url.size();
  q.host = p.host.data();
  q.host_len = p.host.size();
  q.time = p.time;
  q.content = reinterpret_cast<const uint8_t*>(p.html.data());
  q.content_len = p.html.size();
  q.content_kind = ND_CONTENT_HTML;
  return q;
}

std::string str_of(const nd_str& s) { return s.ptr ? std::string(s.ptr, s.len) : std::string(); }

nd_index* open_index(const std::string& path, nd_options* opts) {
  nd_index* ix = nullptr;
  OK(nd_index_open(path.data(), path.size(), opts, &ix));
  EXPECT(ix != nullptr);
  return ix;
}

nd_options* fast_options() {
  nd_options* o = nullptr;
  OK(nd_options_new(&o));
  OK(nd_options_set_sync_writes(o, false));
  return o;
}

std::string representative_of(nd_index* ix, const std::string& key, uint32_t* cluster) {
  nd_str rep{};
  OK(nd_index_representative(ix, key.data(), key.size(), cluster, &rep));
  std::string s = str_of(rep);
  nd_str_free(&rep);
  return s;
}

std::vector<std::string> members_of(nd_index* ix, uint32_t cluster, size_t page_size) {
  std::vector<std::string> all;
  for (size_t offset = 0;; offset += page_size) {
    nd_key_list list{};
    OK(nd_index_cluster_members(ix, cluster, offset, page_size, &list));
    for (size_t i = 0; i < list.len; ++i) all.push_back(str_of(list.keys[i]));
    size_t n = list.len;
    nd_key_list_free(&list);
    nd_key_list_free(&list);  // freeing twice is harmless
    if (n < page_size) break;
  }
  return all;
}

void expect_clean(nd_index* ix) {
  uint64_t problems = 99;
  nd_str report{};
  OK(nd_index_check(ix, &problems, &report));
  if (problems != 0) std::fprintf(stderr, "check: %s\n", str_of(report).c_str());
  EXPECT(problems == 0);
  nd_str_free(&report);
  // A sample of the pages, checked one by one, is clean too.
  problems = 99;
  OK(nd_index_check_sample(ix, 50, &problems, &report));
  EXPECT(problems == 0);
  nd_str_free(&report);
}

// ----- misuse -----

void misuse(const std::string& dir, const std::vector<Page>& pages) {
  nd_verdict v{};
  const Page& p = pages[0];
  nd_page page = to_nd(p);

  // Null handle and null out-parameters.
  EXPECT_STATUS(nd_index_insert(nullptr, &page, &v), ND_NULL_POINTER);
  EXPECT(std::strlen(nd_last_error()) > 0);
  EXPECT_STATUS(nd_index_open(nullptr, 5, nullptr, nullptr), ND_NULL_POINTER);
  nd_index* none = nullptr;
  EXPECT_STATUS(nd_index_open(nullptr, 5, nullptr, &none), ND_NULL_POINTER);
  EXPECT(none == nullptr);  // out-parameters are written only on success
  EXPECT_STATUS(nd_index_open("", 0, nullptr, &none), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_index_close(nullptr), ND_NULL_POINTER);
  EXPECT_STATUS(nd_options_set_sync_writes(nullptr, true), ND_NULL_POINTER);
  EXPECT_STATUS(nd_options_set_posting_filter_bytes(nullptr, 0), ND_NULL_POINTER);
  EXPECT_STATUS(nd_options_set_block_cache_bytes(nullptr, 1 << 20), ND_NULL_POINTER);
  EXPECT_STATUS(nd_options_set_write_buffer_bytes(nullptr, 1 << 20), ND_NULL_POINTER);
  EXPECT_STATUS(nd_options_set_max_open_files(nullptr, 64), ND_NULL_POINTER);
  EXPECT_STATUS(nd_options_set_sketch_fallback(nullptr, true), ND_NULL_POINTER);
  nd_index_free(nullptr);
  nd_options_free(nullptr);
  nd_verdict_free(nullptr);
  nd_str_free(nullptr);
  nd_key_list_free(nullptr);

  // Bad option values.
  nd_options* o = fast_options();
  EXPECT_STATUS(nd_options_set_representative_policy(o, 7), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_simhash_max_distance(o, 4), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_thresholds(o, 1.5, 0.7), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_lcs_resemble_threshold(o, -0.1), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_lcs_resemble_threshold(nullptr, 0.5), ND_NULL_POINTER);
  OK(nd_options_set_lcs_resemble_threshold(o, 1.0));
  EXPECT_STATUS(nd_options_set_weighted_lcs_resemble_threshold(o, 1.5), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_weighted_lcs_resemble_threshold(nullptr, 0.5), ND_NULL_POINTER);
  OK(nd_options_set_weighted_lcs_resemble_threshold(o, 1.0));
  EXPECT_STATUS(nd_options_set_located_containment(o, 0.8, 1.5), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_located_containment(nullptr, 0.8, 0.5), ND_NULL_POINTER);
  OK(nd_options_set_located_containment(o, 0.8, 1.0));
  EXPECT_STATUS(nd_options_set_max_clusters_verified(o, 0), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_method(o, "nope", 4), ND_INVALID_ARGUMENT);
  EXPECT(std::strstr(nd_last_error(), "single_pass") != nullptr);
  EXPECT_STATUS(nd_options_set_method(nullptr, "lcs", 3), ND_NULL_POINTER);
  OK(nd_options_set_method(o, "lcs", 3));
  EXPECT_STATUS(nd_options_set_frequent(o, 10, 400, 8), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_signature(o, 11, 0, 4, 101, 16, true, 8, 2), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_options_set_signature(o, 11, 7, 4, 101, 17, true, 8, 2), ND_INVALID_ARGUMENT);
  OK(nd_options_set_signature(o, 11, 7, 4, 101, 16, true, 8, 2));  // the defaults
  EXPECT_STATUS(nd_options_set_containment_keys(nullptr, 32, 256, true, 16), ND_NULL_POINTER);
  OK(nd_options_set_containment_keys(o, 32, 256, true, 16));  // the defaults
  {
    // Other containment keys: stored when the index is made.
    nd_options* keyed = fast_options();
    OK(nd_options_set_containment_keys(keyed, 24, 128, false, 0));
    const std::string keys_path = dir + "/containment-keys";
    nd_index* kx = open_index(keys_path, keyed);
    nd_str json{};
    OK(nd_index_config_json(kx, &json));
    const std::string config(json.ptr, json.len);
    EXPECT(config.find("\"local_window\":24") != std::string::npos);
    EXPECT(config.find("\"local_keys\":128") != std::string::npos);
    EXPECT(config.find("sampled_keys") == std::string::npos);     // 0: off, not stored
    EXPECT(config.find("short_page_keys") == std::string::npos);  // false: off
    nd_str_free(&json);
    OK(nd_index_close(kx));
    nd_index_free(kx);
    nd_options_free(keyed);
  }
  OK(nd_options_set_max_page_bytes(o, 1 << 20));

  // No index there and create-if-missing off.
  nd_options* no_create = fast_options();
  OK(nd_options_set_create_if_missing(no_create, false));
  std::string missing = dir + "/missing";
  EXPECT_STATUS(nd_index_open(missing.data(), missing.size(), no_create, &none),
                ND_INVALID_ARGUMENT);
  nd_options_free(no_create);

  std::string path = dir + "/misuse";
  nd_index* ix = open_index(path, o);

  // The same directory twice, under any spelling: one handle per index per process.
  EXPECT_STATUS(nd_index_open(path.data(), path.size(), o, &none), ND_ALREADY_OPEN);
  std::string alias = path + "/.";
  EXPECT_STATUS(nd_index_open(alias.data(), alias.size(), o, &none), ND_ALREADY_OPEN);

  // Another representative policy than the stored one.
  nd_options* other = fast_options();
  OK(nd_options_set_representative_policy(other, ND_POLICY_LONGEST_TEXT));

  // Null and bad buffers.
  EXPECT_STATUS(nd_index_insert(ix, nullptr, &v), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_insert(ix, &page, nullptr), ND_NULL_POINTER);
  nd_page bad = page;
  bad.key = nullptr;
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_NULL_POINTER);
  bad = page;
  bad.key_len = 0;
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_INVALID_ARGUMENT);  // empty key
  bad = page;
  bad.content = nullptr;
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_NULL_POINTER);
  const char invalid_utf8[] = {'k', static_cast<char>(0xff), static_cast<char>(0xfe)};
  bad = page;
  bad.key = invalid_utf8;
  bad.key_len = sizeof invalid_utf8;
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_INVALID_UTF8);
  bad = page;
  bad.content_kind = 9;
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_INVALID_ARGUMENT);
  bad = page;
  bad.content = reinterpret_cast<const uint8_t*>(invalid_utf8);
  bad.content_len = sizeof invalid_utf8;
  bad.content_kind = ND_CONTENT_TEXT;
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_INVALID_UTF8);
  std::string host(300, 'h');
  bad = page;
  bad.host = host.data();
  bad.host_len = host.size();
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_index_delete(ix, invalid_utf8, sizeof invalid_utf8, nullptr), ND_INVALID_UTF8);
  EXPECT_STATUS(nd_index_delete(ix, nullptr, 3, nullptr), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_query(ix, nullptr, 10, ND_CONTENT_HTML, &v), ND_NULL_POINTER);

  // Oversized and binary pages.
  std::string big(2 << 20, 'a');
  bad = page;
  bad.content = reinterpret_cast<const uint8_t*>(big.data());
  bad.content_len = big.size();
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_PAGE_TOO_LARGE);
  std::string binary(4096, '\0');
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>((i * 7919) % 256);
  bad = page;
  bad.content = reinterpret_cast<const uint8_t*>(binary.data());
  bad.content_len = binary.size();
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_BINARY_PAGE);
  EXPECT(v.representative.ptr == nullptr);  // untouched by failures

  // Absent keys and clusters.
  EXPECT_STATUS(nd_index_delete(ix, "nope", 4, nullptr), ND_NOT_FOUND);
  nd_str rep{};
  EXPECT_STATUS(nd_index_representative(ix, "nope", 4, nullptr, &rep), ND_NOT_FOUND);
  nd_key_list list{};
  EXPECT_STATUS(nd_index_cluster_members(ix, 12345, 0, 10, &list), ND_NOT_FOUND);
  EXPECT_STATUS(nd_index_cluster_members(ix, 0, 0, 0, &list), ND_INVALID_ARGUMENT);
  std::string long_key(70000, 'k');
  bad = page;
  bad.key = long_key.data();
  bad.key_len = long_key.size();
  EXPECT_STATUS(nd_index_insert(ix, &bad, &v), ND_INVALID_ARGUMENT);
  uint64_t count = 0;
  nd_stats stats{};
  EXPECT_STATUS(nd_index_len(nullptr, &count), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_stats(nullptr, &stats), ND_NULL_POINTER);
  nd_str metrics{};
  EXPECT_STATUS(nd_index_metrics_json(nullptr, &metrics), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_metrics_json(ix, nullptr), ND_NULL_POINTER);
  EXPECT(metrics.ptr == nullptr);
  EXPECT_STATUS(nd_index_check(nullptr, &count, nullptr), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_delete(nullptr, "k", 1, nullptr), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_query(nullptr, page.content, page.content_len, ND_CONTENT_HTML, &v),
                ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_representative(nullptr, "k", 1, nullptr, &rep), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_cluster_members(nullptr, 0, 0, 10, &list), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_checkpoint(nullptr, "x", 1), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_compact(nullptr), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_insert_batch(nullptr, &page, 1, ND_ORDER_INPUT, &v, nullptr, nullptr,
                                      nullptr, nullptr),
                ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_len(ix, nullptr), ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_insert_batch(ix, nullptr, 1, ND_ORDER_INPUT, nullptr, nullptr, nullptr,
                                      nullptr, nullptr),
                ND_NULL_POINTER);
  EXPECT_STATUS(nd_index_insert_batch(ix, &page, 1, 5, &v, nullptr, nullptr, nullptr, nullptr),
                ND_INVALID_ARGUMENT);

  // Nothing above changed the index.
  uint64_t n = 1;
  OK(nd_index_len(ix, &n));
  EXPECT(n == 0);
  expect_clean(ix);

  // Double close, use after close.
  OK(nd_index_close(ix));
  EXPECT_STATUS(nd_index_close(ix), ND_CLOSED);
  EXPECT_STATUS(nd_index_insert(ix, &page, &v), ND_CLOSED);
  EXPECT_STATUS(nd_index_len(ix, &n), ND_CLOSED);
  nd_index_free(ix);

  // Reopening with another stored setting.
  EXPECT_STATUS(nd_index_open(path.data(), path.size(), other, &none), ND_INCOMPATIBLE_CONFIG);
  EXPECT(std::strstr(nd_last_error(), "representative") != nullptr);
  nd_options_free(other);
  // … and under another method.
  nd_options* shingle = fast_options();
  OK(nd_options_set_max_page_bytes(shingle, 1 << 20));
  OK(nd_options_set_method(shingle, "shingle", 7));
  EXPECT_STATUS(nd_index_open(path.data(), path.size(), shingle, &none), ND_INCOMPATIBLE_CONFIG);
  EXPECT(std::strstr(nd_last_error(), "shingle") != nullptr);
  nd_options_free(shingle);
  nd_options_free(o);

  // Offline compaction of a missing snapshot.
  std::string to = dir + "/never";
  EXPECT_STATUS(nd_compact_snapshot(missing.data(), missing.size(), to.data(), to.size()),
                ND_INVALID_ARGUMENT);
  EXPECT_STATUS(nd_compact_snapshot(nullptr, 4, to.data(), to.size()), ND_NULL_POINTER);
}

// ----- life cycle -----

void lifecycle(const std::string& dir, const std::vector<Page>& pages, const char* tsv) {
  std::string path = dir + "/main";
  nd_options* o = fast_options();
  nd_index* ix = open_index(path, o);

  std::FILE* out = std::fopen(tsv, "w");
  EXPECT(out != nullptr);
  std::map<uint32_t, std::vector<std::string>> clusters;
  const Page* dup = nullptr;
  for (const Page& p : pages) {
    nd_page page = to_nd(p);
    nd_verdict v{};
    OK(nd_index_insert(ix, &page, &v));
    std::fprintf(out, "%s\t%d\t%" PRIu32 "\t%s\t%s\t%.17g\t%.17g\n", p.key.c_str(),
                 v.duplicate ? 1 : 0, v.cluster_id, str_of(v.representative).c_str(),
                 str_of(v.similar_to).c_str(), v.resemble, v.contain);
    EXPECT(v.cluster_id != ND_NO_ID && v.doc_id != ND_NO_ID);
    EXPECT(v.representative.ptr != nullptr && v.representative.ptr[v.representative.len] == '\0');
    if (v.duplicate) {
      EXPECT(v.resemble >= 0.0 && v.resemble <= 1.0 && v.contain >= 0.0 && v.contain <= 1.0);
      if (dup == nullptr) dup = &p;
    }
    clusters[v.cluster_id].push_back(p.key);
    nd_verdict_free(&v);
    nd_verdict_free(&v);  // freeing twice is harmless
    EXPECT(v.representative.ptr == nullptr);
  }
  std::fclose(out);
  EXPECT(dup != nullptr);

  // A query of a page held gives a duplicate without storing anything.
  uint64_t before = 0, after = 0;
  OK(nd_index_len(ix, &before));
  nd_verdict q{};
  OK(nd_index_query(ix, reinterpret_cast<const uint8_t*>(dup->html.data()), dup->html.size(),
                    ND_CONTENT_HTML, &q));
  EXPECT(q.duplicate && q.doc_id == ND_NO_ID && q.write_ns == 0);
  uint32_t dup_cluster = 0;
  std::string dup_rep = representative_of(ix, dup->key, &dup_cluster);
  EXPECT(q.cluster_id == dup_cluster);
  EXPECT(str_of(q.representative) == dup_rep);
  nd_verdict_free(&q);
  OK(nd_index_len(ix, &after));
  EXPECT(before == after && after == pages.size());

  // Members, paged, match what the inserts said; the largest cluster is used below.
  uint32_t big = 0;
  for (auto& [cid, keys] : clusters)
    if (keys.size() > clusters[big].size()) big = cid;
  std::vector<std::string> members = members_of(ix, big, 2);
  EXPECT(members.size() >= 2);
  EXPECT(std::set<std::string>(members.begin(), members.end()) ==
         std::set<std::string>(clusters[big].begin(), clusters[big].end()));

  // Delete the representative of that cluster: another member takes over.
  std::string old_rep = representative_of(ix, members[1], nullptr);
  OK(nd_index_delete(ix, old_rep.data(), old_rep.size(), nullptr));
  EXPECT_STATUS(nd_index_delete(ix, old_rep.data(), old_rep.size(), nullptr), ND_NOT_FOUND);
  std::string survivor = members[0] == old_rep ? members[1] : members[0];
  uint32_t survivor_cluster = 0;
  std::string new_rep = representative_of(ix, survivor, &survivor_cluster);
  EXPECT(new_rep != old_rep);
  OK(nd_index_len(ix, &after));
  EXPECT(after == pages.size() - 1);

  nd_stats st{};
  OK(nd_index_stats(ix, &st));
  EXPECT(st.pages == pages.size() - 1 && st.clusters > 0 && st.clusters <= st.pages &&
         st.bytes > 0);
  nd_str metrics{};
  OK(nd_index_metrics_json(ix, &metrics));
  const std::string mj = str_of(metrics);
  EXPECT(mj.find("\"insert\":{\"count\":") != std::string::npos &&
         mj.find("\"delete\":{\"count\":1,") != std::string::npos &&
         mj.find("\"p99_us\"") != std::string::npos);
  nd_str_free(&metrics);
  expect_clean(ix);

  std::string snap = dir + "/snapshot";
  OK(nd_index_checkpoint(ix, snap.data(), snap.size()));
  EXPECT(nd_index_checkpoint(ix, snap.data(), snap.size()) != ND_OK);  // exists already
  OK(nd_index_compact(ix));
  OK(nd_index_close(ix));
  nd_index_free(ix);

  // Reopen: everything is still there.
  ix = open_index(path, o);
  OK(nd_index_len(ix, &after));
  EXPECT(after == pages.size() - 1);
  uint32_t c2 = 0;
  EXPECT(representative_of(ix, survivor, &c2) == new_rep && c2 == survivor_cluster);
  nd_str gone{};
  EXPECT_STATUS(nd_index_representative(ix, old_rep.data(), old_rep.size(), nullptr, &gone),
                ND_NOT_FOUND);
  EXPECT(gone.ptr == nullptr);
  expect_clean(ix);
  OK(nd_index_close(ix));
  nd_index_free(ix);

  // Offline compaction of the snapshot gives a clean index with the same pages.
  std::string compacted = dir + "/compacted";
  OK(nd_compact_snapshot(snap.data(), snap.size(), compacted.data(), compacted.size()));
  ix = open_index(compacted, o);
  OK(nd_index_len(ix, &after));
  EXPECT(after == pages.size() - 1);
  expect_clean(ix);
  nd_str stats{};
  OK(nd_index_rocksdb_stats(ix, &stats));
  EXPECT(str_of(stats).find("Compaction Stats") != std::string::npos);
  nd_str_free(&stats);
  nd_index_free(ix);  // free without close closes
  // Checked whole, the same.
  std::string checked = dir + "/compacted-checked";
  OK(nd_compact_snapshot_checked(snap.data(), snap.size(), checked.data(), checked.size()));
  nd_options_free(o);
}

// ----- batch -----

struct Progress {
  nd_index* ix = nullptr;
  std::vector<std::pair<size_t, size_t>> calls;
  std::vector<nd_status> reentry;  // statuses of calls made into the index from the callback
};

void on_progress(void* user, size_t done, size_t total) noexcept {
  auto* p = static_cast<Progress*>(user);
  p->calls.emplace_back(done, total);
  if (p->reentry.empty()) {
    // The index is locked for writing while the callback runs: calls into it are refused.
    uint64_t n = 0;
    p->reentry.push_back(nd_index_len(p->ix, &n));
    p->reentry.push_back(nd_index_close(p->ix));
    // Opening an index there is refused too (its handle could not be released there).
    nd_index* other = nullptr;
    p->reentry.push_back(nd_index_open("/tmp/nd-never-created", 21, nullptr, &other));
  }
}

void batch(const std::string& dir, const std::vector<Page>& pages) {
  std::string path = dir + "/batch";
  nd_options* o = fast_options();
  nd_index* ix = open_index(path, o);
  std::vector<nd_page> in;
  for (const Page& p : pages) in.push_back(to_nd(p));
  std::string binary(2048, '\0');
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>((i * 31) % 256);
  nd_page junk = in[0];
  junk.key = "junk";
  junk.key_len = 4;
  junk.content = reinterpret_cast<const uint8_t*>(binary.data());
  junk.content_len = binary.size();
  in.insert(in.begin() + 1, junk);
  nd_page unreadable = in[0];
  unreadable.key = nullptr;
  in.push_back(unreadable);

  std::vector<nd_verdict> verdicts(in.size());
  std::vector<nd_status> statuses(in.size(), ND_PANIC);
  std::vector<nd_str> messages(in.size(), nd_str{nullptr, 0});
  Progress progress;
  progress.ix = ix;
  OK(nd_index_insert_batch(ix, in.data(), in.size(), ND_ORDER_FINGERPRINTS, verdicts.data(),
                           statuses.data(), messages.data(), on_progress, &progress));
  // A message for each failed page, none for the others.
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT((statuses[i] == ND_OK) == (messages[i].ptr == nullptr));
    nd_str_free(&messages[i]);
  }
  EXPECT(progress.reentry.size() == 3 && progress.reentry[0] == ND_INVALID_ARGUMENT &&
         progress.reentry[1] == ND_INVALID_ARGUMENT && progress.reentry[2] == ND_INVALID_ARGUMENT);
  const auto& calls = progress.calls;
  EXPECT(statuses[1] == ND_BINARY_PAGE);
  EXPECT(statuses.back() == ND_NULL_POINTER);
  size_t ok = 0, dups = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (statuses[i] == ND_OK) {
      ++ok;
      dups += verdicts[i].duplicate ? 1 : 0;
      EXPECT(verdicts[i].cluster_id != ND_NO_ID);
    }
    nd_verdict_free(&verdicts[i]);
  }
  EXPECT(ok == pages.size());
  EXPECT(dups > 0);
  EXPECT(!calls.empty() && calls.back().first == calls.back().second);
  uint64_t n = 0;
  OK(nd_index_len(ix, &n));
  EXPECT(n == pages.size());
  expect_clean(ix);
  OK(nd_index_close(ix));
  nd_index_free(ix);
  nd_options_free(o);
}

// ----- threads -----

void threads(const std::string& dir, const std::vector<Page>& pages) {
  std::string path = dir + "/threads";
  nd_options* o = fast_options();
  nd_index* ix = open_index(path, o);
  const size_t per_thread = pages.size() / 3 < 25 ? pages.size() / 3 : 25;
  const int n_threads = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < n_threads; ++t) {
    workers.emplace_back([&, t] {
      for (size_t i = 0; i < per_thread; ++i) {
        Page p = pages[i];
        p.key = "t" + std::to_string(t) + "-" + std::to_string(i);
        // Odd threads insert near-copies: the same page with other markup (a comment in the
        // body, CR LF line ends), as mirrors serve it.
        if (t == 1) {
          size_t at = p.html.find("<body");
          std::string note = "<!-- mirrored copy -->";
          if (at == std::string::npos) p.html = note + p.html; else p.html.insert(at, note);
        } else if (t == 3) {
          std::string crlf;
          for (char c : p.html) {
            if (c == '\n') crlf += '\r';
            crlf += c;
          }
          p.html = crlf;
        }
        nd_page page = to_nd(p);
        nd_verdict v{};
        if (nd_index_insert(ix, &page, &v) != ND_OK) failures++;
        nd_verdict_free(&v);
        // Reads go on beside the writes.
        nd_str rep{};
        if (nd_index_representative(ix, p.key.data(), p.key.size(), nullptr, &rep) != ND_OK)
          failures++;
        nd_str_free(&rep);
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT(failures.load() == 0);
  uint64_t n = 0;
  OK(nd_index_len(ix, &n));
  EXPECT(n == per_thread * n_threads);
  // Copies and near-copies of one page, inserted at the same moment, end in one cluster.
  size_t together = 0;
  for (size_t i = 0; i < per_thread; ++i) {
    std::set<std::string> reps;
    for (int t = 0; t < n_threads; ++t)
      reps.insert(representative_of(ix, "t" + std::to_string(t) + "-" + std::to_string(i),
                                    nullptr));
    together += reps.size() == 1 ? 1 : 0;
  }
  EXPECT(together == per_thread);
  expect_clean(ix);

  // Close while other threads are calling: close waits for them, later calls see ND_CLOSED.
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        nd_str rep{};
        nd_status s = nd_index_representative(ix, "t0-0", 4, nullptr, &rep);
        if (s != ND_OK && s != ND_CLOSED) bad++;
        nd_str_free(&rep);
        if (s == ND_CLOSED) break;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  OK(nd_index_close(ix));
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT(bad.load() == 0);
  nd_index_free(ix);
  nd_options_free(o);
}

// ----- text source -----

struct Source {
  std::unordered_map<std::string, std::string> html;
  std::mutex mu;
  std::atomic<bool> refuse{false};
  std::atomic<int> calls{0};
  nd_index* ix = nullptr;
  std::atomic<int> reentry_refused{0};
};

bool give_text(void* user, const nd_text_request* req, nd_text_sink* sink) noexcept {
  const char* key = req->key;
  const size_t key_len = req->key_len;
  auto* src = static_cast<Source*>(user);
  if (src->calls++ == 0) {
    uint64_t n = 0;
    if (nd_index_len(src->ix, &n) == ND_INVALID_ARGUMENT) src->reentry_refused++;
  }
  if (src->refuse.load()) return false;
  std::lock_guard<std::mutex> g(src->mu);
  auto it = src->html.find(std::string(key, key_len));
  if (it == src->html.end()) return false;
  return nd_text_sink_put(sink, reinterpret_cast<const uint8_t*>(it->second.data()),
                          it->second.size(), ND_CONTENT_HTML) == ND_OK;
}

std::vector<std::string> read_lines(const char* path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

void text_source(const std::string& dir, const std::vector<Page>& pages, const char* tsv) {
  Source src;
  for (const Page& p : pages) src.html[p.key] = p.html;
  std::string path = dir + "/external";
  nd_options* o = fast_options();
  OK(nd_options_set_store_texts(o, false));
  // With a small block cache too: it changes no verdict.
  OK(nd_options_set_block_cache_bytes(o, 1 << 20));
  OK(nd_options_set_text_source(o, give_text, &src));
  nd_index* ix = open_index(path, o);
  src.ix = ix;
  // The same verdicts as the index that stores its texts.
  std::vector<std::string> want = read_lines(tsv);
  EXPECT(want.size() == pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    nd_page page = to_nd(pages[i]);
    nd_verdict v{};
    OK(nd_index_insert(ix, &page, &v));
    char line[4096];
    std::snprintf(line, sizeof line, "%s\t%d\t%" PRIu32 "\t%s\t%s\t%.17g\t%.17g",
                  pages[i].key.c_str(), v.duplicate ? 1 : 0, v.cluster_id,
                  str_of(v.representative).c_str(), str_of(v.similar_to).c_str(), v.resemble,
                  v.contain);
    if (want[i] != line)
      std::fprintf(stderr, "stored texts: %s\ntext source:  %s\n", want[i].c_str(), line);
    EXPECT(want[i] == line);
    nd_verdict_free(&v);
  }
  EXPECT(src.calls.load() > 0);
  EXPECT(src.reentry_refused.load() == 1);
  expect_clean(ix);

  // Deleting a representative re-verifies its members through the source.
  const Page* dup = nullptr;  // the longest page that is not its cluster's representative
  for (const Page& p : pages) {
    uint32_t cid = 0;
    std::string rep = representative_of(ix, p.key, &cid);
    if (rep != p.key && (dup == nullptr || p.html.size() > dup->html.size())) dup = &p;
  }
  EXPECT(dup != nullptr);
  std::string rep = representative_of(ix, dup->key, nullptr);
  OK(nd_index_delete(ix, rep.data(), rep.size(), nullptr));
  expect_clean(ix);

  // A source that cannot give a text makes the call that needs it fail, and nothing changes.
  uint64_t before = 0, after = 0;
  OK(nd_index_len(ix, &before));
  src.refuse = true;
  Page copy = *dup;  // not an exact copy: an exact one is decided by its content hash alone
  copy.key = "copy-of-" + dup->key;
  size_t at = copy.html.rfind("</p>");
  EXPECT(at != std::string::npos);
  copy.html.insert(at, " Updated on Tuesday evening with a statement from the regional office.");
  nd_page page = to_nd(copy);
  nd_verdict v{};
  EXPECT_STATUS(nd_index_insert(ix, &page, &v), ND_TEXT_UNAVAILABLE);
  EXPECT(std::strstr(nd_last_error(), "text source") != nullptr);
  OK(nd_index_len(ix, &after));
  EXPECT(before == after);
  src.refuse = false;
  OK(nd_index_insert(ix, &page, &v));
  EXPECT(v.duplicate && !v.exact);
  nd_verdict_free(&v);
  expect_clean(ix);
  OK(nd_index_close(ix));
  nd_index_free(ix);

  // The setting is stored: reopening with texts on is refused.
  nd_options* stored = fast_options();
  nd_index* none = nullptr;
  EXPECT_STATUS(nd_index_open(path.data(), path.size(), stored, &none), ND_INCOMPATIBLE_CONFIG);
  nd_options_free(stored);
  nd_options_free(o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <pages.bin> <workdir> <verdicts.tsv>\n", argv[0]);
    return 2;
  }
  EXPECT(nd_abi_version() == ND_ABI_VERSION);
  EXPECT(std::strlen(nd_version()) > 0);
  EXPECT(std::string(nd_status_name(ND_NOT_FOUND)) == "ND_NOT_FOUND");
  std::vector<Page> pages = read_pages(argv[1]);
  EXPECT(pages.size() >= 30);
  std::string dir = argv[2];
  auto timed = [](const char* name, auto&& phase) {
    auto t0 = std::chrono::steady_clock::now();
    phase();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
    std::printf("%s: %lld ms\n", name, static_cast<long long>(ms));
    std::fflush(stdout);
  };
  timed("misuse", [&] { misuse(dir, pages); });
  timed("lifecycle", [&] { lifecycle(dir, pages, argv[3]); });
  timed("batch", [&] { batch(dir, pages); });
  timed("threads", [&] { threads(dir, pages); });
  timed("text source", [&] { text_source(dir, pages, argv[3]); });
  std::printf("lifecycle: ok (%zu pages)\n", pages.size());
  return 0;
}
