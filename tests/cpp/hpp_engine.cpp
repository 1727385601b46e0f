// The C++ header `include/neardup.hpp` (issue #13, point 7), used alone: every wrapper, and the
// three faults C++ users hit with the C ABI — a verdict copied into a container and freed twice,
// an empty nd_str ({NULL, 0}) given to std::string, and nd_last_error() read after another call
// — cannot happen through it. Also: errors as exceptions with status and message, exceptions
// thrown by callbacks kept out of Rust, cursors and close, a versioned text source.
//
// Usage: hpp_engine DIR   (DIR exists and is empty; the program creates indexes under it)
// Prints "hpp_engine: ok" and exits 0 when every check holds.

#include <neardup.hpp>

#include "pages.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#define EXPECT(c)                                                                  \
  do {                                                                             \
    if (!(c)) {                                                                    \
      std::printf("%s:%d: expected %s\n", __FILE__, __LINE__, #c);                 \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

// `expr` throws neardup::Error with `want` as its status and a message; `e` is in scope for
// `more`, a further check on it.
#define EXPECT_ERROR(expr, want, more)                                                      \
  do {                                                                                      \
    bool thrown_ = false;                                                                   \
    try {                                                                                   \
      (void)(expr);                                                                         \
    } catch (const neardup::Error& e) {                                                     \
      thrown_ = true;                                                                       \
      if (e.status() != (want) || std::string(e.message()).empty() || !(more)) {           \
        std::printf("%s:%d: %s threw %s\n", __FILE__, __LINE__, #expr, e.what());           \
        std::exit(1);                                                                       \
      }                                                                                     \
    }                                                                                       \
    if (!thrown_) {                                                                         \
      std::printf("%s:%d: %s did not throw %s\n", __FILE__, __LINE__, #expr, #want);        \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

namespace {

using neardup::BatchResult;
using neardup::Change;
using neardup::ChangeKind;
using neardup::Changes;
using neardup::ContentKind;
using neardup::Cursor;
using neardup::CursorItem;
using neardup::Deletion;
using neardup::Error;
using neardup::Index;
using neardup::NearDuplicate;
using neardup::NearOptions;
using neardup::Options;
using neardup::PageRef;
using neardup::Record;
using neardup::Result;
using neardup::Status;
using neardup::Verdict;

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

using testpages::article;
using testpages::paragraph;

// Pages whose keys and bodies live as long as the set (PageRef only points at them).
struct Pages {
  std::vector<std::string> keys, bodies;
  void add(std::string key, std::string body) {
    keys.push_back(std::move(key));
    bodies.push_back(std::move(body));
  }
  PageRef ref(size_t i) const {
    PageRef p(keys[i], bodies[i]);
    p.host = "example.com";
    return p;
  }
  std::vector<PageRef> refs() const {
    std::vector<PageRef> out;
    for (size_t i = 0; i < keys.size(); ++i) out.push_back(ref(i));
    return out;
  }
};

// Three families of three near copies each: f<family>-<variant>.
Pages families(unsigned first_seed) {
  Pages p;
  for (unsigned f = 0; f < 3; ++f)
    for (int v = 0; v < 3; ++v)
      p.add("f" + std::to_string(f) + "-" + std::to_string(v),
            article(first_seed + f, 8, v == 0 ? -1 : v));
  return p;
}

Options fast() {
  Options o;
  o.sync_writes(false);
  return o;
}

struct Log {
  std::mutex m;
  std::vector<std::pair<neardup::LogLevel, std::string>> records;
};

// --- errors carry their status and the message of the call that failed.
void errors(const std::string& root) {
  neardup::check(ND_OK);
  EXPECT_ERROR(neardup::check(nd_index_len(nullptr, nullptr)), ND_NULL_POINTER, true);
  EXPECT_ERROR(Options().thresholds(2.0, 0.5), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(Options().lcs_resemble_threshold(1.5), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(Options().weighted_lcs_resemble_threshold(-0.5), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(Options().located_containment(0.8, -0.5), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(Options().simhash_max_distance(5), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(Options().method("nope"), ND_INVALID_ARGUMENT, contains(e.what(), "winnow"));
  EXPECT_ERROR(Index::open_existing(root + "/none"), ND_INVALID_ARGUMENT,
               contains(e.what(), "ND_INVALID_ARGUMENT: "));
  EXPECT(std::string(neardup::status_name(ND_READ_ONLY)) == "ND_READ_ONLY");
  EXPECT(neardup::abi_matches() && !std::string(neardup::version()).empty());

  Index ix = Index::open(root + "/errors", fast());
  const std::string body = article(900, 6);
  EXPECT_ERROR(ix.insert(PageRef("", body)), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(ix.insert(PageRef("k", body, static_cast<ContentKind>(7))), ND_INVALID_ARGUMENT,
               true);
  EXPECT_ERROR(ix.query(std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8)), ND_BINARY_PAGE, true);
  EXPECT_ERROR(ix.get("missing"), ND_NOT_FOUND, contains(e.message(), "missing"));
  EXPECT_ERROR(ix.erase("missing"), ND_NOT_FOUND, true);
  EXPECT_ERROR(ix.representative("missing"), ND_NOT_FOUND, true);
  EXPECT_ERROR(ix.members(123456), ND_NOT_FOUND, true);
  EXPECT_ERROR(ix.cluster_members(123456, 0, 10), ND_NOT_FOUND, true);
  EXPECT(!ix.find("missing").has_value());

  // The message belongs to the failing call even when other calls follow it in the same
  // expression or before it is read (with the C ABI, nd_last_error() would be empty by then).
  try {
    (void)ix.get("missing");
    EXPECT(false);
  } catch (const Error& e) {
    EXPECT(ix.len() == 0 && ix.stats().pages == 0);  // successful calls in between
    EXPECT(std::string(nd_last_error()).empty());    // the C ABI's slot is cleared by now
    EXPECT(contains(e.message(), "missing") && e.status() == ND_NOT_FOUND);
  }

  // A moved-from handle is NULL: calls throw, nothing crashes.
  Index moved = std::move(ix);
  EXPECT_ERROR(ix.len(), ND_NULL_POINTER, true);  // NOLINT(bugprone-use-after-move)
  EXPECT(moved.len() == 0);
  moved.close();
  EXPECT_ERROR(moved.len(), ND_CLOSED, true);
  EXPECT_ERROR(moved.close(), ND_CLOSED, true);
}

// --- insert, query, get, representative, erase, replace; verdicts copied freely.
void engine(const std::string& root) {
  const std::string path = root + "/ix";
  Index ix = Index::open(path, fast());
  const Pages pages = families(1);

  std::vector<Verdict> first;
  for (size_t i = 0; i < pages.keys.size(); ++i) first.push_back(ix.insert(pages.ref(i)));
  EXPECT(ix.len() == pages.keys.size());
  EXPECT(!first[0].duplicate && first[0].representative == std::string("f0-0"));
  EXPECT(!first[0].similar_to && !first[0].identical_to && first[0].doc_id && first[0].seq);
  EXPECT(first[1].duplicate && first[1].similar_to == std::string("f0-0"));
  EXPECT(first[1].cluster_id == first[0].cluster_id && first[1].resemble > 0);
  EXPECT(*first[1].seq > *first[0].seq);

  // Copies of verdicts, and copies of the copies: each owns its strings.
  std::vector<Verdict> copy = first;
  std::vector<Verdict> again = copy;
  copy.clear();
  EXPECT(again[1].similar_to == std::string("f0-0") &&
         again[4].representative == first[4].representative);

  // A recrawl: nothing written, the stored verdict.
  Verdict same = ix.insert(pages.ref(0));
  EXPECT(same.unchanged && same.unchanged_html && !same.replaced && !same.replaced_page);
  EXPECT(same.doc_id == first[0].doc_id && same.cluster_id == first[0].cluster_id);

  // A query: nothing stored; an unseen text has no cluster, representative or similar page.
  const std::string fresh = article(500, 8);
  Verdict q = ix.query(fresh);
  EXPECT(!q.duplicate && !q.doc_id && !q.seq && !q.cluster_id && !q.representative &&
         !q.similar_to && !q.identical_to && q.write_ns == 0);
  const std::string near = article(2, 8, 6);
  Verdict q2 = ix.query(near);
  EXPECT(q2.duplicate && q2.cluster_id == first[3].cluster_id);
  // Plain text content.
  const std::string text = paragraph(77) + "\n\n" + paragraph(78) + "\n\n" + paragraph(79);
  EXPECT(!ix.query(text, ContentKind::Text).duplicate);

  // get / find / representative / cluster_members.
  Record r = ix.get("f0-1");
  EXPECT(r.key == "f0-1" && r.representative == "f0-0" && !r.is_representative);
  EXPECT(r.similar_to == std::string("f0-0") && r.host == "example.com");
  EXPECT(r.doc_id == *first[1].doc_id && r.seq == *first[1].seq &&
         r.text_chars == first[1].text_chars);
  EXPECT(ix.find("f0-0")->is_representative && !ix.find("f0-0")->similar_to);
  neardup::Placement pl = ix.representative("f0-2");
  EXPECT(pl.cluster_id == *first[2].cluster_id && pl.representative == "f0-0");
  std::vector<std::string> members = ix.cluster_members(pl.cluster_id, 0, 100);
  EXPECT(members.size() == 3 && members[0] == "f0-0");
  EXPECT(ix.cluster_members(pl.cluster_id, 1, 1) == std::vector<std::string>{members[1]});
  EXPECT_ERROR(ix.cluster_members(pl.cluster_id, 0, 0), ND_INVALID_ARGUMENT, true);

  // A page with no URL, no host: empty views ({NULL, 0} to the C ABI), empty strings back.
  {
    const std::string body = article(600, 8);
    Verdict v = ix.insert(PageRef("bare", body));
    Record b = ix.get("bare");
    EXPECT(b.host.empty() && !b.similar_to && b.representative == "bare" && !v.similar_to);
    Deletion d = ix.erase("bare");
    EXPECT(d.cluster_gone && !d.representative && d.moved.empty() && d.doc_id == *v.doc_id);
  }

  // A representative's delete hands its cluster over.
  Deletion d = ix.erase("f1-0");
  EXPECT(d.was_representative && !d.cluster_gone && d.cluster_id == *first[3].cluster_id);
  EXPECT(d.representative == std::string("f1-1") || d.representative == std::string("f1-2"));
  for (const neardup::Moved& m : d.moved) EXPECT(ix.get(m.key).cluster_id == m.cluster_id);
  std::vector<Deletion> deletions{d, d};
  deletions.push_back(deletions[0]);
  EXPECT(deletions[2].representative == d.representative);

  // A replace reports what it displaced, as a copyable value.
  const std::string changed = article(61, 8);
  Verdict rv = ix.insert(PageRef("f0-0", changed));
  EXPECT(rv.replaced && rv.replaced_page && rv.replaced_page->was_representative);
  EXPECT(rv.replaced_page->cluster_id == *first[0].cluster_id);
  std::vector<Verdict> kept{rv};
  kept.push_back(kept[0]);
  std::vector<Verdict> kept2 = kept;
  EXPECT(kept2[1].replaced_page->representative == rv.replaced_page->representative);
  EXPECT(ix.check().clean());
  ix.close();
}

// --- near: every near duplicate as a std::vector of values, best first; NearOptions; errors
// thrown or returned (issue #33, item 7).
void near_duplicates(const std::string& root) {
  Index ix = Index::open(root + "/near", fast());
  const Pages pages = families(1);
  for (size_t i = 0; i < pages.keys.size(); ++i) (void)ix.insert(pages.ref(i));
  // Closer to f1-1 than to its representative f1-0: f1-1 is the best-sharing member, verified
  // beside the representative.
  const std::string probe = article(2, 8, 1, 6);
  const std::vector<NearDuplicate> all = ix.near(probe, {SIZE_MAX});
  std::set<std::string> keys;
  double lowest = 1;
  for (size_t i = 0; i < all.size(); ++i) {
    const NearDuplicate& n = all[i];
    keys.insert(n.key);
    const Record r = ix.get(n.key);
    EXPECT(n.doc_id == r.doc_id && n.cluster_id == r.cluster_id);
    EXPECT(n.representative == "f1-0" && !n.exact);
    EXPECT(n.resemble > 0 && n.resemble < 1 && n.contain > 0 && n.contain < 1);
    if (i > 0) EXPECT(all[i - 1].resemble >= n.resemble);
    lowest = std::min(lowest, n.resemble);
  }
  EXPECT(keys.count("f1-0") == 1 && keys.count("f1-1") == 1 && keys.size() == all.size());
  for (const std::string& k : keys) EXPECT(k.rfind("f1-", 0) == 0);
  // The query's similar_to is one of them, with the same rates.
  const Verdict q = ix.query(probe);
  EXPECT(q.duplicate && q.similar_to);
  bool named = false;
  for (const NearDuplicate& n : all)
    named |= n.key == *q.similar_to && n.resemble == q.resemble && n.contain == q.contain;
  EXPECT(named);
  // Values: copied and destroyed freely.
  std::vector<NearDuplicate> copy = all;
  copy.push_back(all[0]);
  EXPECT(copy.back().key == all[0].key && copy.size() == all.size() + 1);

  // k keeps the best; the threshold is inclusive; by contain orders by contain.
  const std::vector<NearDuplicate> top = ix.near(probe, {1});
  EXPECT(top.size() == 1 && top[0].key == all[0].key && top[0].resemble == all[0].resemble);
  EXPECT(ix.near(probe, {SIZE_MAX, lowest}).size() == all.size());
  EXPECT(ix.near(probe, {SIZE_MAX, std::nextafter(lowest, 2.0)}).size() < all.size());
  const std::vector<NearDuplicate> by_contain =
      ix.near(probe, {SIZE_MAX, 0, neardup::Score::Contain});
  EXPECT(by_contain.size() == all.size());
  for (size_t i = 1; i < by_contain.size(); ++i)
    EXPECT(by_contain[i - 1].contain >= by_contain[i].contain);
  EXPECT(ix.near(probe).size() == all.size());  // the defaults: k 10

  // A stored page's own text: exact, first; near_page with its key the same.
  const std::vector<NearDuplicate> self = ix.near(pages.bodies[3]);
  EXPECT(!self.empty() && self[0].key == "f1-0" && self[0].exact && self[0].resemble == 1);
  const std::vector<NearDuplicate> own = ix.near_page(pages.ref(3));
  EXPECT(!own.empty() && own[0].key == "f1-0" && own[0].exact);
  // An unrelated page, a text with no main text: none.
  EXPECT(ix.near(article(500, 8)).empty());
  EXPECT(ix.near("tiny", {}, ContentKind::Text).empty());

  // Bad options and pages throw, or come back from the try_ family.
  EXPECT_ERROR(ix.near(probe, {0}), ND_INVALID_ARGUMENT, contains(e.message(), "k is 0"));
  EXPECT_ERROR(ix.near(probe, {10, 1.5}), ND_INVALID_ARGUMENT,
               contains(e.message(), "threshold"));
  EXPECT_ERROR(ix.near(probe, {10, -0.5}), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(ix.near(probe, {10, std::nan("")}), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(ix.near(probe, {10, 0, static_cast<neardup::Score>(9)}), ND_INVALID_ARGUMENT,
               contains(e.message(), "ND_SCORE_CONTAIN"));
  EXPECT_ERROR(ix.near_page(PageRef("", probe)), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(ix.near_page(PageRef("k", probe), {0}), ND_INVALID_ARGUMENT, true);
  EXPECT_ERROR(ix.near(std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8)), ND_BINARY_PAGE,
               true);
  const neardup::Result<std::vector<NearDuplicate>> refused = ix.try_near(probe, {0});
  EXPECT(!refused && refused.status() == neardup::Status::InvalidArgument &&
         contains(refused.message(), "k is 0"));
  const neardup::Result<std::vector<NearDuplicate>> found = ix.try_near(probe);
  EXPECT(found && found->size() == all.size() && (*found)[0].key == all[0].key);
  const auto page_refused = ix.try_near_page(PageRef("", probe));
  EXPECT(!page_refused && page_refused.status() == neardup::Status::InvalidArgument);
  const auto page_found = ix.try_near_page(pages.ref(3), NearOptions{1, 0.5});
  EXPECT(page_found && page_found->size() == 1 && page_found.value()[0].key == "f1-0");
  EXPECT(ix.len() == pages.keys.size());  // nothing stored

  ix.close();
  EXPECT_ERROR(ix.near(probe), ND_CLOSED, true);
  EXPECT(ix.try_near(probe).status() == neardup::Status::Closed);
  Index moved = std::move(ix);
  EXPECT_ERROR(ix.near(probe), ND_NULL_POINTER, true);  // NOLINT(bugprone-use-after-move)
}

// --- cursors: clusters, members, keys; close refused while one is open; a cursor outlives
// its Index.
void cursors(const std::string& root) {
  const std::string path = root + "/cursors";
  std::set<std::string> all;
  {
    Index ix = Index::open(path, fast());
    const Pages pages = families(11);
    for (size_t i = 0; i < pages.keys.size(); ++i) (void)ix.insert(pages.ref(i));
    all.insert(pages.keys.begin(), pages.keys.end());

    size_t clusters = 0, seen = 0;
    for (const CursorItem& c : ix.clusters()) {
      ++clusters;
      uint64_t n = 0;
      bool rep_seen = false;
      for (const CursorItem& m : ix.members(c.cluster_id)) {
        ++n;
        rep_seen |= m.key == c.key;
        EXPECT(m.cluster_id == c.cluster_id && m.size == 0);
      }
      EXPECT(n == c.size && rep_seen);
      seen += n;
    }
    EXPECT(clusters == 3 && seen == all.size());

    std::set<std::string> keys;
    Cursor k = ix.keys();
    while (std::optional<CursorItem> item = k.next()) keys.insert(item->key);
    EXPECT(!k.next() && !k.next());  // stays at the end
    EXPECT(keys == all);
    EXPECT(k.begin() == k.end());

    // Closing is refused while a cursor is open, and the index stays usable.
    EXPECT_ERROR(ix.close(), ND_INVALID_ARGUMENT, contains(e.message(), "cursor"));
    EXPECT(ix.len() == all.size());
    Cursor moved = std::move(k);
    moved = ix.clusters();  // the old cursor is freed by the assignment
    moved = Cursor(std::move(moved));
    EXPECT(moved.next().has_value());
  }  // ~Cursor before ~Index (declared after): the index closes.

  // A cursor that outlives its Index keeps the database open until it goes.
  std::optional<Cursor> survivor;
  {
    Index ix = Index::open(path, fast());
    survivor.emplace(ix.keys());
  }
  EXPECT_ERROR(Index::open(path, fast()), ND_ALREADY_OPEN, true);
  std::set<std::string> keys;
  for (const CursorItem& item : *survivor) keys.insert(item.key);
  EXPECT(keys == all);
  survivor.reset();
  Index again = Index::open(path, fast());
  EXPECT(again.len() == all.size());
  again.close();
}

// --- the change feed: a copy that applies it holds what the original holds; a trimmed feed
// throws ND_CHANGES_TRIMMED; a change applied twice is refused (try_apply_change says so).
void changes(const std::string& root) {
  Index ix = Index::open(root + "/feed", fast());
  Index copy = Index::open(root + "/feed-copy", fast());
  EXPECT(ix.last_change() == 0);
  const Pages pages = families(31);
  for (size_t i = 0; i < pages.keys.size(); ++i) (void)ix.insert(pages.ref(i));
  (void)ix.erase("f0-0");  // a representative: its cluster is handed over
  std::vector<ChangeKind> kinds;
  uint64_t last = 0;
  {
    Changes feed = ix.changes_since(0);
    for (const Change& c : feed) {
      EXPECT(c.seq == last + 1 && !c.bytes.empty());
      last = c.seq;
      kinds.push_back(c.kind);
      if (c.seq == 1)
        EXPECT(c.kind == ChangeKind::Inserted && c.key == "f0-0" && c.host == "example.com" &&
               !c.text.empty() && c.representative == "f0-0");
      copy.apply_change(c);
    }
    EXPECT(feed.last() == last && !feed.next());
  }
  EXPECT(last == ix.last_change() && copy.last_change() == last);
  EXPECT(std::count(kinds.begin(), kinds.end(), ChangeKind::Inserted) == 9);
  EXPECT(std::count(kinds.begin(), kinds.end(), ChangeKind::Deleted) == 1);
  EXPECT(std::count(kinds.begin(), kinds.end(), ChangeKind::RepresentativeChanged) == 1);
  for (const std::string& k : pages.keys) {
    std::optional<Record> a = ix.find(k), b = copy.find(k);
    EXPECT(a.has_value() == b.has_value());
    if (a) EXPECT(a->doc_id == b->doc_id && a->cluster_id == b->cluster_id &&
                  a->representative == b->representative);
  }
  EXPECT(copy.check().clean());
  {
    Changes first = ix.changes_since(0);
    std::optional<Change> one = first.next();
    EXPECT(one.has_value());
    Result<void> again = copy.try_apply_change(*one);
    EXPECT(!again && again.status() == Status::InvalidArgument);
  }
  EXPECT(ix.changes_since(last).begin() == ix.changes_since(last).end());
  EXPECT_ERROR((void)ix.changes_since(last + 1), ND_INVALID_ARGUMENT, true);

  Options keep2 = fast();
  keep2.change_retention(2);
  Index small = Index::open(root + "/feed-small", keep2);
  for (size_t i = 0; i < 5; ++i) (void)small.insert(pages.ref(i));
  EXPECT_ERROR((void)small.changes_since(0), ND_CHANGES_TRIMMED,
               e.status() == Status::ChangesTrimmed);
  EXPECT(neardup::status_name(Status::ChangesTrimmed) == std::string("ND_CHANGES_TRIMMED"));
}

// --- batches: per-page results with messages, progress, an exception from progress.
void batches(const std::string& root) {
  Index ix = Index::open(root + "/batch", fast());
  Pages pages = families(21);
  pages.add("", article(30, 8));                                     // empty key
  pages.add("binary", std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));  // binary
  std::vector<std::pair<size_t, size_t>> progress;
  std::vector<BatchResult> rs = ix.insert_batch(pages.refs(), neardup::Order::Input,
                                                [&](size_t done, size_t total) {
                                                  progress.emplace_back(done, total);
                                                });
  EXPECT(rs.size() == pages.keys.size());
  for (size_t i = 0; i < 9; ++i) EXPECT(rs[i].ok() && rs[i].message.empty() && rs[i].verdict);
  EXPECT(rs[1].value().similar_to == std::string("f0-0"));
  EXPECT(rs[9].status == ND_INVALID_ARGUMENT && !rs[9].message.empty() && !rs[9].verdict);
  EXPECT(rs[10].status == ND_BINARY_PAGE && !rs[10].message.empty());
  EXPECT_ERROR(rs[10].value(), ND_BINARY_PAGE, std::string(e.message()) == rs[10].message);
  EXPECT(!progress.empty() && progress.back().first == pages.keys.size() &&
         progress.back().second == pages.keys.size());
  std::vector<BatchResult> copies = rs;
  EXPECT(copies[4].value().representative == rs[4].value().representative);
  EXPECT(ix.len() == 9);
  EXPECT(ix.insert_batch({}).empty());

  // An exception thrown by the progress callback does not cross into Rust: the batch ends,
  // its pages are stored, and the exception comes out of insert_batch.
  const Pages more = families(31);
  Pages renamed;
  for (size_t i = 0; i < more.keys.size(); ++i) renamed.add("m" + more.keys[i], more.bodies[i]);
  int calls = 0;
  bool caught = false;
  try {
    (void)ix.insert_batch(renamed.refs(), neardup::Order::Fingerprints, [&](size_t, size_t) {
      ++calls;
      throw std::runtime_error("stop");
    });
  } catch (const std::runtime_error& e) {
    caught = std::string(e.what()) == "stop";
  }
  EXPECT(caught && calls == 1);
  EXPECT(ix.len() == 18);

  // The whole-batch order: a batch within one window is sorted as the window order sorts it.
  {
    Index w = Index::open(root + "/batch-window", fast());
    // With the sketch read only as a fallback: these families share fingerprints, so the
    // verdicts stay those of the window order's index.
    Options whole = fast();
    whole.sketch_fallback(true);
    Index b = Index::open(root + "/batch-whole", whole);
    std::vector<BatchResult> rw = w.insert_batch(more.refs(), neardup::Order::Fingerprints);
    std::vector<BatchResult> rb = b.insert_batch(more.refs(), neardup::Order::FingerprintsBatch);
    EXPECT(rw.size() == rb.size() && !rb.empty());
    for (size_t i = 0; i < rw.size(); ++i) {
      EXPECT(rb[i].status == rw[i].status);
      if (rb[i].ok()) {
        EXPECT(rb[i].value().duplicate == rw[i].value().duplicate &&
               rb[i].value().representative == rw[i].value().representative);
      }
    }
  }

  // Query batches: the same verdicts as one query each, a message for each failed entry.
  const std::string a = article(21, 8, 5), b = article(22, 8, 4), c = article(50, 8);
  const std::string bin("\x01\x02\x03\x04\x05\x06\x07\x08", 8);
  std::vector<BatchResult> qs = ix.query_batch(std::vector<std::string_view>{a, b, c, bin});
  EXPECT(qs.size() == 4 && qs[3].status == ND_BINARY_PAGE && !qs[3].message.empty());
  const std::string* contents[] = {&a, &b, &c};
  for (size_t i = 0; i < 3; ++i) {
    Verdict one = ix.query(*contents[i]);
    EXPECT(qs[i].ok() && qs[i].value().duplicate == one.duplicate &&
           qs[i].value().similar_to == one.similar_to);
  }
  EXPECT(qs[0].value().duplicate && !qs[2].value().duplicate);
  const std::string plain = paragraph(5);  // PageRef points at it: it must outlive the call
  std::vector<PageRef> mixed{PageRef("", a), PageRef("", plain, ContentKind::Text)};
  std::vector<BatchResult> ms = ix.query_batch(mixed);
  EXPECT(ms.size() == 2 && ms[0].ok() && ms[1].ok());
  ix.close();
}

// --- configuration, checkpoints, read-only and existing opens, stats, compaction.
void admin(const std::string& root) {
  const std::string path = root + "/admin";
  Options o;
  o.sync_writes(false)
      .representative_policy(neardup::Policy::LongestText)
      .max_clusters_verified(4)
      .thresholds(0.3, 0.7)
      .lcs_resemble_threshold(0.5)
      .weighted_lcs_resemble_threshold(0.5)
      .located_containment(0.9, 0.6)
      .max_page_bytes(1 << 20)
      .frequent(5000, 300, 6)
      .heading_codes(true)
      .sticky_representative(true)
      .fold_traditional(true)
      .fold_only_chinese(true)
      .create_if_missing(true)
      .signature(neardup::Signature{})
      .containment_keys(neardup::ContainmentKeys{});
  Options moved_options = std::move(o);
  Index ix = Index::open(path, moved_options);
  const Pages pages = families(41);
  (void)ix.insert_batch(pages.refs());
  // Metrics since the open: one batch of nine pages, no single insert.
  const std::string metrics = ix.metrics_json();
  EXPECT(contains(metrics, "\"insert\":{\"count\":0,\"errors\":0"));
  EXPECT(contains(metrics, "\"batch\":{\"count\":1,\"errors\":0,\"pages\":9,"));
  EXPECT(contains(metrics, "\"write_stall_stops\"") && contains(metrics, "\"block_cache\""));
  const std::string json = ix.config_json();
  EXPECT(contains(json, "\"representative\"") && contains(json, "ongest"));
  EXPECT(Index::stored_config_json(path) == json);

  neardup::Stats st = ix.stats();
  EXPECT(st.pages == 9 && st.clusters == 3 && st.bytes > 0);
  EXPECT(st.page_ids == 9 && st.cluster_ids >= 3);
  neardup::CheckReport report = ix.check();
  EXPECT(report.clean() && report.problems == 0);
  ix.compact();
  ix.checkpoint(root + "/admin-checkpoint");
  try {
    ix.checkpoint(root + "/admin-checkpoint");  // exists
    EXPECT(false);
  } catch (const Error& e) {
    EXPECT((e.status() == ND_IO || e.status() == ND_STORAGE) && *e.message() != '\0');
  }

  // Read-only beside the writer: reads work, writes are refused.
  {
    Index ro = Index::open_read_only(path);
    EXPECT(ro.len() == 9 && ro.get("f2-0").key == "f2-0");
    const std::string body = article(70, 8);
    EXPECT_ERROR(ro.insert(PageRef("x", body)), ND_READ_ONLY, true);
    EXPECT_ERROR(ro.erase("f2-0"), ND_READ_ONLY, true);
    EXPECT_ERROR(ro.compact(), ND_READ_ONLY, true);
    size_t n = 0;
    for (const CursorItem& c : ro.clusters()) n += c.size;
    EXPECT(n == 9);
  }
  ix.close();

  Index existing = Index::open_existing(path);
  EXPECT(existing.config_json() == json && existing.len() == 9);
  existing.close();

  Index::compact_snapshot(root + "/admin-checkpoint", root + "/admin-compacted");
  Index compacted = Index::open_existing(root + "/admin-compacted");
  EXPECT(compacted.len() == 9 && compacted.check().clean());
}

// --- a versioned text source: texts not stored; the source keeps every version of a page and
// answers by content hash.
struct Store {
  std::mutex m;
  std::map<std::pair<uint64_t, uint64_t>, std::string> by_hash;  // content hash → HTML
  std::map<std::string, uint64_t> seq;                           // key → seq of held version
  std::atomic<int> asked{0};
  std::atomic<int> seq_matched{0};
  std::string throw_for;  // a key the source throws for
  std::string refuse_for;  // a key the source answers with content the index refuses
};

void text_source(const std::string& root) {
  auto store = std::make_shared<Store>();
  Options o = fast();
  o.store_texts(false).text_source([store](const neardup::TextRequest& req)
                                       -> std::optional<neardup::SourcedContent> {
    std::lock_guard<std::mutex> g(store->m);
    ++store->asked;
    const std::string key(req.key);
    if (key == store->throw_for) throw std::runtime_error("the store is down");
    if (key == store->refuse_for)
      return neardup::SourcedContent{std::string("\xff\xfe not UTF-8", 13), ContentKind::Text};
    auto s = store->seq.find(key);
    if (s != store->seq.end() && s->second == req.seq) ++store->seq_matched;
    auto it = store->by_hash.find({req.content_hash_hi, req.content_hash_lo});
    if (it == store->by_hash.end()) return std::nullopt;
    return neardup::SourcedContent{it->second, ContentKind::Html};
  });
  Index ix = Index::open(root + "/external", o);
  // The index without texts hands a representative's cluster over on a changed recrawl (it
  // does not ask the source for the old version): the one with texts is compared without
  // sticky representatives.
  Options so = fast();
  so.sticky_representative(false);
  Index stored = Index::open(root + "/external-stored", so);

  // Insert, then record the version the index holds (its content hash) in the store.
  auto put = [&](const std::string& key, const std::string& html) {
    Verdict v = ix.insert(PageRef(key, html));
    Verdict w = stored.insert(PageRef(key, html));
    EXPECT(v.duplicate == w.duplicate && v.similar_to == w.similar_to &&
           v.cluster_id == w.cluster_id && v.representative == w.representative);
    Record r = ix.get(key);
    std::lock_guard<std::mutex> g(store->m);
    store->by_hash[{r.content_hash_hi, r.content_hash_lo}] = html;
    store->seq[key] = *v.seq;
    return v;
  };
  const Pages pages = families(51);
  for (size_t i = 0; i < pages.keys.size(); ++i) put(pages.keys[i], pages.bodies[i]);
  EXPECT(store->asked > 0 && store->seq_matched > 0);

  // A new version of a representative: the store keeps both; later checks get the new one.
  const std::string v2 = article(51, 8, 7);
  put("f0-0", v2);
  put("f0-new", article(51, 8, 3));
  EXPECT(ix.check().clean());

  // A source that throws: the call fails with ND_TEXT_UNAVAILABLE and says why.
  {
    std::lock_guard<std::mutex> g(store->m);
    store->throw_for = "f1-0";
  }
  const std::string near1 = article(52, 8, 2);
  EXPECT_ERROR(ix.insert(PageRef("f1-x", near1)), ND_TEXT_UNAVAILABLE,
               contains(e.message(), "the text source threw: the store is down"));
  EXPECT_ERROR(ix.query(near1), ND_TEXT_UNAVAILABLE, contains(e.message(), "the store is down"));
  EXPECT(!ix.find("f1-x"));
  // In a batch: a per-page status.
  std::vector<BatchResult> qs = ix.query_batch(std::vector<std::string_view>{near1});
  EXPECT(qs[0].status == ND_TEXT_UNAVAILABLE && !qs[0].message.empty());
  // A later success carries no stale message.
  const std::string near0 = article(51, 8, 5);
  EXPECT(ix.query(near0).duplicate);

  // Content the index refuses (not UTF-8 text): the message says so.
  {
    std::lock_guard<std::mutex> g(store->m);
    store->throw_for.clear();
    store->refuse_for = "f2-0";
  }
  const std::string near2 = article(53, 8, 2);
  EXPECT_ERROR(ix.query(near2), ND_TEXT_UNAVAILABLE, contains(e.message(), "refused"));
  // A source that does not have the page: the library's message alone.
  {
    std::lock_guard<std::mutex> g(store->m);
    store->refuse_for.clear();
    store->by_hash.clear();
  }
  EXPECT_ERROR(ix.query(near2), ND_TEXT_UNAVAILABLE, !contains(e.message(), "threw"));
  ix.close();
  stored.close();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hpp_engine DIR\n");
    return 2;
  }
  const std::string root = argv[1];

  // A log callback that throws is harmless; then one that records.
  neardup::set_log_callback([](neardup::LogLevel, std::string_view) {
    throw std::runtime_error("a logger that throws");
  }, neardup::LogLevel::Debug);
  { Index::open(root + "/log-throws", fast()).close(); }
  Log log;
  neardup::set_log_callback(
      [&log](neardup::LogLevel level, std::string_view message) {
        std::lock_guard<std::mutex> g(log.m);
        log.records.emplace_back(level, std::string(message));
      },
      neardup::LogLevel::Debug);
  EXPECT_ERROR(neardup::set_log_callback({}, static_cast<neardup::LogLevel>(9)),
               ND_INVALID_ARGUMENT, true);

  errors(root);
  engine(root);
  near_duplicates(root);
  cursors(root);
  changes(root);
  batches(root);
  admin(root);
  text_source(root);

  {
    std::lock_guard<std::mutex> g(log.m);
    bool opened = false;
    for (auto& r : log.records) opened |= contains(r.second, "opened");
    EXPECT(opened);
  }
  neardup::set_log_callback({});
  std::printf("hpp_engine: ok\n");
  return 0;
}
