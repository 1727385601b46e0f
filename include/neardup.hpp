/*
 * neardup — an embedded near-duplicate index for web pages: the official C++17 header.
 *
 * Header-only, written by hand over the C ABI of neardup.h (nothing here is generated); link with
 * -lneardup as for the C header. Everything is in namespace neardup.
 *
 * Choices, and why:
 *
 * - Errors are exceptions, or values when asked. Every failing call throws neardup::Error (a
 *   std::runtime_error) that carries the call's status (status(), an enum class Status that
 *   mirrors every ND_* code; c_status() gives the nd_status) and the library's message
 *   (message(); what() is "ND_NAME: message"). The message is read from nd_last_error() inside
 *   the wrapper, right after the failing call and before any other nd_ call, so it cannot be
 *   lost to a later call in the same expression. neardup::check(status) does the same for a raw
 *   C call. Beside the throwing calls, a non-throwing family returns a Result<T> (the value, or
 *   the Status and message the Error would have carried; C++17 has no std::expected):
 *   Index::try_open, try_open_existing, try_open_read_only, try_insert, try_query, try_near,
 *   try_near_page, try_get, try_erase, try_close, try_reopen, try_apply_change — as in
 *   mdbx.h++, which offers both styles. Where "not there" is a normal answer rather than an
 *   error, a variant returns std::optional instead: Index::find (ND_NOT_FOUND) beside
 *   Index::get, Cursor::next and Changes::next. A batch never throws for one page: each page
 *   has a BatchResult with its Status and message.
 *   The header refuses to compile without exceptions (-fno-exceptions): use neardup.h there.
 *
 * - Results are [[nodiscard]]: opens, queries, reads, inserts (the verdict is what an insert is
 *   for: `(void)ix.insert(p)` stores without reading it), batches and every Result. erase's
 *   Deletion may be dropped (its failure throws), as may a setter's *this.
 *
 * - Nothing the library owns escapes. Verdict, Deletion, Moved, Record, Stats, CheckReport,
 *   Placement, CursorItem, NearDuplicate and Change are plain value types (std::string, std::vector,
 *   std::optional), copied out of the C structs as soon as a call returns, after which the C
 *   structs are freed by a guard (also when the copy throws). They can be copied, stored in
 *   containers and destroyed freely: nothing is freed twice. An empty nd_str ({NULL, 0}) becomes
 *   an empty std::string, never std::string(NULL). Strings that are "empty when there is none"
 *   in the C ABI (a verdict's representative, similar_to, identical_to; a record's similar_to;
 *   a deletion's representative) are std::optional<std::string>, and ids that are ND_NO_ID when
 *   there is none (a verdict's doc_id and cluster_id) are std::optional<uint32_t>.
 *
 * - Inputs are std::string_view (no NUL terminator needed): PageRef points at the caller's
 *   key, content, URL and host, which must outlive the call only. PageRef refuses to be built
 *   from a temporary std::string (a compile error: deleted overloads), which would dangle once
 *   the PageRef is kept in a variable; literals, views and named strings are accepted.
 *
 * - Batches take a pointer and a count, a std::vector, a braced list (`ix.query_batch({})` is an
 *   empty batch, unambiguously) and, in C++20, a std::span<const PageRef>.
 *
 * - NearOptions is an aggregate (k, threshold, by): Index::near makes the nd_near_options of
 *   each call from it and frees them, so it throws (or, for try_near, returns) the library's
 *   Error(ND_INVALID_ARGUMENT) for a value out of range rather than checking it twice.
 *
 * - Options, Index and Cursor are move-only RAII handles over nd_options*, nd_index* and
 *   nd_cursor*. A moved-from handle holds NULL: calling it throws Error(ND_NULL_POINTER).
 *   ~Index() calls nd_index_free, which closes the index first (waiting for the calls in
 *   flight) and never throws; call Index::close() to see the error of the final flush.
 *
 * - Cursors and close. A Cursor owns its own reference to the database (that is the C ABI's
 *   design), so it stays valid whatever happens to the Index it came from. Index::close() with a
 *   cursor alive throws Error(ND_INVALID_ARGUMENT) and leaves the index open, as
 *   nd_index_close does. ~Index() with a cursor alive frees the handle all the same; the
 *   database then closes when the last cursor is destroyed, and until then a new open of the
 *   directory in this process gets ND_ALREADY_OPEN. So: destroy cursors first (range-for over a
 *   temporary cursor does that by itself).
 *
 * - Callbacks are std::function, called through noexcept trampolines that catch every exception,
 *   so that none crosses into Rust:
 *   - the progress callback of Index::insert_batch runs on the calling thread; the first
 *     exception it throws is kept, the callback is not called again, the batch runs to its end
 *     (the C ABI cannot stop it: its pages are stored), its results are freed, and the exception
 *     is rethrown from insert_batch (unless the batch itself failed: then its Error is thrown);
 *   - the text source (Options::text_source) gets a TextRequest (key, id, insertion number,
 *     content hash: the version the index holds) and returns the page's content, or none when
 *     it does not have it. When it throws, the library is told it does not have the page, so
 *     the call that needed the text fails with ND_TEXT_UNAVAILABLE, and the Error thrown by a
 *     single call (insert, query, erase) ends its message with the exception's what() (or with
 *     the library's reason for refusing the content given); a batch's per-page messages are
 *     the library's alone (query_batch runs the source on the library's threads). It runs on
 *     the threads calling into the index, several at once, sometimes under the index's writer
 *     lock (see neardup.h's lock-order rule: never hold a lock the source takes while calling
 *     the index); it must be thread-safe. The Options and every Index opened with them share
 *     it; an Index (and each of its cursors) keeps it alive while the database may be open;
 *   - the log callback (set_log_callback) is process-wide and called on any thread: an exception
 *     it throws is dropped. Replacing it is safe while the library logs (the library holds a lock
 *     around each call; the previous std::function is destroyed after the swap).
 *   None of the callbacks may call into neardup (such calls fail with ND_INVALID_ARGUMENT).
 *
 * - Vocabulary: Index::erase is nd_index_delete (`delete` is a C++ keyword; the project never
 *   says "remove").
 *
 * - Processes. An Index and its Cursors belong to the process that opened them. In a child after
 *   fork(), every call on an inherited one throws Error(ND_WRONG_PROCESS), and destroying it
 *   (~Index, ~Cursor) does nothing, so the child may let it go out of scope and exit() — but a
 *   child with threads of its own still running must end with _exit() (or exec): RocksDB's exit
 *   handler, inherited from the parent, joins the parent's background threads, whose records the
 *   child's threads reuse, and hangs. Opening an
 *   index in a child of a process that had opened one throws ND_WRONG_PROCESS (read-only too):
 *   RocksDB's process-wide state is the parent's. Fork before opening any index, or exec.
 *
 * Threading is the C ABI's: an Index may be used from many threads at once; a Cursor by one
 * thread at a time.
 */

#ifndef NEARDUP_HPP
#define NEARDUP_HPP

#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS) && !defined(_CPPUNWIND)
#error "neardup.hpp reports errors as exceptions: compile with exceptions, or use neardup.h"
#endif

#include "neardup.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#if __cplusplus >= 202002L && defined(__has_include)
#if __has_include(<span>)
#include <span>
/// Defined when the batch calls also take a std::span<const PageRef> (C++20).
#define NEARDUP_HAS_SPAN 1
#endif
#endif

