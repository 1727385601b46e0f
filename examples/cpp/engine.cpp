// A small crawl engine on neardup's C++ header (include/neardup.hpp): open an index, insert a
// few pages as they are crawled, ask for near-duplicate verdicts, query a page without storing
// it, walk the pages and clusters with cursors, recrawl, delete, read the metrics, reopen, and
// the same through the non-throwing Result<T> calls.
//
// Build (after `cargo build --release`):
//   g++ -std=c++17 examples/cpp/engine.cpp -Iinclude -Ltarget/release -lneardup
//       -Wl,-rpath,target/release -o engine
// Run: ./engine DIR   (an index is created in DIR/index; DIR/index must not exist)
// `cargo test --release --test ffi_hpp` builds it and runs it, plainly and under ASan+UBSan.

#include "neardup.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

// A crawled page: the engine owns the bytes, a PageRef only points at them.
struct Crawled {
  std::string url;
  std::string html;
  int64_t time;
};

// The page to insert: a view of the crawled bytes, which outlive the call.
neardup::PageRef ref(const Crawled& c) {
  neardup::PageRef page(c.url, c.html);
  page.with_url(c.url).with_time(c.time);
  return page;
}

std::string article(const std::string& title, const std::string& extra) {
  return "<html><head><title>" + title + "</title></head><body><article><h1>" + title +
         "</h1><p>The regional council published its report on the harbour on Monday, "
         "covering the bridge, the ferry terminal and the schools of the old town.</p>"
         "<p>Officials said the figures for the eastern districts would be revised in the "
         "spring, once the audit of the port authority has been finished.</p>"
         "<p>Residents may comment on the plans until the end of the month at the town hall, "
         "where the drawings are on display every weekday.</p>" +
         extra + "</article></body></html>";
}

std::string other_article() {
  return "<html><body><article><h1>Orchestra</h1><p>The city orchestra opens its season "
         "with a programme of symphonies by composers from the north.</p><p>Tickets went on "
         "sale this morning and the first two concerts sold out within an hour.</p><p>The "
         "conductor said the rehearsals had taken place in the new hall since August.</p>"
         "</article></body></html>";
}

void print_verdict(const std::string& key, const neardup::Verdict& v) {
  std::printf("%-32s %s cluster=%u representative=%s", key.c_str(),
              v.unchanged ? "unchanged" : (v.duplicate ? "near-dup " : "new      "),
              v.cluster_id.value_or(0), v.representative.value_or("-").c_str());
  if (v.similar_to)
    std::printf(" similar_to=%s resemble=%.2f contain=%.2f", v.similar_to->c_str(), v.resemble,
                v.contain);
  std::printf("\n");
}

