// The calls a search engine needs beyond insert and query (issue "Embedding-grade", points 3, 5
// and 6), driven through the C ABI: a recrawl keeps id and role; ids are reused; a key's stored
// record; what a delete changed; cursors; batch queries; the stored configuration; a read-only
// handle; the log callback, and nothing written to stderr.
//
// Usage: engine_calls DIR   (DIR must not exist; the program creates indexes under it)
// Prints "engine_calls: ok" and exits 0 when every check holds.

#include <neardup.h>

#include "expect.hpp"
#include "pages.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

using testpages::article;
using testpages::paragraph;

// `key` must outlive the page (a string literal, or a string kept alive by the caller).
nd_page page(const char* key, const std::string& html) {
  nd_page p{};
  p.key = key;
  p.key_len = std::strlen(key);
  p.host = "example.com";
  p.host_len = 11;
  p.content = reinterpret_cast<const uint8_t*>(html.data());
  p.content_len = html.size();
  p.content_kind = ND_CONTENT_HTML;
  return p;
}

std::string str(const nd_str& s) { return s.ptr ? std::string(s.ptr, s.len) : std::string(); }

struct Log {
  std::mutex m;
  std::vector<std::pair<uint32_t, std::string>> records;
};

void on_log(void* user, uint32_t level, const uint8_t* msg, size_t len) noexcept {
  auto* log = static_cast<Log*>(user);
  std::lock_guard<std::mutex> g(log->m);
  log->records.emplace_back(level, std::string(reinterpret_cast<const char*>(msg), len));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: engine_calls DIR\n");
    return 2;
  }
  const std::string root = argv[1];
  const std::string path = root + "/ix";
  EXPECT(nd_abi_version() == ND_ABI_VERSION);

  Log log;
  OK(nd_set_log_callback(on_log, &log, ND_LOG_DEBUG));
  EXPECT(nd_set_log_callback(on_log, &log, 9) == ND_INVALID_ARGUMENT);

  nd_index* ix = nullptr;
  // --- misuse of the path (point 6): a NUL byte, a regular file, a directory of other files.
  {
    const std::string with_nul = root + std::string("/a\0b", 4);
    EXPECT(nd_index_open(with_nul.data(), with_nul.size(), nullptr, &ix) == ND_INVALID_ARGUMENT);
    EXPECT(std::strstr(nd_last_error(), "NUL") != nullptr);
    std::string mk = "mkdir -p '" + root + "/other' && echo x > '" + root +
                     "/other/notes.txt' && echo x > '" + root + "/file'";
    EXPECT(std::system(mk.c_str()) == 0);
    const std::string file = root + "/file";
    EXPECT(nd_index_open(file.data(), file.size(), nullptr, &ix) == ND_INVALID_ARGUMENT);
    const std::string msg = nd_last_error();
    EXPECT(msg.find("not a directory") != std::string::npos);
    EXPECT(msg.find("Os {") == std::string::npos);  // a sentence, not a Rust Debug dump
    const std::string other = root + "/other";
    EXPECT(nd_index_open(other.data(), other.size(), nullptr, &ix) == ND_INVALID_ARGUMENT);
    EXPECT(std::strstr(nd_last_error(), "not empty") != nullptr);
    EXPECT(ix == nullptr);
  }
  OK(nd_index_open(path.data(), path.size(), nullptr, &ix));

  // Three families of three near copies each.
  std::vector<std::string> keys, bodies;
  for (unsigned f = 0; f < 3; ++f)
    for (int v = 0; v < 3; ++v) {
      keys.push_back("f" + std::to_string(f) + "-" + std::to_string(v));
      bodies.push_back(article(f + 1, 8, v == 0 ? -1 : v));
    }
  std::vector<nd_verdict> first(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    nd_page p = page(keys[i].c_str(), bodies[i]);
    OK(nd_index_insert(ix, &p, &first[i]));
  }
  EXPECT(first[1].duplicate && str(first[1].similar_to) == "f0-0");

  // --- recrawl: the representative re-inserted unchanged keeps id and role, nothing written.
  {
    nd_page p = page(keys[0].c_str(), bodies[0]);
    nd_verdict v{};
    OK(nd_index_insert(ix, &p, &v));
    EXPECT(v.unchanged && v.unchanged_html && !v.replaced && v.replaced_page == nullptr);
    EXPECT(v.doc_id == first[0].doc_id && v.cluster_id == first[0].cluster_id);
    EXPECT(str(v.representative) == "f0-0");
    nd_verdict_free(&v);
    nd_verdict_free(&v);  // twice: harmless
  }

  // --- get: the stored record.
  {
    nd_record r{};
    OK(nd_index_get(ix, "f0-1", 4, &r));
    EXPECT(str(r.key) == "f0-1" && str(r.representative) == "f0-0" && !r.is_representative);
    EXPECT(str(r.similar_to) == "f0-0" && r.resemble > 0 && r.doc_id == first[1].doc_id);
    EXPECT(r.text_chars == first[1].text_chars && str(r.host) == "example.com");
    nd_record_free(&r);
    nd_record_free(&r);
    EXPECT(nd_index_get(ix, "nobody", 6, &r) == ND_NOT_FOUND);
    EXPECT(nd_index_get(ix, "f0-1", 4, nullptr) == ND_NULL_POINTER);
  }

  // --- cursors: clusters, members, keys.
  size_t pages_seen = 0;
  {
    nd_cursor* c = nullptr;
    OK(nd_index_clusters(ix, &c));
    nd_cursor_item item{};
    bool has = false;
    size_t clusters = 0;
    while (true) {
      OK(nd_cursor_next(c, &item, &has));
      if (!has) break;
      ++clusters;
      std::string rep(item.key, item.key_len);
      EXPECT(std::strlen(item.key) == item.key_len);
      // The cluster's members, and the representative among them.
      nd_cursor* m = nullptr;
      OK(nd_index_members(ix, item.cluster, &m));
      nd_cursor_item mi{};
      bool mhas = false;
      uint64_t n = 0;
      bool rep_seen = false;
      while (true) {
        OK(nd_cursor_next(m, &mi, &mhas));
        if (!mhas) break;
        ++n;
        rep_seen |= std::string(mi.key, mi.key_len) == rep;
        EXPECT(mi.cluster == item.cluster);
      }
      EXPECT(n == item.size && rep_seen);
      pages_seen += n;
      nd_cursor_free(m);
    }
    OK(nd_cursor_next(c, &item, &has));  // stays at the end
    EXPECT(!has);
    EXPECT(clusters >= 3);
    // Closing is refused while a cursor is open.
    EXPECT(nd_index_close(ix) == ND_INVALID_ARGUMENT);
    nd_cursor_free(c);
    nd_cursor_free(nullptr);
    nd_cursor* none = nullptr;
    EXPECT(nd_index_members(ix, 999999, &none) == ND_NOT_FOUND && none == nullptr);
  }
  EXPECT(pages_seen == keys.size());
  {
    nd_cursor* k = nullptr;
    OK(nd_index_keys(ix, &k));
    std::set<std::string> seen;
    nd_cursor_item item{};
    bool has = false;
    for (;;) {
      OK(nd_cursor_next(k, &item, &has));
      if (!has) break;
      seen.insert(std::string(item.key, item.key_len));
    }
    nd_cursor_free(k);
    EXPECT(seen == std::set<std::string>(keys.begin(), keys.end()));
  }

  // --- query_batch: the same verdicts as one query each, and a message per failed entry.
  {
    std::vector<std::string> qs = {article(1, 8, 5), article(2, 8, 4), article(50, 8),
                                   std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8)};
    std::vector<nd_page> qp;
    for (auto& q : qs) qp.push_back(page("", q));
    std::vector<nd_verdict> vs(qs.size());
    std::vector<nd_status> st(qs.size(), ND_PANIC);
    std::vector<nd_str> msg(qs.size(), nd_str{nullptr, 0});
    OK(nd_index_query_batch(ix, qp.data(), qp.size(), vs.data(), st.data(), msg.data()));
    for (size_t i = 0; i < qs.size(); ++i) {
      if (i == 3) {
        EXPECT(st[i] == ND_BINARY_PAGE && msg[i].ptr != nullptr);
        continue;
      }
      EXPECT(st[i] == ND_OK && msg[i].ptr == nullptr);
      nd_verdict one{};
      OK(nd_index_query(ix, qp[i].content, qp[i].content_len, ND_CONTENT_HTML, &one));
      EXPECT(one.duplicate == vs[i].duplicate && str(one.similar_to) == str(vs[i].similar_to));
      nd_verdict_free(&one);
      nd_verdict_free(&vs[i]);
    }
    for (auto& m : msg) nd_str_free(&m);
  }

  // --- delete with its result: a representative hands over.
  {
    nd_deletion d{};
    OK(nd_index_delete(ix, "f1-0", 4, &d));
    EXPECT(d.was_representative && !d.cluster_gone && d.cluster_id == first[3].cluster_id);
    std::string rep = str(d.representative);
    EXPECT(rep == "f1-1" || rep == "f1-2");
    for (size_t i = 0; i < d.moved_len; ++i) {
      nd_record r{};
      OK(nd_index_get(ix, d.moved[i].key.ptr, d.moved[i].key.len, &r));
      EXPECT(r.cluster_id == d.moved[i].cluster_id);
      nd_record_free(&r);
    }
    nd_deletion_free(&d);
    nd_deletion_free(&d);
    // A member's delete: the representative stays.
    std::string member = rep == "f1-1" ? "f1-2" : "f1-1";
    nd_record r{};
    if (nd_index_get(ix, member.data(), member.size(), &r) == ND_OK) {
      bool same = r.cluster_id == d.cluster_id;
      nd_record_free(&r);
      OK(nd_index_delete(ix, member.data(), member.size(), &d));
      EXPECT(!d.was_representative && d.moved_len == 0);
      if (same) EXPECT(str(d.representative) == rep);
      nd_deletion_free(&d);
    }
  }

  // --- ids are reused: a new page takes a freed id; a replace reports what it displaced.
  {
    std::string body = article(60, 8);
    nd_page p = page("new", body);
    nd_verdict v{};
    OK(nd_index_insert(ix, &p, &v));
    EXPECT(v.doc_id < keys.size());
    nd_verdict_free(&v);
    std::string changed = article(61, 8);
    nd_page q = page("f0-0", changed);
    OK(nd_index_insert(ix, &q, &v));
    EXPECT(v.replaced && v.replaced_page != nullptr && v.replaced_page->was_representative);
    nd_verdict_free(&v);
    EXPECT(v.replaced_page == nullptr);
    uint64_t problems = 1;
    OK(nd_index_check(ix, &problems, nullptr));
    EXPECT(problems == 0);
  }

  // --- a daily recrawl that changes every page, many times over: the id high-water marks stay
  // near the pages held (ND_CYCLES sets the number of replaces; fewer under valgrind).
  {
    const char* env = std::getenv("ND_CYCLES");
    const long cycles = env ? std::atol(env) : 20000;
    nd_stats before{};
    OK(nd_index_stats(ix, &before));
    const char* recrawled[] = {"r0", "r1", "r2", "r3"};
    for (long c = 0; c < cycles; ++c) {
      // A short text that changes every time (plain text: no extraction).
      std::string text = paragraph(static_cast<unsigned>(c)).substr(0, 60);
      nd_page p{};
      p.key = recrawled[c % 4];
      p.key_len = 2;
      p.content = reinterpret_cast<const uint8_t*>(text.data());
      p.content_len = text.size();
      p.content_kind = ND_CONTENT_TEXT;
      nd_verdict v{};
      OK(nd_index_insert(ix, &p, &v));
      nd_verdict_free(&v);
    }
    nd_stats after{};
    OK(nd_index_stats(ix, &after));
    EXPECT(after.pages == before.pages + 4);
    EXPECT(after.page_ids <= before.page_ids + 8 && after.cluster_ids <= before.cluster_ids + 8);
    std::printf("%ld replaces: page ids %u -> %u, cluster ids %u -> %u\n", cycles,
                before.page_ids, after.page_ids, before.cluster_ids, after.cluster_ids);
  }

  // --- the stored configuration, open_existing and a read-only handle.
  {
    nd_str json{};
    OK(nd_index_config_json(ix, &json));
    EXPECT(str(json).find("\"representative\"") != std::string::npos);
    nd_str stored{};
    OK(nd_stored_config_json(path.data(), path.size(), &stored));
    EXPECT(str(stored) == str(json));
    nd_str_free(&stored);
    nd_str_free(&json);

    // Beside the writer in this process: allowed, and refuses writes.
    nd_index* ro = nullptr;
    OK(nd_index_open_read_only(path.data(), path.size(), &ro));
    uint64_t n = 0;
    OK(nd_index_len(ro, &n));
    EXPECT(n > 0);
    nd_record r{};
    OK(nd_index_get(ro, "f2-0", 4, &r));
    nd_record_free(&r);
    std::string body = article(70, 8);
    nd_page p = page("x", body);
    nd_verdict v{};
    EXPECT(nd_index_insert(ro, &p, &v) == ND_READ_ONLY);
    EXPECT(nd_index_delete(ro, "f2-0", 4, nullptr) == ND_READ_ONLY);
    EXPECT(nd_index_compact(ro) == ND_READ_ONLY);
    EXPECT(std::strcmp(nd_status_name(ND_READ_ONLY), "ND_READ_ONLY") == 0);
    OK(nd_index_close(ro));
    nd_index_free(ro);

    OK(nd_index_close(ix));
    nd_index_free(ix);
    ix = nullptr;
    OK(nd_index_open_existing(path.data(), path.size(), &ix));
    OK(nd_index_get(ix, "f2-0", 4, &r));
    nd_record_free(&r);
    OK(nd_index_close(ix));
    nd_index_free(ix);
    std::string none = root + "/none";
    EXPECT(nd_index_open_existing(none.data(), none.size(), &ix) == ND_INVALID_ARGUMENT);
  }

  // The library's records went to the callback (at least the opens), none to stderr (the
  // test harness checks stderr is empty).
  {
    std::lock_guard<std::mutex> g(log.m);
    bool opened = false;
    for (auto& r : log.records) opened |= r.second.find("opened") != std::string::npos;
    EXPECT(opened);
  }
  for (auto& v : first) nd_verdict_free(&v);
  OK(nd_set_log_callback(nullptr, nullptr, ND_LOG_ERROR));
  std::printf("engine_calls: ok\n");
  return 0;
}