namespace neardup {

// ---------------------------------------------------------------------------------------------
// Constants

/// How a page's content is to be read (ND_CONTENT_*).
enum class ContentKind : uint32_t {
  Html = ND_CONTENT_HTML,  ///< HTML bytes, decoded as UTF-8 or their declared or sniffed encoding.
  Text = ND_CONTENT_TEXT,  ///< Plain UTF-8 text (no extraction).
};

/// Which page leads a cluster (ND_POLICY_*; stored in the index).
enum class Policy : uint32_t {
  FirstSeen = ND_POLICY_FIRST_SEEN,        ///< The first page inserted (the default).
  EarliestTime = ND_POLICY_EARLIEST_TIME,  ///< The page with the earliest publish time.
  LongestText = ND_POLICY_LONGEST_TEXT,    ///< The page with the longest main text.
};

/// The order a batch is inserted in (ND_ORDER_*).
enum class Order : uint32_t {
  Fingerprints = ND_ORDER_FINGERPRINTS,  ///< Most sentence fingerprints first.
  Input = ND_ORDER_INPUT,                ///< The order given: "first seen" (the default).
  /// Most sentence fingerprints first over the whole batch, not window by window.
  FingerprintsBatch = ND_ORDER_FINGERPRINTS_BATCH,
};

/// The score a NearOptions threshold applies to and near duplicates are ordered by
/// (ND_SCORE_*).
enum class Score : uint32_t {
  Resemble = ND_SCORE_RESEMBLE,  ///< The resemble rate: how much both are one page (default).
  Contain = ND_SCORE_CONTAIN,    ///< The contain rate: how much the shorter is in the other.
};

/// The level of a log record (ND_LOG_*).
enum class LogLevel : uint32_t {
  Error = ND_LOG_ERROR,
  Warn = ND_LOG_WARN,
  Info = ND_LOG_INFO,
  Debug = ND_LOG_DEBUG,
};

/// The status of a call: every ND_* code of neardup.h, with the same value (nd_status gives the
/// meaning of each). Error::status(), BatchResult::status and Result::status() are a Status.
///
/// For code written against nd_status, a Status compares equal (== and !=, either side) to
/// the nd_status of the same value: `e.status() == ND_NOT_FOUND` keeps compiling. Convert
/// explicitly with to_c() and to_status().
enum class Status : uint32_t {
  Ok = ND_OK,                                       ///< Success.
  InvalidArgument = ND_INVALID_ARGUMENT,            ///< An argument is out of range.
  NullPointer = ND_NULL_POINTER,                    ///< A NULL handle (a moved-from object).
  InvalidUtf8 = ND_INVALID_UTF8,                    ///< A string is not valid UTF-8.
  PageTooLarge = ND_PAGE_TOO_LARGE,                 ///< The page is over the size limit.
  BinaryPage = ND_BINARY_PAGE,                      ///< The page is binary data.
  NotFound = ND_NOT_FOUND,                          ///< No such key or cluster.
  Storage = ND_STORAGE,                             ///< RocksDB reported an error.
  Corruption = ND_CORRUPTION,                       ///< A stored value failed its checks.
  IncompatibleFormat = ND_INCOMPATIBLE_FORMAT,      ///< An on-disk format this build cannot read.
  IncompatibleConfig = ND_INCOMPATIBLE_CONFIG,      ///< Options differ from the stored ones.
  CheckFailed = ND_CHECK_FAILED,                    ///< A compacted snapshot failed its check.
  Poisoned = ND_POISONED,                           ///< An earlier write failed: reopen.
  Full = ND_FULL,                                   ///< The index holds the maximum of pages.
  Io = ND_IO,                                       ///< A file-system error.
  Closed = ND_CLOSED,                               ///< The index was closed.
  Panic = ND_PANIC,                                 ///< A bug inside neardup, caught.
  TextUnavailable = ND_TEXT_UNAVAILABLE,            ///< The text source could not give a text.
  AlreadyOpen = ND_ALREADY_OPEN,                    ///< This process has the index open.
  WrongProcess = ND_WRONG_PROCESS,                  ///< A handle inherited across fork().
  ReadOnly = ND_READ_ONLY,                          ///< The index was opened read-only.
  ChangesTrimmed = ND_CHANGES_TRIMMED,              ///< The change feed was trimmed past it.
};

/// The Status of a C status code (same value).
[[nodiscard]] constexpr Status to_status(nd_status status) noexcept {
  return static_cast<Status>(status);
}

/// The C status code of a Status (same value).
[[nodiscard]] constexpr nd_status to_c(Status status) noexcept {
  return static_cast<nd_status>(status);
}

/// A Status and the nd_status of the same value are equal (either side of == and !=).
[[nodiscard]] constexpr bool operator==(Status a, nd_status b) noexcept { return to_c(a) == b; }
/// See operator==(Status, nd_status).
[[nodiscard]] constexpr bool operator==(nd_status a, Status b) noexcept { return a == to_c(b); }
/// See operator==(Status, nd_status).
[[nodiscard]] constexpr bool operator!=(Status a, nd_status b) noexcept { return !(a == b); }
/// See operator==(Status, nd_status).
[[nodiscard]] constexpr bool operator!=(nd_status a, Status b) noexcept { return !(a == b); }

/// The name of a status code ("ND_NOT_FOUND"…); "ND_UNKNOWN" for a value that is not one.
[[nodiscard]] inline const char* status_name(nd_status status) noexcept {
  return nd_status_name(status);
}

/// The name of a Status: the name of its ND_* code ("ND_NOT_FOUND"…), as status_name gives it.
[[nodiscard]] inline const char* status_name(Status status) noexcept {
  return nd_status_name(to_c(status));
}

/// The name of a Status, as status_name(Status) gives it ("ND_NOT_FOUND"…).
[[nodiscard]] inline std::string to_string(Status status) { return status_name(status); }

/// The version of the library linked, e.g. "0.1.0".
[[nodiscard]] inline const char* version() noexcept { return nd_version(); }

/// True when the library linked implements the C ABI this header was written against.
[[nodiscard]] inline bool abi_matches() noexcept { return nd_abi_version() == ND_ABI_VERSION; }

// ---------------------------------------------------------------------------------------------
// Errors

/// A failed call: its status and the library's message, captured right after the call.
class Error : public std::runtime_error {
 public:
  /// An error of `status` (not ND_OK) with the library's `message`.
  Error(nd_status status, const std::string& message)
      : std::runtime_error(std::string(nd_status_name(status)) + ": " + message),
        status_(status),
        prefix_(std::char_traits<char>::length(nd_status_name(status)) + 2) {}
  /// An error of `status` (not Status::Ok) with the library's `message`.
  Error(Status status, const std::string& message) : Error(to_c(status), message) {}

  /// The status the call returned (never Status::Ok). It compares equal to the ND_* code of
  /// the same value (`e.status() == ND_NOT_FOUND`); c_status() gives that code.
  [[nodiscard]] Status status() const noexcept { return to_status(status_); }

  /// The status as the C ABI's nd_status.
  [[nodiscard]] nd_status c_status() const noexcept { return status_; }

  /// The library's message alone (what() is "ND_NAME: " followed by it).
  [[nodiscard]] const char* message() const noexcept { return what() + prefix_; }

 private:
  nd_status status_;
  std::size_t prefix_;
};

namespace detail {

/// nd_last_error() as a string; call it before any other nd_ call.
inline std::string last_error() {
  const char* m = nd_last_error();
  return m != nullptr ? std::string(m) : std::string();
}

/// What the text source threw on this thread during the current call (empty: nothing).
inline std::string& source_failure() noexcept {
  thread_local std::string failure;
  return failure;
}

}  // namespace detail

/// Throws Error(status, nd_last_error()) when `status` is not ND_OK. Call it directly on the
/// result of a C call: `neardup::check(nd_index_compact(h));`.
inline void check(nd_status status) {
  if (status != ND_OK) throw Error(status, detail::last_error());
}

// ---------------------------------------------------------------------------------------------
// Result (the non-throwing family)

/// The outcome of a non-throwing call (Index::try_open, try_insert, try_query, try_get,
/// try_erase…): a value, or the Status and message the throwing call would have put in its
/// Error. Nothing in the try_ family throws neardup::Error; std::bad_alloc still may.
///
///     neardup::Result<neardup::Verdict> r = ix.try_insert(page);
///     if (!r) log(r.status(), r.message());   // or: r.value() throws the Error
///     else if (r->duplicate) …
///
/// It is [[nodiscard]]: a dropped Result is a failure nobody looked at. Result<void> (try_close,
/// try_reopen) has no value.
template <class T>
class [[nodiscard]] Result {
 public:
  /// A success holding `value`.
  static Result success(T value) { return Result(std::move(value)); }
  /// A failure: `status` (not Status::Ok) and its message.
  static Result failure(Status status, std::string message) {
    return Result(status, std::move(message));
  }

  /// True when the call succeeded (there is a value).
  [[nodiscard]] bool ok() const noexcept { return value_.has_value(); }
  /// ok().
  explicit operator bool() const noexcept { return ok(); }
  /// Status::Ok on success; otherwise the failure's status.
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// The failure's message (what Error::message() would say); empty on success.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

  /// The value; throws the Error the throwing call would have thrown when there is none.
  [[nodiscard]] T& value() & {
    if (!value_) throw error();
    return *value_;
  }
  /// The value; throws the Error the throwing call would have thrown when there is none.
  [[nodiscard]] const T& value() const& {
    if (!value_) throw error();
    return *value_;
  }
  /// The value, moved out; throws the Error the throwing call would have thrown when there is
  /// none.
  [[nodiscard]] T&& value() && {
    if (!value_) throw error();
    return std::move(*value_);
  }
  /// The value, or `fallback` on failure.
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) const& {
    return value_ ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  /// The value, or `fallback` on failure (moved out).
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) && {
    return value_ ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
  }

  /// The value; only on success (check ok() first).
  T& operator*() & noexcept { return *value_; }
  /// The value; only on success (check ok() first).
  const T& operator*() const& noexcept { return *value_; }
  /// The value's members; only on success (check ok() first).
  T* operator->() noexcept { return &*value_; }
  /// The value's members; only on success (check ok() first).
  const T* operator->() const noexcept { return &*value_; }

  /// The failure as the Error the throwing call would have thrown; only on failure.
  [[nodiscard]] Error error() const { return Error(status_, message_); }

 private:
  explicit Result(T value) : value_(std::move(value)) {}
  Result(Status status, std::string message) : status_(status), message_(std::move(message)) {}

  std::optional<T> value_;
  Status status_ = Status::Ok;
  std::string message_;
};

/// The outcome of a non-throwing call that has no value (try_close, try_reopen).
template <>
class [[nodiscard]] Result<void> {
 public:
  /// A success.
  static Result success() { return Result(Status::Ok, std::string()); }
  /// A failure: `status` (not Status::Ok) and its message.
  static Result failure(Status status, std::string message) {
    return Result(status, std::move(message));
  }

  /// True when the call succeeded.
  [[nodiscard]] bool ok() const noexcept { return status_ == Status::Ok; }
  /// ok().
  explicit operator bool() const noexcept { return ok(); }
  /// Status::Ok on success; otherwise the failure's status.
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// The failure's message; empty on success.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// Throws the Error the throwing call would have thrown, on failure; nothing on success.
  void value() const {
    if (!ok()) throw error();
  }
  /// The failure as the Error the throwing call would have thrown; only on failure.
  [[nodiscard]] Error error() const { return Error(status_, message_); }

 private:
  Result(Status status, std::string message) : status_(status), message_(std::move(message)) {}

  Status status_ = Status::Ok;
  std::string message_;
};

// ---------------------------------------------------------------------------------------------
// Values (owned; copied out of the C structs)

/// A member a representative's delete moved to another cluster.
struct Moved {
  std::string key;              ///< The member's key.
  uint32_t cluster_id = 0;      ///< The cluster it is in now.
  std::string representative;   ///< That cluster's representative (its own key if it founded it).
};

/// What a delete changed (nd_deletion).
struct Deletion {
  uint32_t doc_id = 0;              ///< The deleted page's internal id (free now).
  uint32_t cluster_id = 0;          ///< The cluster it was in.
  bool was_representative = false;  ///< It led that cluster.
  bool cluster_gone = false;        ///< The cluster had no other member and is gone.
  /// The cluster's representative after the delete; none when the cluster is gone.
  std::optional<std::string> representative;
  /// After a representative's delete, the members re-placed, and where each went.
  std::vector<Moved> moved;
};