// The throwing style: a neardup::Error ends the crawl. False when the metrics disagree with
// the work done.
bool crawl(const std::string& path) {
  neardup::Options options;
  options.sync_writes(false);  // survives a process crash, not a power loss
  neardup::Index ix = neardup::Index::open(path, options);

  const std::vector<Crawled> crawled = {
      {"https://news.example/harbour", article("Harbour report", ""), 1700000000},
      {"https://mirror.example/harbour",
       article("Harbour report", "<p>Shared from news.example.</p>"), 1700000300},
      {"https://arts.example/orchestra", other_article(), 1700000600},
  };
  for (const Crawled& c : crawled) print_verdict(c.url, ix.insert(ref(c)));

  // Would a new page be a near duplicate? (nothing is stored)
  const std::string candidate = article("Harbour report", "<p>Updated at noon.</p>");
  const neardup::Verdict q = ix.query(candidate);
  std::printf("query: duplicate=%d of %s\n", q.duplicate, q.similar_to.value_or("-").c_str());

  // The same for several pages at once, in parallel.
  const std::vector<neardup::BatchResult> qs = ix.query_batch({candidate, other_article()});
  for (const neardup::BatchResult& r : qs)
    std::printf("query_batch: %s duplicate=%d\n", neardup::to_string(r.status).c_str(),
                r.ok() && r.value().duplicate);

  // A recrawl of an unchanged page writes nothing.
  const neardup::Verdict again = ix.insert(ref(crawled[0]));
  print_verdict(crawled[0].url, again);

  // Cursors: every cluster, and every page of the biggest one.
  for (const neardup::CursorItem& c : ix.clusters()) {
    std::printf("cluster %u: %llu page(s), led by %s\n", c.cluster_id,
                static_cast<unsigned long long>(c.size), c.key.c_str());
    for (const neardup::CursorItem& m : ix.members(c.cluster_id))
      std::printf("  member %s\n", m.key.c_str());
  }

  // Delete the representative: the mirror leads the cluster now.
  const neardup::Deletion d = ix.erase(crawled[0].url);
  std::printf("deleted %s: was representative=%d, now led by %s\n", crawled[0].url.c_str(),
              d.was_representative, d.representative.value_or("nobody").c_str());

  // Metrics since the open, as JSON (a monitoring agent would parse it): four inserts, one of
  // them the unchanged recrawl; latencies, RocksDB's stall figures and memory by part beside.
  const std::string metrics = ix.metrics_json();
  const bool counted =
      metrics.find("\"insert\":{\"count\":4,\"errors\":0,\"unchanged\":1,") != std::string::npos;
  std::printf("metrics: %zu bytes of JSON, 4 inserts counted: %s\n", metrics.size(),
              counted ? "yes" : "no");

  // Reopen in place (`ix = Index::open(path)` would throw ND_ALREADY_OPEN).
  ix.reopen();
  std::printf("after reopen: %llu page(s)\n", static_cast<unsigned long long>(ix.len()));
  ix.close();
  return counted;
}

// The non-throwing style: every call returns a neardup::Result.
bool crawl_without_exceptions(const std::string& path) {
  neardup::Result<neardup::Index> opened = neardup::Index::try_open_existing(path);
  if (!opened) {
    std::printf("open failed: %s %s\n", neardup::to_string(opened.status()).c_str(),
                opened.message().c_str());
    return false;
  }
  neardup::Index ix = std::move(opened).value();

  // A page the index refuses: the failure is a value, not an exception.
  const neardup::Result<neardup::Verdict> refused = ix.try_insert(neardup::PageRef("", "<p>x</p>"));
  std::printf("empty key: %s\n", neardup::to_string(refused.status()).c_str());

  const std::string html = article("Harbour report", "<p>Second edition.</p>");
  const neardup::Result<neardup::Verdict> v = ix.try_insert(neardup::PageRef("https://c.example/h", html));
  if (!v) return false;
  print_verdict("https://c.example/h", *v);

  const neardup::Result<neardup::Record> gone = ix.try_get("https://news.example/harbour");
  std::printf("deleted page: %s\n", neardup::to_string(gone.status()).c_str());
  const neardup::Result<neardup::Record> rec = ix.try_get("https://c.example/h");
  if (rec) std::printf("record: cluster %u, representative %s\n", rec->cluster_id,
                       rec->representative.c_str());

  const neardup::Result<neardup::Deletion> none = ix.try_erase("https://never.example/");
  std::printf("delete missing: %s\n", neardup::to_string(none.status()).c_str());

  const neardup::Result<neardup::Verdict> q = ix.try_query(other_article());
  const neardup::Result<void> closed = ix.try_close();
  return q.ok() && q->duplicate && closed.ok() && refused.status() == neardup::Status::InvalidArgument &&
         gone.status() == neardup::Status::NotFound && none.status() == neardup::Status::NotFound;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: engine DIR\n");
    return 2;
  }
  const std::string path = std::string(argv[1]) + "/index";
  try {
    if (!crawl(path)) return 1;
  } catch (const neardup::Error& e) {
    std::fprintf(stderr, "neardup: %s (status %s)\n", e.what(),
                 neardup::to_string(e.status()).c_str());
    return 1;
  }
  if (!crawl_without_exceptions(path)) return 1;
  std::printf("engine: ok\n");
  return 0;
}
