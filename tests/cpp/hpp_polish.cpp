// The polish of `include/neardup.hpp` (issue #33, item 6), at run time: `enum class Status` and
// its names, Error::status(), the non-throwing family (Result<T>: try_open, try_insert,
// try_query, try_get, try_erase, try_close, try_reopen) next to the throwing calls, the batch
// overloads (pointer + size, std::vector, braced lists with `{}` an empty batch, std::span in
// C++20) and their default order (input, issue #33 item 7), and PageRef from string literals,
// std::string_view and named strings. What must not compile (a PageRef from a temporary
// std::string, a dropped result) is tests/ffi_hpp.rs's.
//
// Usage: hpp_polish DIR   (DIR exists and is empty)
// Prints "hpp_polish: ok" and exits 0 when every check holds.

#include <neardup.hpp>

#include "pages.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#define EXPECT(c)                                                                  \
  do {                                                                             \
    if (!(c)) {                                                                    \
      std::printf("%s:%d: expected %s\n", __FILE__, __LINE__, #c);                 \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

namespace {

using neardup::BatchResult;
using neardup::Index;
using neardup::Options;
using neardup::PageRef;
using neardup::Result;
using neardup::Status;
using neardup::Verdict;

Options fast() {
  Options o;
  o.sync_writes(false);
  return o;
}

// --- Status mirrors every ND_* code, with its name; Error exposes it.
void statuses() {
  static_assert(std::is_same_v<std::underlying_type_t<Status>, uint32_t>);
  static_assert(neardup::to_c(Status::ReadOnly) == ND_READ_ONLY);
  static_assert(neardup::to_status(ND_NOT_FOUND) == Status::NotFound);
  const Status all[] = {
      Status::Ok,          Status::InvalidArgument,    Status::NullPointer,
      Status::InvalidUtf8, Status::PageTooLarge,       Status::BinaryPage,
      Status::NotFound,    Status::Storage,            Status::Corruption,
      Status::IncompatibleFormat, Status::IncompatibleConfig, Status::CheckFailed,
      Status::Poisoned,    Status::Full,               Status::Io,
      Status::Closed,      Status::Panic,              Status::TextUnavailable,
      Status::AlreadyOpen, Status::WrongProcess,       Status::ReadOnly,
  };
  // Every code from 0 to ND_READ_ONLY, each with its own name, and no more.
  EXPECT(sizeof(all) / sizeof(all[0]) == static_cast<size_t>(ND_READ_ONLY) + 1);
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    EXPECT(static_cast<size_t>(all[i]) == i);
    EXPECT(neardup::to_string(all[i]) == nd_status_name(static_cast<nd_status>(i)));
    EXPECT(neardup::to_string(all[i]) != "ND_UNKNOWN");
  }
  EXPECT(neardup::to_string(Status::NotFound) == "ND_NOT_FOUND");
  EXPECT(std::string(neardup::status_name(Status::AlreadyOpen)) == "ND_ALREADY_OPEN");
  // Mixed comparisons, both sides, for code written against nd_status.
  EXPECT(Status::Closed == ND_CLOSED && ND_CLOSED == Status::Closed);
  EXPECT(Status::Closed != ND_IO && ND_IO != Status::Closed);

  try {
    (void)Index::open_existing("no-such-index");
    EXPECT(false);
  } catch (const neardup::Error& e) {
    const Status s = e.status();
    EXPECT(s == Status::InvalidArgument);
    EXPECT(e.c_status() == ND_INVALID_ARGUMENT);
    EXPECT(e.status() == ND_INVALID_ARGUMENT);
    EXPECT(std::string(e.what()).rfind("ND_INVALID_ARGUMENT: ", 0) == 0);
  }
}

// --- Result<T>: the try_ family next to the throwing calls.
void results(const std::string& root) {
  const std::string path = root + "/results";
  const std::string body = testpages::article(7, 8);
  const std::string near = testpages::article(7, 8, 3);

  Result<Index> missing = Index::try_open_existing(path);
  EXPECT(!missing && !missing.ok() && missing.status() == Status::InvalidArgument);
  EXPECT(!missing.message().empty());
  bool threw = false;
  try {
    (void)missing.value();
  } catch (const neardup::Error& e) {
    threw = e.status() == Status::InvalidArgument && missing.message() == e.message();
  }
  EXPECT(threw);
  EXPECT(missing.error().status() == Status::InvalidArgument);

  Result<Index> opened = Index::try_open(path, fast());
  EXPECT(opened.ok() && opened.status() == Status::Ok && opened.message().empty());
  Index ix = std::move(opened).value();

  // A second open in this process: AlreadyOpen, with open's advice, and no exception.
  Result<Index> again = Index::try_open(path, fast());
  EXPECT(again.status() == Status::AlreadyOpen);
  EXPECT(again.message().find("reopen()") != std::string::npos);

  const std::string key = "https://a.example/x";
  Result<Verdict> first = ix.try_insert(PageRef(key, body));
  EXPECT(first && !first->duplicate && first->doc_id.has_value());
  Result<Verdict> second = ix.try_insert(PageRef("https://b.example/y", near));
  EXPECT(second.ok() && second->duplicate && second->similar_to == key);
  Result<Verdict> empty_key = ix.try_insert(PageRef("", body));
  EXPECT(!empty_key && empty_key.status() == Status::InvalidArgument);
  EXPECT(!empty_key.message().empty());
  const Verdict fallback = ix.try_insert(PageRef("", body)).value_or(Verdict{});
  EXPECT(!fallback.duplicate && !fallback.doc_id);

  Result<Verdict> q = ix.try_query(near);
  EXPECT(q.ok() && (*q).duplicate && !q->doc_id);
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  EXPECT(ix.try_query(png).status() == Status::BinaryPage);

  Result<neardup::Record> r = ix.try_get(key);
  EXPECT(r.ok() && r->key == key && r->is_representative);
  EXPECT(ix.try_get("nope").status() == Status::NotFound);
  EXPECT(!ix.find("nope"));

  EXPECT(ix.try_erase("nope").status() == Status::NotFound);
  Result<neardup::Deletion> d = ix.try_erase(key);
  EXPECT(d.ok() && d->was_representative);

  EXPECT(ix.try_reopen().ok());
  EXPECT(ix.len() == 1);
  EXPECT(ix.try_close().ok());
  Result<void> twice = ix.try_close();
  EXPECT(!twice && twice.status() == Status::Closed && !twice.message().empty());
  EXPECT(ix.try_insert(PageRef(key, body)).status() == Status::Closed);
  EXPECT(ix.try_query(body).status() == Status::Closed);
  EXPECT(ix.try_reopen().status() == Status::Closed);

  // A moved-from Index: NullPointer, not an exception.
  Index moved = Index::open(path, fast());
  Index holder = std::move(moved);
  EXPECT(moved.try_get(key).status() == Status::NullPointer);  // NOLINT(bugprone-use-after-move)
  // The throwing calls stay as they were.
  bool closed_threw = false;
  try {
    (void)ix.query(body);
  } catch (const neardup::Error& e) {
    closed_threw = e.status() == Status::Closed;
  }
  EXPECT(closed_threw);
}

// --- Batch overloads: `{}` is an empty batch, braced lists, pointer + size, spans.
void batches(const std::string& root) {
  Index ix = Index::open(root + "/batches", fast());
  const std::string a = testpages::article(21, 8);
  const std::string a2 = testpages::article(21, 8, 2);
  const std::string b = testpages::article(22, 8);

  EXPECT(ix.query_batch({}).empty());
  EXPECT(ix.insert_batch({}).empty());
  EXPECT(ix.insert_batch({}, neardup::Order::Input).empty());
  EXPECT(ix.query_batch(nullptr, 0).empty());
  EXPECT(ix.insert_batch(nullptr, 0).empty());

  std::vector<BatchResult> in = ix.insert_batch({PageRef("a", a), PageRef("b", b)},
                                                neardup::Order::Input);
  EXPECT(in.size() == 2 && in[0].ok() && in[1].ok() && !in[1].value().duplicate);

  // Braced pages; braced contents (a vector of std::string_view) land in the contents overload.
  std::vector<BatchResult> qp = ix.query_batch({PageRef("", a2), PageRef("", b)});
  EXPECT(qp.size() == 2 && qp[0].value().duplicate && qp[0].value().similar_to == "a");
  std::vector<BatchResult> qc = ix.query_batch({a2, b});
  EXPECT(qc.size() == 2 && qc[0].value().similar_to == "a" && qc[1].value().exact);

  // Pointer + size (an array), and the per-page Status.
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  const PageRef arr[] = {PageRef("", a2), PageRef("", png)};
  std::vector<BatchResult> qa = ix.query_batch(arr, 2);
  EXPECT(qa.size() == 2 && qa[0].ok() && qa[1].status == Status::BinaryPage);
  EXPECT(qa[1].status == ND_BINARY_PAGE && !qa[1].message.empty() && !qa[1].verdict);
  std::vector<BatchResult> ia = ix.insert_batch(arr, 1, neardup::Order::Input);
  EXPECT(ia.size() == 1 && !ia[0].ok() && ia[0].status == Status::InvalidArgument);

#ifdef NEARDUP_HAS_SPAN
  const std::array<PageRef, 2> span_pages{PageRef("", a2), PageRef("", b)};
  std::vector<BatchResult> qs = ix.query_batch(std::span<const PageRef>(span_pages));
  EXPECT(qs.size() == 2 && qs[1].value().exact);
  std::vector<BatchResult> is = ix.insert_batch(std::span<const PageRef>(span_pages.data(), 0));
  EXPECT(is.empty());
  std::printf("hpp_polish: spans\n");
#endif
}

// --- The default batch order is the order given (issue #33, item 7): of two near duplicates the
// one given first leads their cluster, even when the later one has more fingerprints;
// Order::Fingerprints, asked for, puts that one first.
void default_order(const std::string& root) {
  const std::string short_page = testpages::article(23, 8);
  const std::string long_page = testpages::article(23, 12);  // the same eight paragraphs, and four
  const std::array<PageRef, 2> pages{PageRef("short", short_page), PageRef("long", long_page)};
  {
    Index ix = Index::open(root + "/order-default", fast());
    std::vector<BatchResult> r = ix.insert_batch(pages.data(), pages.size());
    EXPECT(r.size() == 2 && r[0].ok() && r[1].ok() && r[1].value().duplicate);
    EXPECT(ix.get("short").is_representative && ix.get("long").representative == "short");
  }
  {
    Index ix = Index::open(root + "/order-fingerprints", fast());
    std::vector<BatchResult> r =
        ix.insert_batch(pages.data(), pages.size(), neardup::Order::Fingerprints);
    EXPECT(r.size() == 2 && r[0].ok() && r[0].value().duplicate);
    EXPECT(ix.get("long").is_representative && ix.get("short").representative == "long");
  }
}

// --- PageRef accepts what outlives the call: literals, views, named strings; the with_ setters.
void pagerefs(const std::string& root) {
  Index ix = Index::open(root + "/pagerefs", fast());
  const std::string body = testpages::article(31, 8);
  const std::string key = "named";
  const std::string_view view_key = "view";
  const char* c_key = "c-string";

  PageRef literal("literal", body);
  PageRef named(key, body);
  PageRef viewed(view_key, std::string_view(body));
  PageRef c(c_key, body, neardup::ContentKind::Html);
  const std::string url = "https://news.example/a";
  c.with_url(url).with_time(1700000000);
  PageRef hosted = PageRef("hosted", body).with_host("mirror.example");
  for (const PageRef& p : {literal, named, viewed, c, hosted}) EXPECT(ix.insert(p).cluster_id);
  EXPECT(ix.get("c-string").host == "news.example" && ix.get("c-string").time == 1700000000);
  EXPECT(ix.get("hosted").host == "mirror.example");
  EXPECT(ix.len() == 5);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::printf("usage: hpp_polish DIR\n");
    return 2;
  }
  const std::string root = argv[1];
  statuses();
  results(root);
  batches(root);
  default_order(root);
  pagerefs(root);
  std::printf("hpp_polish: ok\n");
  return 0;
}