/// The answer for one page (nd_verdict).
struct Verdict {
  bool duplicate = false;     ///< Verified similar to a page already held (similar_to).
  bool exact = false;         ///< The normalized texts of the page and similar_to are identical.
  bool replaced = false;      ///< Insert: the key was present and its page was replaced.
  bool no_main_text = false;  ///< (Almost) no main text: a cluster of its own, never compared.
  /// Insert: the same main text and host were stored (an unchanged recrawl): nothing decided
  /// again; the stored record refreshed in place unless unchanged_html and the same time.
  bool unchanged = false;
  /// Insert: unchanged, and the raw page byte-identical to the stored one (implies unchanged);
  /// false when only the main text is the same (the stored page hash was then updated).
  bool unchanged_html = false;
  /// When replaced: what taking the old page out changed.
  std::optional<Deletion> replaced_page;
  /// The page's internal id; none for a query.
  std::optional<uint32_t> doc_id;
  /// The cluster joined or founded; none for a query that found no duplicate.
  std::optional<uint32_t> cluster_id;
  uint32_t text_chars = 0;  ///< Length of the normalized main text, in characters.
  /// The page's insertion number (what TextRequest::seq names); none for a query.
  std::optional<uint64_t> seq;
  /// The cluster's representative after the call; none when there is no cluster.
  std::optional<std::string> representative;
  /// The closest page this one was verified similar to; none when not a duplicate.
  std::optional<std::string> similar_to;
  double resemble = 0;  ///< Resemble rate with similar_to, 0 to 1.
  double contain = 0;   ///< Contain rate with similar_to, 0 to 1.
  /// A stored page with an identical main text (the one of lowest id); none when there is none.
  std::optional<std::string> identical_to;
  uint64_t candidates = 0;     ///< Candidate pages found.
  uint64_t verified = 0;       ///< Pairs verified.
  uint64_t signature_ns = 0;   ///< Nanoseconds spent on main text and signatures.
  uint64_t candidates_ns = 0;  ///< Nanoseconds spent gathering candidates.
  uint64_t verify_ns = 0;      ///< Nanoseconds spent verifying.
  uint64_t write_ns = 0;       ///< Nanoseconds spent writing (0 for a query).
};

/// A stored page as the index holds it (nd_record).
struct Record {
  uint32_t doc_id = 0;              ///< Its internal id.
  uint32_t cluster_id = 0;          ///< Its cluster.
  uint32_t text_chars = 0;          ///< Length of its normalized main text, in characters.
  bool is_representative = false;   ///< It leads its cluster.
  uint64_t seq = 0;                 ///< Its insertion number (unique, in insertion order).
  int64_t time = 0;                 ///< Its publish time, Unix seconds (0: unknown).
  uint64_t content_hash_hi = 0;     ///< High 64 bits of the hash of its normalized main text.
  uint64_t content_hash_lo = 0;     ///< Low 64 bits of that hash.
  double resemble = 0;              ///< Resemble rate with similar_to when placed.
  double contain = 0;               ///< Contain rate with similar_to when placed.
  std::string key;                  ///< Its key.
  std::string representative;       ///< Its cluster's representative.
  /// The page it was judged a near duplicate of when placed, while held.
  std::optional<std::string> similar_to;
  std::string host;  ///< The host it came from (may be empty).
};

/// A key's cluster and that cluster's representative (Index::representative).
struct Placement {
  uint32_t cluster_id = 0;
  std::string representative;
};

/// Figures about an index (nd_stats).
struct Stats {
  uint64_t pages = 0;                  ///< Live pages.
  uint64_t clusters = 0;               ///< Live clusters.
  uint64_t frequent_fingerprints = 0;  ///< Over-frequent fingerprints kept out of candidates.
  uint64_t bytes = 0;                  ///< Bytes on disk and in memtables.
  uint32_t page_ids = 0;     ///< Page ids given out so far (deleted pages' ids are reused first).
  uint32_t cluster_ids = 0;  ///< Cluster ids given out so far.
};

/// The outcome of Index::check.
struct CheckReport {
  uint64_t problems = 0;  ///< Problems found (0: clean).
  std::string report;     ///< One problem a line.
  bool clean() const noexcept { return problems == 0; }
};

/// One item of a cursor (nd_cursor_item), owned.
struct CursorItem {
  /// Clusters: the representative's key; members: the member's key; keys: the page's key.
  std::string key;
  uint32_t cluster_id = 0;  ///< The cluster (of the page, of the members, or itself).
  uint64_t size = 0;        ///< Clusters: the number of members; otherwise 0.
};

/// What a change of the feed did (nd_change_kind; Index::changes_since).
enum class ChangeKind : uint32_t {
  Inserted = ND_CHANGE_INSERTED,   ///< A page stored under a key the index did not hold.
  Replaced = ND_CHANGE_REPLACED,   ///< A page stored under a key the index held.
  Retimed = ND_CHANGE_RETIMED,     ///< An unchanged recrawl refreshed in place (time, page hash).
  Deleted = ND_CHANGE_DELETED,     ///< A page deleted.
  Moved = ND_CHANGE_MOVED,         ///< A page held before moved to another cluster.
  RepresentativeChanged = ND_CHANGE_REPRESENTATIVE_CHANGED,  ///< A cluster's new representative.
};

/// One committed change of the feed (nd_change), owned. A field its kind does not have is
/// empty or 0 (see nd_change).
struct Change {
  uint64_t seq = 0;           ///< Its sequence number: from 1, strictly increasing.
  int64_t committed_ms = 0;   ///< When it was committed, Unix milliseconds.
  ChangeKind kind = ChangeKind::Inserted;  ///< What it did.
  std::string key;            ///< The page's key (empty for RepresentativeChanged).
  std::string host;           ///< Inserted, Replaced: the page's host.
  int64_t time = 0;           ///< Inserted, Replaced, Retimed: the publish time, Unix seconds.
  uint32_t doc_id = 0;        ///< The page's id.
  /// Inserted, Replaced: the cluster after; Deleted: the one it was in; Moved: the one it
  /// moved to; RepresentativeChanged: the cluster.
  uint32_t cluster_id = 0;
  uint32_t from_cluster_id = 0;  ///< Moved: the cluster it left (otherwise cluster_id).
  /// Inserted, Replaced, Moved: the cluster's representative after; RepresentativeChanged:
  /// the new one.
  std::string representative;
  std::string previous;       ///< RepresentativeChanged: the representative before.
  std::string text;           ///< Inserted, Replaced: the normalized main text decided on.
  /// The whole change as bytes: what Index::apply_change takes, on a copy of the index in this
  /// or another process.
  std::vector<uint8_t> bytes;
};

/// A stored page a probe verified similar to (nd_near_duplicate; Index::near).
struct NearDuplicate {
  std::string key;             ///< The page's key.
  uint32_t doc_id = 0;         ///< Its internal id.
  uint32_t cluster_id = 0;     ///< The cluster it is in.
  std::string representative;  ///< That cluster's representative (its own key when it leads).
  double resemble = 0;         ///< Resemble rate of the probe with this page, 0 to 1.
  double contain = 0;          ///< Contain rate of the probe with this page, 0 to 1.
  bool exact = false;          ///< The normalized texts are identical.
};

/// What Index::near keeps, and how many (nd_near_options): an aggregate, so
/// `ix.near(html, {5, 0.8})` or `ix.near(html, {10, 0.5, neardup::Score::Contain})`.
struct NearOptions {
  /// At most this many, the best first; at least 1 (SIZE_MAX: every one found).
  std::size_t k = 10;
  /// Keep a page only when its score (`by`) is at least this: inclusive, in [0, 1]. 0: every
  /// page that verifies under the index's thresholds.
  double threshold = 0;
  /// The score `threshold` applies to and the order is by.
  Score by = Score::Resemble;
};

namespace detail {

/// True for a temporary std::string (S deduced from an rvalue: not a reference).
template <class S>
inline constexpr bool is_temporary_string_v =
    std::is_same_v<std::remove_cv_t<S>, std::string>;

template <class S>
using if_temporary_string = std::enable_if_t<is_temporary_string_v<S>, int>;

}  // namespace detail

/// A page handed to the index. It points at the caller's bytes, which must outlive the call
/// only; no NUL terminator is needed.
///
/// Lifetime: a PageRef is a view, so the constructors refuse a temporary std::string at compile
/// time (`PageRef(std::string("k"), html)`, `PageRef(key, html + footer)`: "use of deleted
/// function"), which would leave a PageRef kept in a variable pointing at freed memory. String
/// literals, `const char*`, std::string_view and named std::string objects are accepted: name
/// the temporary first (`std::string body = html + footer; PageRef(key, body)`). Assigning a
/// temporary std::string to a member (`p.url = make_url();`) is not caught: use with_url,
/// with_host, which refuse it too.
struct PageRef {
  std::string_view key;      ///< The external key (UTF-8, 1 to 65,536 bytes).
  std::string_view content;  ///< HTML bytes or UTF-8 text, as `kind` says.
  ContentKind kind = ContentKind::Html;
  std::string_view url;   ///< May be empty: used for the host when `host` is empty.
  std::string_view host;  ///< May be empty, at most 255 bytes.
  int64_t time = 0;       ///< Publish time, Unix seconds; 0 when unknown.

  PageRef() = default;
  /// A page of this key and content; url, host and time empty (set them with the with_
  /// setters or the members).
  PageRef(std::string_view key_, std::string_view content_,
          ContentKind kind_ = ContentKind::Html) noexcept
      : key(key_), content(content_), kind(kind_) {}

  /// Refused: the key would point into a temporary std::string (see above).
  template <class K, detail::if_temporary_string<K> = 0>
  PageRef(K&& key_, std::string_view content_, ContentKind kind_ = ContentKind::Html) = delete;
  /// Refused: the content would point into a temporary std::string (see above).
  template <class C, detail::if_temporary_string<C> = 0>
  PageRef(std::string_view key_, C&& content_, ContentKind kind_ = ContentKind::Html) = delete;
  /// Refused: key and content would point into temporary std::strings (see above).
  template <class K, class C, detail::if_temporary_string<K> = 0,
            detail::if_temporary_string<C> = 0>
  PageRef(K&& key_, C&& content_, ContentKind kind_ = ContentKind::Html) = delete;

  /// Sets the URL (used for the host when the host is empty); returns *this.
  PageRef& with_url(std::string_view url_) noexcept {
    url = url_;
    return *this;
  }
  /// Refused: the URL would point into a temporary std::string.
  template <class S, detail::if_temporary_string<S> = 0>
  PageRef& with_url(S&& url_) = delete;
  /// Sets the host; returns *this.
  PageRef& with_host(std::string_view host_) noexcept {
    host = host_;
    return *this;
  }
  /// Refused: the host would point into a temporary std::string.
  template <class S, detail::if_temporary_string<S> = 0>
  PageRef& with_host(S&& host_) = delete;
  /// Sets the publish time, Unix seconds; returns *this.
  PageRef& with_time(int64_t time_) noexcept {
    time = time_;
    return *this;
  }
};

/// The result of one page of a batch: a verdict, or the status and message of its failure.
struct BatchResult {
  Status status = Status::Ok;      ///< The page's status.
  std::string message;             ///< Its error message; empty when Status::Ok.
  std::optional<Verdict> verdict;  ///< Its verdict when Status::Ok.

  /// The page succeeded (it has a verdict).
  [[nodiscard]] bool ok() const noexcept { return status == Status::Ok; }
  /// The verdict, or throws Error(status, message).
  [[nodiscard]] const Verdict& value() const {
    if (!verdict) throw Error(status, message);
    return *verdict;
  }
};

/// Progress of Index::insert_batch: `done` of `total` pages handled.
using Progress = std::function<void(std::size_t done, std::size_t total)>;

/// The log callback of set_log_callback.
using LogCallback = std::function<void(LogLevel level, std::string_view message)>;

/// The stored page a text source is asked for (nd_text_request): its key and the version the
/// index holds.
struct TextRequest {
  std::string_view key;          ///< The page's key, valid during the call.
  uint32_t doc_id = 0;           ///< Its internal id.
  uint64_t seq = 0;              ///< Its insertion number (a replace of the key gets a new one).
  uint64_t content_hash_hi = 0;  ///< High 64 bits of the hash of its normalized main text.
  uint64_t content_hash_lo = 0;  ///< Low 64 bits of that hash.
};

/// A page's content as a text source gives it back: as it was inserted, of the same kind.
struct SourcedContent {
  std::string content;
  ContentKind kind = ContentKind::Html;
};

/// The text source of Options::text_source: the page's content, or none when the source does
/// not have it (the call that needed it then fails with ND_TEXT_UNAVAILABLE).
using TextSource = std::function<std::optional<SourcedContent>(const TextRequest& request)>;

namespace detail {

inline std::string to_string(const nd_str& s) {
  return s.ptr != nullptr && s.len != 0 ? std::string(s.ptr, s.len) : std::string();
}

inline std::optional<std::string> to_optional(const nd_str& s) {
  if (s.ptr == nullptr || s.len == 0) return std::nullopt;
  return std::string(s.ptr, s.len);
}

inline std::optional<uint32_t> to_id(uint32_t id) {
  if (id == static_cast<uint32_t>(ND_NO_ID)) return std::nullopt;
  return id;
}

inline Deletion to_deletion(const nd_deletion& d) {
  Deletion out;
  out.doc_id = d.doc_id;
  out.cluster_id = d.cluster_id;
  out.was_representative = d.was_representative;
  out.cluster_gone = d.cluster_gone;
  out.representative = to_optional(d.representative);
  if (d.moved != nullptr) {
    out.moved.reserve(d.moved_len);
    for (std::size_t i = 0; i < d.moved_len; ++i) {
      const nd_moved& m = d.moved[i];
      out.moved.push_back(Moved{to_string(m.key), m.cluster_id, to_string(m.representative)});
    }
  }
  return out;
}

inline Verdict to_verdict(const nd_verdict& v) {
  Verdict out;
  out.duplicate = v.duplicate;
  out.exact = v.exact;
  out.replaced = v.replaced;
  out.no_main_text = v.no_main_text;
  out.unchanged = v.unchanged;
  out.unchanged_html = v.unchanged_html;
  if (v.replaced_page != nullptr) out.replaced_page = to_deletion(*v.replaced_page);
  out.doc_id = to_id(v.doc_id);
  out.cluster_id = to_id(v.cluster_id);
  out.text_chars = v.text_chars;
  if (v.seq != ND_NO_SEQ) out.seq = v.seq;
  out.representative = to_optional(v.representative);
  out.similar_to = to_optional(v.similar_to);
  out.resemble = v.resemble;
  out.contain = v.contain;
  out.identical_to = to_optional(v.identical_to);
  out.candidates = v.candidates;
  out.verified = v.verified;
  out.signature_ns = v.signature_ns;
  out.candidates_ns = v.candidates_ns;
  out.verify_ns = v.verify_ns;
  out.write_ns = v.write_ns;
  return out;
}

inline Record to_record(const nd_record& r) {
  Record out;
  out.doc_id = r.doc_id;
  out.cluster_id = r.cluster_id;
  out.text_chars = r.text_chars;
  out.is_representative = r.is_representative;
  out.seq = r.seq;
  out.time = r.time;
  out.content_hash_hi = r.content_hash_hi;
  out.content_hash_lo = r.content_hash_lo;
  out.resemble = r.resemble;
  out.contain = r.contain;
  out.key = to_string(r.key);
  out.representative = to_string(r.representative);
  out.similar_to = to_optional(r.similar_to);
  out.host = to_string(r.host);
  return out;
}

inline std::vector<NearDuplicate> to_near(const nd_near_list& list) {
  std::vector<NearDuplicate> out;
  if (list.items == nullptr) return out;
  out.reserve(list.len);
  for (std::size_t i = 0; i < list.len; ++i) {
    const nd_near_duplicate& n = list.items[i];
    out.push_back(NearDuplicate{to_string(n.key), n.doc_id, n.cluster_id,
                                to_string(n.representative), n.resemble, n.contain, n.exact});
  }
  return out;
}

/// NearOptions as the C ABI takes them (an nd_near_options*, freed when this goes). status() is
/// the first refused setting (ND_INVALID_ARGUMENT for k 0 or a threshold outside [0, 1]) with
/// message() its text, read at once.
class CNearOptions {
 public:
  explicit CNearOptions(const NearOptions& o) {
    status_ = nd_near_options_new(&h_);
    if (status_ == ND_OK) status_ = nd_near_options_set_k(h_, o.k);
    if (status_ == ND_OK) status_ = nd_near_options_set_threshold(h_, o.threshold);
    if (status_ == ND_OK) status_ = nd_near_options_set_by(h_, static_cast<uint32_t>(o.by));
    if (status_ != ND_OK) message_ = last_error();
  }
  CNearOptions(const CNearOptions&) = delete;
  CNearOptions& operator=(const CNearOptions&) = delete;
  ~CNearOptions() { nd_near_options_free(h_); }
  nd_status status() const noexcept { return status_; }
  const std::string& message() const noexcept { return message_; }
  const nd_near_options* handle() const noexcept { return h_; }

 private:
  nd_near_options* h_ = nullptr;
  nd_status status_ = ND_OK;
  std::string message_;
};

inline nd_page to_c(const PageRef& p) noexcept {
  nd_page c{};
  c.key = p.key.data();
  c.key_len = p.key.size();
  c.url = p.url.data();
  c.url_len = p.url.size();
  c.host = p.host.data();
  c.host_len = p.host.size();
  c.time = p.time;
  c.content = reinterpret_cast<const uint8_t*>(p.content.data());
  c.content_len = p.content.size();
  c.content_kind = static_cast<uint32_t>(p.kind);
  return c;
}

/// A C struct the library fills, freed by its _free function when the guard goes.
template <class T, void (*Free)(T*)>
struct Owned {
  T value{};
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { Free(&value); }
};

/// The output arrays of a batch; every filled verdict and message is freed when it goes.
struct BatchOut {
  std::vector<nd_verdict> verdicts;
  std::vector<nd_status> statuses;
  std::vector<nd_str> messages;
  explicit BatchOut(std::size_t n) : verdicts(n), statuses(n, ND_OK), messages(n) {}
  BatchOut(const BatchOut&) = delete;
  BatchOut& operator=(const BatchOut&) = delete;
  ~BatchOut() {
    for (nd_verdict& v : verdicts) nd_verdict_free(&v);
    for (nd_str& s : messages) nd_str_free(&s);
  }
  std::vector<BatchResult> results() const {
    std::vector<BatchResult> out(verdicts.size());
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
      out[i].status = to_status(statuses[i]);
      if (statuses[i] == ND_OK) {
        out[i].verdict = to_verdict(verdicts[i]);
      } else {
        out[i].message = to_string(messages[i]);
      }
    }
    return out;
  }
};

struct ProgressState {
  const Progress* progress;
  std::exception_ptr error;
};

inline void progress_trampoline(void* user, std::size_t done, std::size_t total) noexcept {
  auto* state = static_cast<ProgressState*>(user);
  if (state->error) return;
  try {
    (*state->progress)(done, total);
  } catch (...) {
    state->error = std::current_exception();
  }
}

/// Records, for the call running on this thread, why the text source gave nothing.
inline void note_source_failure(const char* what, const char* reason) noexcept {
  try {
    source_failure() = std::string(what) + (reason != nullptr ? reason : "");
  } catch (...) {
    // Out of memory: the call fails with the library's message alone.
  }
}

inline bool text_trampoline(void* user, const nd_text_request* req, nd_text_sink* sink) noexcept {
  try {
    const auto* source = static_cast<const TextSource*>(user);
    TextRequest request;
    if (req->key != nullptr) request.key = std::string_view(req->key, req->key_len);
    request.doc_id = req->doc_id;
    request.seq = req->seq;
    request.content_hash_hi = req->content_hash_hi;
    request.content_hash_lo = req->content_hash_lo;
    const std::optional<SourcedContent> given = (*source)(request);
    if (!given) return false;
    const nd_status s =
        nd_text_sink_put(sink, reinterpret_cast<const uint8_t*>(given->content.data()),
                         given->content.size(), static_cast<uint32_t>(given->kind));
    if (s == ND_OK) return true;
    note_source_failure("the text source's content was refused: ", nd_last_error());
  } catch (const std::exception& e) {
    note_source_failure("the text source threw: ", e.what());
  } catch (...) {
    note_source_failure("the text source threw an exception that is not a std::exception", "");
  }
  return false;
}

inline void log_trampoline(void* user, uint32_t level, const uint8_t* message,
                           std::size_t len) noexcept {
  try {
    const auto* callback = static_cast<const LogCallback*>(user);
    (*callback)(static_cast<LogLevel>(level),
                std::string_view(reinterpret_cast<const char*>(message), len));
  } catch (...) {
    // Called on any thread, with no caller to hand it to: dropped.
  }
}

/// The process-wide log callback this header installed (leaked at exit on purpose: the
/// library's threads may still log while statics are destroyed).
struct LogSlot {
  std::mutex mutex;
  LogCallback* current = nullptr;
};

inline LogSlot& log_slot() {
  static LogSlot* slot = new LogSlot();
  return *slot;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Logging

/// Sets the process-wide log callback and the most detailed level passed to it; an empty
/// function removes it (records are then dropped). Without one the library writes nothing.
/// The callback is called on any thread, possibly at once: it must be thread-safe and must not
/// call into neardup; an exception it throws is dropped.
///
/// Throws Error(ND_INVALID_ARGUMENT) when another logger of Rust's `log` facade is installed.
inline void set_log_callback(LogCallback callback, LogLevel max_level = LogLevel::Info) {
  detail::LogSlot& slot = detail::log_slot();
  std::lock_guard<std::mutex> lock(slot.mutex);
  std::unique_ptr<LogCallback> fresh;
  if (callback) fresh = std::make_unique<LogCallback>(std::move(callback));
  check(nd_set_log_callback(fresh ? detail::log_trampoline : nullptr, fresh.get(),
                            static_cast<uint32_t>(max_level)));
  // The library swapped under its lock: no call to the previous callback is running now.
  std::unique_ptr<LogCallback> previous(slot.current);
  slot.current = fresh.release();
}

// ---------------------------------------------------------------------------------------------
// Options

/// The signature parameters (Options::signature); the defaults are the library's.
struct Signature {
  uint32_t min_sentence_width = 11;
  uint32_t groups = 7;
  uint32_t sentences_per_fingerprint = 4;
  uint32_t min_cover_width = 101;
  uint32_t rotations = 16;
  bool clause_units = true;
  uint32_t sketch_size = 8;
  uint32_t simhash_cjk_ngram = 2;
};

/// The containment keys (stored when the index is made; nd_options_set_containment_keys): the
/// defaults are the library's.
struct ContainmentKeys {
  uint32_t local_window = 32;    // windows of at least this many units give one local key
  uint32_t local_keys = 256;     // about this many local keys a page; 0 = none
  bool short_page_keys = true;   // a page of at most local_window units keys every unit
  uint32_t sampled_keys = 16;    // also key the units whose digest is 0 mod this; 0 = none
};

class Index;

/// Options an index is opened with (nd_options): the library's defaults until set. Setters
/// throw Error(ND_INVALID_ARGUMENT) for a value the library refuses, and return *this for
/// chaining. The index copies them: they may be destroyed right after opening.
class Options {
 public:
  Options() { check(nd_options_new(&opts_)); }
  Options(Options&& other) noexcept
      : opts_(std::exchange(other.opts_, nullptr)), source_(std::move(other.source_)) {}
  Options& operator=(Options&& other) noexcept {
    if (this != &other) {
      nd_options_free(opts_);
      opts_ = std::exchange(other.opts_, nullptr);
      source_ = std::move(other.source_);
    }
    return *this;
  }
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;
  ~Options() { nd_options_free(opts_); }

  /// Create the index when the directory holds none (default true).
  Options& create_if_missing(bool value) {
    check(nd_options_set_create_if_missing(opts_, value));
    return *this;
  }
  /// Sync the write-ahead log on every write and once per batch (default true).
  Options& sync_writes(bool value) {
    check(nd_options_set_sync_writes(opts_, value));
    return *this;
  }
  /// Pages whose headings name different model codes are never similar (default true).
  Options& heading_codes(bool value) {
    check(nd_options_set_heading_codes(opts_, value));
    return *this;
  }
  /// Fold traditional Chinese to simplified (default true; stored, must match).
  Options& fold_traditional(bool value) {
    check(nd_options_set_fold_traditional(opts_, value));
    return *this;
  }
  /// Fold traditional Chinese only in Chinese text, not in Japanese or Korean (default true;
  /// stored; an index made before the option folds every text).
  Options& fold_only_chinese(bool value) {
    check(nd_options_set_fold_only_chinese(opts_, value));
    return *this;
  }
  /// Store normalized texts in the index (default true; stored, must match). Off, set a
  /// text_source.
  Options& store_texts(bool value) {
    check(nd_options_set_store_texts(opts_, value));
    return *this;
  }
  /// Under FirstSeen, a representative keeps its cluster across a changed recrawl that still
  /// verifies against its old version (default true; not stored).
  Options& sticky_representative(bool value) {
    check(nd_options_set_sticky_representative(opts_, value));
    return *this;
  }
  /// How many of the last changes the change feed keeps (default 100,000; not stored): at
  /// least this many, trimmed in steps of an eighth; 0 keeps none.
  Options& change_retention(uint64_t changes) {
    check(nd_options_set_change_retention(opts_, changes));
    return *this;
  }
  /// No longer used (kept so that existing callers build): see block_cache_bytes.
  Options& posting_filter_bytes(uint64_t bytes) {
    check(nd_options_set_posting_filter_bytes(opts_, bytes));
    return *this;
  }
  /// The block cache shared by every column family, in bytes (default 256 MiB).
  Options& block_cache_bytes(uint64_t bytes) {
    check(nd_options_set_block_cache_bytes(opts_, bytes));
    return *this;
  }
  /// All memtables together, in bytes (default 256 MiB).
  Options& write_buffer_bytes(uint64_t bytes) {
    check(nd_options_set_write_buffer_bytes(opts_, bytes));
    return *this;
  }
  /// Table files kept open (default 1,024; 0: all, opened when the index opens).
  Options& max_open_files(uint32_t files) {
    check(nd_options_set_max_open_files(opts_, files));
    return *this;
  }
  /// Read the clause-sketch keys only when the other keys found nobody (default false).
  Options& sketch_fallback(bool value) {
    check(nd_options_set_sketch_fallback(opts_, value));
    return *this;
  }
  /// Which page leads a cluster (stored, must match).
  Options& representative_policy(Policy policy) {
    check(nd_options_set_representative_policy(opts_, static_cast<uint32_t>(policy)));
    return *this;
  }
  /// The near-duplicate method by name: lcs (default), shingle, winnow, punct, agt, imatch,
  /// imatch_multi, semantic, tfidf, topic, simhash, single_pass (stored, must match).
  Options& method(std::string_view name) {
    check(nd_options_set_method(opts_, name.data(), name.size()));
    return *this;
  }
  /// Maximum Hamming distance of simhash candidates: 1, 3 (default) or 7 (stored).
  Options& simhash_max_distance(uint32_t distance) {
    check(nd_options_set_simhash_max_distance(opts_, distance));
    return *this;
  }
  /// At most this many candidate clusters verified per page (default 8).
  Options& max_clusters_verified(uint32_t clusters) {
    check(nd_options_set_max_clusters_verified(opts_, clusters));
    return *this;
  }
  /// Similar when resemble >= `resemble` or contain >= `contain` (defaults 0.28, 0.70).
  Options& thresholds(double resemble, double contain) {
    check(nd_options_set_thresholds(opts_, resemble, contain));
    return *this;
  }
  /// Also similar when the whole skeleton LCS resembles >= `threshold` (default 0.44; 1 = off).
  Options& lcs_resemble_threshold(double threshold) {
    check(nd_options_set_lcs_resemble_threshold(opts_, threshold));
    return *this;
  }
  /// Also similar when the skeleton LCS weighted by unit length in chars resembles >=
  /// `threshold` (default 0.48; 1 = off): partial translations.
  Options& weighted_lcs_resemble_threshold(double threshold) {
    check(nd_options_set_weighted_lcs_resemble_threshold(opts_, threshold));
    return *this;
  }
  /// Also similar when the word alignment covers >= `min_lcs` of the shorter text (default 0.50;
  /// 1 = off) and >= `threshold` of its characters are found in order where it was placed in
  /// the longer text (default 0.80): located containment.
  Options& located_containment(double threshold, double min_lcs) {
    check(nd_options_set_located_containment(opts_, threshold, min_lcs));
    return *this;
  }
  /// Larger pages are refused with ND_PAGE_TOO_LARGE (default 16 MiB; stored).
  Options& max_page_bytes(uint64_t bytes) {
    check(nd_options_set_max_page_bytes(opts_, bytes));
    return *this;
  }
  /// Over-frequent fingerprint limits (defaults 10,000, 400, 8).
  Options& frequent(uint64_t max_pages, uint64_t few_hosts_pages, uint32_t few_hosts) {
    check(nd_options_set_frequent(opts_, max_pages, few_hosts_pages, few_hosts));
    return *this;
  }
  /// The signature parameters (stored, must match).
  Options& signature(const Signature& s) {
    check(nd_options_set_signature(opts_, s.min_sentence_width, s.groups,
                                   s.sentences_per_fingerprint, s.min_cover_width, s.rotations,
                                   s.clause_units, s.sketch_size, s.simhash_cjk_ngram));
    return *this;
  }
  /// The containment keys: how an excerpt finds the page it is part of (stored, must match).
  Options& containment_keys(const ContainmentKeys& k) {
    check(nd_options_set_containment_keys(opts_, k.local_window, k.local_keys,
                                          k.short_page_keys, k.sampled_keys));
    return *this;
  }

  /// The text source of an index that stores no texts (store_texts(false)); an empty function
  /// removes it. See the top of this file for threads and exceptions.
  Options& text_source(TextSource source) {
    std::shared_ptr<const TextSource> fresh;
    if (source) fresh = std::make_shared<const TextSource>(std::move(source));
    check(nd_options_set_text_source(opts_, fresh ? detail::text_trampoline : nullptr,
                                     const_cast<TextSource*>(fresh.get())));
    source_ = std::move(fresh);
    return *this;
  }

  /// The C handle, for calls this header does not wrap; still owned by this object.
  [[nodiscard]] nd_options* c_handle() const noexcept { return opts_; }

 private:
  friend class Index;
  nd_options* opts_ = nullptr;
  std::shared_ptr<const TextSource> source_;  // given to every Index opened with these options
};

// ---------------------------------------------------------------------------------------------
// Cursor

/// A cursor over clusters, a cluster's members or all keys, at one snapshot (nd_cursor).
/// Move-only; used by one thread at a time. Iterate with next() or range-for:
/// `for (const neardup::CursorItem& c : ix.clusters()) …`. It keeps the database open even
/// after its Index is destroyed (see the top of this file).
class Cursor {
 public:
  Cursor(Cursor&& other) noexcept
      : cursor_(std::exchange(other.cursor_, nullptr)), keep_(std::move(other.keep_)) {}
  Cursor& operator=(Cursor&& other) noexcept {
    if (this != &other) {
      nd_cursor_free(cursor_);
      cursor_ = std::exchange(other.cursor_, nullptr);
      keep_ = std::move(other.keep_);
    }
    return *this;
  }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  ~Cursor() { nd_cursor_free(cursor_); }

  /// The next item, or none at the end (and after it). Throws Error on a read failure
  /// (ND_STORAGE, ND_CORRUPTION: the cursor then ends).
  [[nodiscard]] std::optional<CursorItem> next() {
    nd_cursor_item item{};
    bool has = false;
    check(nd_cursor_next(cursor_, &item, &has));
    if (!has) return std::nullopt;
    CursorItem out;
    if (item.key != nullptr) out.key.assign(item.key, item.key_len);
    out.cluster_id = item.cluster;
    out.size = item.size;
    return out;
  }

  /// An input iterator: each increment calls next().
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = CursorItem;
    using difference_type = std::ptrdiff_t;
    using pointer = const CursorItem*;
    using reference = const CursorItem&;

    iterator() = default;
    reference operator*() const { return *item_; }
    pointer operator->() const { return &*item_; }
    iterator& operator++() {
      item_ = cursor_->next();
      if (!item_) cursor_ = nullptr;
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.cursor_ == b.cursor_;
    }
    friend bool operator!=(const iterator& a, const iterator& b) noexcept { return !(a == b); }

   private:
    friend class Cursor;
    explicit iterator(Cursor* cursor) : cursor_(cursor) { ++*this; }
    Cursor* cursor_ = nullptr;
    std::optional<CursorItem> item_;
  };

  /// Reads the first item (of what is left).
  iterator begin() { return iterator(this); }
  iterator end() noexcept { return iterator(); }

  /// The C handle; still owned by this object.
  [[nodiscard]] nd_cursor* c_handle() const noexcept { return cursor_; }

 private:
  friend class Index;
  Cursor(nd_cursor* cursor, std::shared_ptr<const void> keep) noexcept
      : cursor_(cursor), keep_(std::move(keep)) {}
  nd_cursor* cursor_ = nullptr;
  std::shared_ptr<const void> keep_;  // the text source, kept while the database may be open
};

// ---------------------------------------------------------------------------------------------
// Changes

/// A cursor over the change feed, in sequence order, at one snapshot (nd_changes; see
/// Index::changes_since). Move-only; used by one thread at a time. Iterate with next() or
/// range-for: `for (const neardup::Change& c : ix.changes_since(last)) …`. Like Cursor, it
/// keeps the database open even after its Index is destroyed.
class Changes {
 public:
  Changes(Changes&& other) noexcept
      : c_(std::exchange(other.c_, nullptr)), keep_(std::move(other.keep_)) {}
  Changes& operator=(Changes&& other) noexcept {
    if (this != &other) {
      nd_changes_free(c_);
      c_ = std::exchange(other.c_, nullptr);
      keep_ = std::move(other.keep_);
    }
    return *this;
  }
  Changes(const Changes&) = delete;
  Changes& operator=(const Changes&) = delete;
  ~Changes() { nd_changes_free(c_); }

  /// The next change, or none at the end (and after it). Throws Error on a read failure
  /// (ND_STORAGE, ND_CORRUPTION: the cursor then ends).
  [[nodiscard]] std::optional<Change> next() {
    nd_change c{};
    bool has = false;
    check(nd_changes_next(c_, &c, &has));
    if (!has) return std::nullopt;
    auto str = [](const char* p, std::size_t n) { return p ? std::string(p, n) : std::string(); };
    Change out;
    out.seq = c.seq;
    out.committed_ms = c.committed_ms;
    out.kind = static_cast<ChangeKind>(c.kind);
    out.key = str(c.key, c.key_len);
    out.host = str(c.host, c.host_len);
    out.time = c.time;
    out.doc_id = c.doc;
    out.cluster_id = c.cluster;
    out.from_cluster_id = c.from_cluster;
    out.representative = str(c.representative, c.representative_len);
    out.previous = str(c.previous, c.previous_len);
    out.text = str(c.text, c.text_len);
    if (c.bytes != nullptr) out.bytes.assign(c.bytes, c.bytes + c.bytes_len);
    return out;
  }

  /// The sequence number of the last change this cursor lists (the last committed when it was
  /// opened): a follower that read them all calls changes_since(last()) next.
  [[nodiscard]] uint64_t last() const {
    uint64_t n = 0;
    check(nd_changes_last(c_, &n));
    return n;
  }

  /// An input iterator: each increment calls next().
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Change;
    using difference_type = std::ptrdiff_t;
    using pointer = const Change*;
    using reference = const Change&;

    iterator() = default;
    reference operator*() const { return *item_; }
    pointer operator->() const { return &*item_; }
    iterator& operator++() {
      item_ = changes_->next();
      if (!item_) changes_ = nullptr;
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.changes_ == b.changes_;
    }
    friend bool operator!=(const iterator& a, const iterator& b) noexcept { return !(a == b); }

   private:
    friend class Changes;
    explicit iterator(Changes* changes) : changes_(changes) { ++*this; }
    Changes* changes_ = nullptr;
    std::optional<Change> item_;
  };

  /// Reads the first change (of what is left).
  iterator begin() { return iterator(this); }
  iterator end() noexcept { return iterator(); }

  /// The C handle; still owned by this object.
  [[nodiscard]] nd_changes* c_handle() const noexcept { return c_; }

 private:
  friend class Index;
  Changes(nd_changes* c, std::shared_ptr<const void> keep) noexcept
      : c_(c), keep_(std::move(keep)) {}
  nd_changes* c_ = nullptr;
  std::shared_ptr<const void> keep_;  // the text source, kept while the database may be open
};

// ---------------------------------------------------------------------------------------------
// Index

/// An open index (nd_index). Move-only; thread-safe (any number of threads may call one Index
/// at once). Every method throws Error on failure but the try_ family, which returns a Result
/// instead; see neardup.h for each call's statuses.
class Index {
 public:
  /// Opens (or creates, by default) the index in the directory `path`; `options` may be null
  /// for the defaults.
  ///
  /// One Index per index directory per process: while an Index on it is open, opening it again
  /// throws Error(ND_ALREADY_OPEN). So `ix = Index::open(path)` cannot reopen `ix` (the right
  /// side runs first, while `ix` still holds the index): call `ix.reopen()`, or `ix.close()`
  /// before the assignment.
  [[nodiscard]] static Index open(std::string_view path, const Options* options = nullptr) {
    return try_open(path, options).value();
  }
  /// open(path, &options).
  [[nodiscard]] static Index open(std::string_view path, const Options& options) {
    return open(path, &options);
  }

  /// Opens the existing index in `path` with the configuration stored in it.
  [[nodiscard]] static Index open_existing(std::string_view path) {
    return try_open_existing(path).value();
  }

  /// Opens an index or checkpoint read-only: writes throw Error(ND_READ_ONLY).
  [[nodiscard]] static Index open_read_only(std::string_view path) {
    return try_open_read_only(path).value();
  }

  /// open() without exceptions: the Index, or the Status and message open would have thrown
  /// (Status::AlreadyOpen's message says how to reopen, as open's does).
  [[nodiscard]] static Result<Index> try_open(std::string_view path,
                                              const Options* options = nullptr) {
    nd_index* h = nullptr;
    const nd_status s =
        nd_index_open(path.data(), path.size(), options ? options->opts_ : nullptr, &h);
    if (s != ND_OK) return Result<Index>::failure(to_status(s), open_message(s));
    return Result<Index>::success(Index(h, options ? options->source_ : nullptr));
  }
  /// try_open(path, &options).
  [[nodiscard]] static Result<Index> try_open(std::string_view path, const Options& options) {
    return try_open(path, &options);
  }

  /// open_existing() without exceptions.
  [[nodiscard]] static Result<Index> try_open_existing(std::string_view path) {
    nd_index* h = nullptr;
    const nd_status s = nd_index_open_existing(path.data(), path.size(), &h);
    if (s != ND_OK) return Result<Index>::failure(to_status(s), open_message(s));
    return Result<Index>::success(Index(h, nullptr));
  }

  /// open_read_only() without exceptions.
  [[nodiscard]] static Result<Index> try_open_read_only(std::string_view path) {
    nd_index* h = nullptr;
    const nd_status s = nd_index_open_read_only(path.data(), path.size(), &h);
    if (s != ND_OK) return Result<Index>::failure(to_status(s), detail::last_error());
    return Result<Index>::success(Index(h, nullptr));
  }

  /// The configuration stored in the index at `path` (closed, or open elsewhere), as JSON.
  [[nodiscard]] static std::string stored_config_json(std::string_view path) {
    detail::Owned<nd_str, nd_str_free> s;
    neardup::check(nd_stored_config_json(path.data(), path.size(), &s.value));
    return detail::to_string(s.value);
  }

  /// Offline compaction of the closed index or checkpoint at `from` into a new index at `to`
  /// (1,000 random pages of it checked; `checked`: all of it).
  static void compact_snapshot(std::string_view from, std::string_view to, bool checked = false) {
    neardup::check(checked
                       ? nd_compact_snapshot_checked(from.data(), from.size(), to.data(), to.size())
                       : nd_compact_snapshot(from.data(), from.size(), to.data(), to.size()));
  }

  Index(Index&& other) noexcept
      : h_(std::exchange(other.h_, nullptr)), keep_(std::move(other.keep_)) {}
  Index& operator=(Index&& other) noexcept {
    if (this != &other) {
      nd_index_free(h_);
      h_ = std::exchange(other.h_, nullptr);
      keep_ = std::move(other.keep_);
    }
    return *this;
  }
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;
  /// Closes (waiting for the calls in flight) and frees the handle; never throws. In a child
  /// after fork() it leaves the inherited handle alone (see the top of this file).
  ~Index() { nd_index_free(h_); }

  /// Closes the index: later calls throw Error(ND_CLOSED). Throws Error(ND_INVALID_ARGUMENT)
  /// while cursors are open (the index stays open), Error(ND_STORAGE) when the final flush
  /// fails (the index is closed all the same), Error(ND_CLOSED) when already closed.
  void close() { neardup::check(nd_index_close(h_)); }

  /// close() without exceptions.
  [[nodiscard]] Result<void> try_close() {
    const nd_status s = nd_index_close(h_);
    if (s != ND_OK) return Result<void>::failure(to_status(s), detail::last_error());
    return Result<void>::success();
  }

  /// Closes the index and opens it again in this Index (nd_index_reopen): the same path and
  /// options, the same text source; a read-only Index is reopened read-only and then sees the
  /// writes made since. This is the reopen idiom (`ix = Index::open(path)` throws
  /// ND_ALREADY_OPEN, see open()). Calls made on this Index from other threads meanwhile wait
  /// for the reopened index. Throws Error(ND_INVALID_ARGUMENT) while cursors are open (the index
  /// stays open), Error(ND_CLOSED) when closed; when the final flush or the open fails, throws
  /// that Error and the Index is left closed (later calls throw ND_CLOSED).
  void reopen() { call(nd_index_reopen(h_)); }

  /// reopen() without exceptions (on a failure of the final flush or of the open, the Index is
  /// left closed, as with reopen()).
  [[nodiscard]] Result<void> try_reopen() {
    const nd_status s = nd_index_reopen(h_);
    if (s != ND_OK) return Result<void>::failure(to_status(s), failure_message(s));
    detail::source_failure().clear();
    return Result<void>::success();
  }

  /// Inserts a page (a present key is replaced) and returns its verdict. [[nodiscard]]: the
  /// verdict is what an insert is for (write `(void)ix.insert(p)` to store without reading it).
  [[nodiscard]] Verdict insert(const PageRef& page) { return try_insert(page).value(); }

  /// insert() without exceptions: the verdict, or the Status and message insert would have
  /// thrown (Status::TextUnavailable's message ends with what the text source threw).
  [[nodiscard]] Result<Verdict> try_insert(const PageRef& page) {
    const nd_page p = detail::to_c(page);
    detail::Owned<nd_verdict, nd_verdict_free> v;
    const nd_status s = nd_index_insert(h_, &p, &v.value);
    return outcome(s, [&] { return detail::to_verdict(v.value); });
  }

  /// The verdict insert would give this content, storing nothing.
  [[nodiscard]] Verdict query(std::string_view content,
                              ContentKind kind = ContentKind::Html) const {
    return try_query(content, kind).value();
  }

  /// query() without exceptions.
  [[nodiscard]] Result<Verdict> try_query(std::string_view content,
                                          ContentKind kind = ContentKind::Html) const {
    detail::Owned<nd_verdict, nd_verdict_free> v;
    const nd_status s =
        nd_index_query(h_, reinterpret_cast<const uint8_t*>(content.data()), content.size(),
                       static_cast<uint32_t>(kind), &v.value);
    return outcome(s, [&] { return detail::to_verdict(v.value); });
  }

  /// Every stored page this content verifies similar to, best first (nd_index_near): the
  /// representatives of the clusters a query ranks and each one's best-sharing member, all
  /// verified; at most options.k, each with its score at least options.threshold. Identical
  /// texts come first, then by options.by, then the other score, then by id. Nothing is stored;
  /// empty when none is found. Throws Error(ND_INVALID_ARGUMENT) for k 0 or a threshold outside
  /// [0, 1], and the errors of query.
  [[nodiscard]] std::vector<NearDuplicate> near(std::string_view content,
                                                const NearOptions& options = {},
                                                ContentKind kind = ContentKind::Html) const {
    return try_near(content, options, kind).value();
  }

  /// near() without exceptions.
  [[nodiscard]] Result<std::vector<NearDuplicate>> try_near(
      std::string_view content, const NearOptions& options = {},
      ContentKind kind = ContentKind::Html) const {
    const detail::CNearOptions o(options);
    if (o.status() != ND_OK)
      return Result<std::vector<NearDuplicate>>::failure(to_status(o.status()), o.message());
    detail::Owned<nd_near_list, nd_near_list_free> list;
    const nd_status s =
        nd_index_near(h_, reinterpret_cast<const uint8_t*>(content.data()), content.size(),
                      static_cast<uint32_t>(kind), o.handle(), &list.value);
    return outcome(s, [&] { return detail::to_near(list.value); });
  }

  /// near() for a page with its key and host (nd_index_near_page): the site chrome learned for
  /// the host is dropped as insert would drop it; nothing is stored. When the key is held, its
  /// stored version is among the pages found while it still verifies. Throws as near(), and
  /// Error(ND_INVALID_ARGUMENT) for an empty key.
  [[nodiscard]] std::vector<NearDuplicate> near_page(const PageRef& page,
                                                     const NearOptions& options = {}) const {
    return try_near_page(page, options).value();
  }

  /// near_page() without exceptions.
  [[nodiscard]] Result<std::vector<NearDuplicate>> try_near_page(
      const PageRef& page, const NearOptions& options = {}) const {
    const detail::CNearOptions o(options);
    if (o.status() != ND_OK)
      return Result<std::vector<NearDuplicate>>::failure(to_status(o.status()), o.message());
    const nd_page p = detail::to_c(page);
    detail::Owned<nd_near_list, nd_near_list_free> list;
    const nd_status s = nd_index_near_page(h_, &p, o.handle(), &list.value);
    return outcome(s, [&] { return detail::to_near(list.value); });
  }

  /// Inserts `count` pages from `pages` as one batch, in `order` (by default the order given,
  /// so the first page given of a cluster leads it): one BatchResult per page, in input order
  /// (a page that fails does not stop the others; `count` 0 gives an empty result). `progress`
  /// runs on this thread after every committed group; an exception it throws is rethrown when
  /// the batch has ended. Throws Error when the batch could not run or a failed write stopped
  /// it (the groups committed before stay). The overloads below take a std::vector, a braced
  /// list (`ix.insert_batch({})`, `ix.insert_batch({PageRef(k, html), …})`) and, in C++20, a
  /// std::span.
  [[nodiscard]] std::vector<BatchResult> insert_batch(const PageRef* pages, std::size_t count,
                                                      Order order = Order::Input,
                                                      const Progress& progress = {}) {
    const std::vector<nd_page> c = to_c_pages(pages, count);
    detail::BatchOut out(count);
    detail::ProgressState state{&progress, nullptr};
    const nd_status s = nd_index_insert_batch(
        h_, c.data(), c.size(), static_cast<uint32_t>(order), out.verdicts.data(),
        out.statuses.data(), out.messages.data(), progress ? detail::progress_trampoline : nullptr,
        &state);
    call(s);
    if (state.error) std::rethrow_exception(state.error);
    return out.results();
  }
  /// insert_batch over a vector of pages.
  [[nodiscard]] std::vector<BatchResult> insert_batch(const std::vector<PageRef>& pages,
                                                      Order order = Order::Input,
                                                      const Progress& progress = {}) {
    return insert_batch(pages.data(), pages.size(), order, progress);
  }
  /// insert_batch over a braced list of pages; `{}` is an empty batch.
  [[nodiscard]] std::vector<BatchResult> insert_batch(std::initializer_list<PageRef> pages,
                                                      Order order = Order::Input,
                                                      const Progress& progress = {}) {
    return insert_batch(pages.begin(), pages.size(), order, progress);
  }
#ifdef NEARDUP_HAS_SPAN
  /// insert_batch over a span of pages (C++20).
  [[nodiscard]] std::vector<BatchResult> insert_batch(std::span<const PageRef> pages,
                                                      Order order = Order::Input,
                                                      const Progress& progress = {}) {
    return insert_batch(pages.data(), pages.size(), order, progress);
  }
#endif

  /// The verdicts query gives the content of each of `count` pages from `pages` (keys and
  /// hosts are not used), computed in parallel: one BatchResult per page (`count` 0: none).
  /// The overloads below take a std::vector, a braced list (`ix.query_batch({})` is an empty
  /// batch), in C++20 a std::span, and a vector of contents of one kind.
  [[nodiscard]] std::vector<BatchResult> query_batch(const PageRef* pages,
                                                     std::size_t count) const {
    const std::vector<nd_page> c = to_c_pages(pages, count);
    detail::BatchOut out(count);
    call(nd_index_query_batch(h_, c.data(), c.size(), out.verdicts.data(), out.statuses.data(),
                              out.messages.data()));
    return out.results();
  }
  /// query_batch over a vector of pages.
  [[nodiscard]] std::vector<BatchResult> query_batch(const std::vector<PageRef>& pages) const {
    return query_batch(pages.data(), pages.size());
  }
  /// query_batch over a braced list of pages; `{}` is an empty batch (chosen over the other
  /// overloads: a braced list prefers std::initializer_list).
  [[nodiscard]] std::vector<BatchResult> query_batch(
      std::initializer_list<PageRef> pages) const {
    return query_batch(pages.begin(), pages.size());
  }
#ifdef NEARDUP_HAS_SPAN
  /// query_batch over a span of pages (C++20).
  [[nodiscard]] std::vector<BatchResult> query_batch(std::span<const PageRef> pages) const {
    return query_batch(pages.data(), pages.size());
  }
#endif

  /// query_batch over contents of one kind (`ix.query_batch({html1, html2})` lands here).
  [[nodiscard]] std::vector<BatchResult> query_batch(const std::vector<std::string_view>& contents,
                                                     ContentKind kind = ContentKind::Html) const {
    std::vector<PageRef> pages;
    pages.reserve(contents.size());
    for (std::string_view content : contents) pages.emplace_back(std::string_view(), content, kind);
    return query_batch(pages);
  }

  /// Deletes the page with this key (nd_index_delete) and returns what changed. Throws
  /// Error(ND_NOT_FOUND) when the key is absent.
  Deletion erase(std::string_view key) { return try_erase(key).value(); }

  /// erase() without exceptions: what changed, or the Status (Status::NotFound for an absent
  /// key) and message erase would have thrown.
  [[nodiscard]] Result<Deletion> try_erase(std::string_view key) {
    detail::Owned<nd_deletion, nd_deletion_free> d;
    const nd_status s = nd_index_delete(h_, key.data(), key.size(), &d.value);
    return outcome(s, [&] { return detail::to_deletion(d.value); });
  }

  /// The stored record of a key. Throws Error(ND_NOT_FOUND) when the key is absent.
  [[nodiscard]] Record get(std::string_view key) const { return try_get(key).value(); }

  /// get() without exceptions: the record, or Status::NotFound for an absent key (find() gives
  /// std::nullopt for it instead and throws the other failures), or another failure.
  [[nodiscard]] Result<Record> try_get(std::string_view key) const {
    detail::Owned<nd_record, nd_record_free> r;
    const nd_status s = nd_index_get(h_, key.data(), key.size(), &r.value);
    return outcome(s, [&] { return detail::to_record(r.value); });
  }

  /// The stored record of a key, or none when the key is absent (other failures throw).
  [[nodiscard]] std::optional<Record> find(std::string_view key) const {
    detail::Owned<nd_record, nd_record_free> r;
    const nd_status s = nd_index_get(h_, key.data(), key.size(), &r.value);
    if (s == ND_NOT_FOUND) return std::nullopt;
    call(s);
    return detail::to_record(r.value);
  }

  /// A key's cluster and its representative. Throws Error(ND_NOT_FOUND) when absent.
  [[nodiscard]] Placement representative(std::string_view key) const {
    uint32_t cluster = 0;
    detail::Owned<nd_str, nd_str_free> rep;
    call(nd_index_representative(h_, key.data(), key.size(), &cluster, &rep.value));
    return Placement{cluster, detail::to_string(rep.value)};
  }

  /// At most `limit` member keys of a cluster from position `offset`, in id order. Throws
  /// Error(ND_NOT_FOUND) when there is no such cluster.
  [[nodiscard]] std::vector<std::string> cluster_members(uint32_t cluster, std::size_t offset,
                                           std::size_t limit) const {
    detail::Owned<nd_key_list, nd_key_list_free> list;
    call(nd_index_cluster_members(h_, cluster, offset, limit, &list.value));
    std::vector<std::string> out;
    if (list.value.keys != nullptr) {
      out.reserve(list.value.len);
      for (std::size_t i = 0; i < list.value.len; ++i)
        out.push_back(detail::to_string(list.value.keys[i]));
    }
    return out;
  }

  /// A cursor over every cluster (representative's key, id, size), in id order.
  [[nodiscard]] Cursor clusters() const {
    nd_cursor* c = nullptr;
    call(nd_index_clusters(h_, &c));
    return Cursor(c, keep_);
  }

  /// A cursor over every page's key and cluster, in id order.
  [[nodiscard]] Cursor keys() const {
    nd_cursor* c = nullptr;
    call(nd_index_keys(h_, &c));
    return Cursor(c, keep_);
  }

  /// A cursor over a cluster's members, in id order. Throws Error(ND_NOT_FOUND) when there is
  /// no such cluster.
  [[nodiscard]] Cursor members(uint32_t cluster) const {
    nd_cursor* c = nullptr;
    call(nd_index_members(h_, cluster, &c));
    return Cursor(c, keep_);
  }

  /// The change feed: every change committed after change `since` (0: from the first), in
  /// sequence order, at one snapshot. Throws Error(ND_CHANGES_TRIMMED) when changes after
  /// `since` were trimmed (copy the index again), Error(ND_INVALID_ARGUMENT) when `since` is
  /// past the last change.
  [[nodiscard]] Changes changes_since(uint64_t since) const {
    nd_changes* c = nullptr;
    call(nd_index_changes(h_, since, &c));
    return Changes(c, keep_);
  }

  /// The sequence number of the last committed change (0: none).
  [[nodiscard]] uint64_t last_change() const {
    uint64_t n = 0;
    call(nd_index_last_change(h_, &n));
    return n;
  }

  /// Applies a change of another index's feed to this index, a copy of that one
  /// (nd_index_apply_change): decided again with the ids the original gave out. Throws
  /// Error(ND_INVALID_ARGUMENT) when it does not apply as it did there (nothing is written).
  void apply_change(const Change& change) {
    apply_change(change.bytes.data(), change.bytes.size());
  }

  /// apply_change of a change's bytes (Change::bytes, shipped from another process).
  void apply_change(const uint8_t* bytes, std::size_t len) {
    call(nd_index_apply_change(h_, bytes, len));
  }

  /// apply_change, returning the failure instead of throwing it.
  [[nodiscard]] Result<void> try_apply_change(const Change& change) {
    const nd_status s = nd_index_apply_change(h_, change.bytes.data(), change.bytes.size());
    if (s != ND_OK) return Result<void>::failure(to_status(s), failure_message(s));
    detail::source_failure().clear();
    return Result<void>::success();
  }

  /// Figures about the index.
  [[nodiscard]] Stats stats() const {
    nd_stats s{};
    call(nd_index_stats(h_, &s));
    return Stats{s.pages, s.clusters, s.frequent_fingerprints,
                 s.bytes, s.page_ids, s.cluster_ids};
  }

  /// Checks every invariant; a check that ran and found problems returns them (no throw).
  [[nodiscard]] CheckReport check() const {
    CheckReport out;
    detail::Owned<nd_str, nd_str_free> report;
    call(nd_index_check(h_, &out.problems, &report.value));
    out.report = detail::to_string(report.value);
    return out;
  }

  /// Checks `pages` random pages one by one: a quick look at a large index.
  [[nodiscard]] CheckReport check_sample(uint64_t pages) const {
    CheckReport out;
    detail::Owned<nd_str, nd_str_free> report;
    call(nd_index_check_sample(h_, pages, &out.problems, &report.value));
    out.report = detail::to_string(report.value);
    return out;
  }

  /// RocksDB's own statistics (compactions, levels, stalls, cache), as text.
  [[nodiscard]] std::string rocksdb_stats() const {
    detail::Owned<nd_str, nd_str_free> s;
    call(nd_index_rocksdb_stats(h_, &s.value));
    return detail::to_string(s.value);
  }

  /// Metrics since the index was opened, as one JSON object (nd_index_metrics_json): per
  /// operation the calls that succeeded, those that failed and their latencies (mean, p50, p90,
  /// p99, max in microseconds), the insert outcomes, RocksDB's stall figures and the memory by
  /// part.
  [[nodiscard]] std::string metrics_json() const {
    detail::Owned<nd_str, nd_str_free> s;
    call(nd_index_metrics_json(h_, &s.value));
    return detail::to_string(s.value);
  }

  /// Writes a consistent snapshot to the directory `dir`, which must not exist.
  void checkpoint(std::string_view dir) { call(nd_index_checkpoint(h_, dir.data(), dir.size())); }

  /// Compacts the open index in place.
  void compact() { call(nd_index_compact(h_)); }

  /// Number of live pages.
  [[nodiscard]] uint64_t len() const {
    uint64_t n = 0;
    call(nd_index_len(h_, &n));
    return n;
  }

  /// The configuration stored in the index, as JSON.
  [[nodiscard]] std::string config_json() const {
    detail::Owned<nd_str, nd_str_free> s;
    call(nd_index_config_json(h_, &s.value));
    return detail::to_string(s.value);
  }

  /// The C handle, for calls this header does not wrap; still owned by this object.
  [[nodiscard]] nd_index* c_handle() const noexcept { return h_; }

 private:
  Index(nd_index* h, std::shared_ptr<const void> keep) noexcept : h_(h), keep_(std::move(keep)) {}

  /// The message of a failed open: ND_ALREADY_OPEN says how to reopen.
  static std::string open_message(nd_status s) {
    std::string message = detail::last_error();
    if (s == ND_ALREADY_OPEN)
      message +=
          "; to open it again, call reopen() on the Index holding it, or close() it first "
          "(`ix = Index::open(path)` opens before `ix` is released)";
    return message;
  }

  /// The message of a failed call (not ND_OK), read before any other nd_ call, plus what the
  /// text source threw on this thread during the call.
  static std::string failure_message(nd_status s) {
    std::string& failure = detail::source_failure();
    std::string message = detail::last_error();
    if (!failure.empty()) {
      if (s == ND_TEXT_UNAVAILABLE) message += " (" + failure + ")";
      failure.clear();
    }
    return message;
  }

  /// check(), plus what the text source threw on this thread during the call.
  static void call(nd_status s) {
    if (s == ND_OK) {
      detail::source_failure().clear();
      return;
    }
    throw Error(s, failure_message(s));
  }

  /// The Result of a call that returned `s`: make() on success, else the failure.
  template <class F>
  static auto outcome(nd_status s, F&& make) -> Result<decltype(make())> {
    using T = decltype(make());
    if (s != ND_OK) return Result<T>::failure(to_status(s), failure_message(s));
    detail::source_failure().clear();
    return Result<T>::success(make());
  }

  /// The C pages of `count` PageRefs (none when `count` is 0, whatever `pages` is).
  static std::vector<nd_page> to_c_pages(const PageRef* pages, std::size_t count) {
    std::vector<nd_page> c;
    c.reserve(count);
    for (std::size_t i = 0; i < count; ++i) c.push_back(detail::to_c(pages[i]));
    return c;
  }

  nd_index* h_ = nullptr;
  std::shared_ptr<const void> keep_;  // the text source, alive while the database may be open
};

}  // namespace neardup

#endif  // NEARDUP_HPP
