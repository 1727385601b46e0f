// neardup.hpp across fork() and the reopen idiom (issue #33, B1, B2 and B5). Built and run by
// tests/ffi_fork.rs, plainly and under ASan+UBSan.
//
// 1. fork: 50 children each find every call on the inherited Index and Cursor throwing
//    Error(ND_WRONG_PROCESS) — len, close and reopen included — and opening any index
//    throwing it too; then they destroy the inherited objects (~Index, ~Cursor) and call
//    std::exit(0): all 50 exit 0. The parent's Index and Cursor work on.
// 2. reopen: `ix = Index::open(same_path)` throws ND_ALREADY_OPEN and says to call reopen(),
//    leaving ix as it was; ix.reopen() closes and reopens in place (refused while a cursor is
//    open); ix.close() then assignment works; a read-only Index sees later writes after
//    reopen(); calls from four threads during twenty reopens all succeed; reopen after close
//    throws ND_CLOSED.
//
// Usage: fork_reopen DIR   (an empty directory)
// Prints "fork_reopen: ok" and exits 0 when every check passed.
#include "neardup.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

// The status `f` throws (ND_OK when it does not throw), and its message in `message`.
nd_status thrown(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
    return ND_OK;
  } catch (const neardup::Error& e) {
    if (message != nullptr) *message = e.message();
    return e.c_status();
  }
}

std::string text(int i) {
  return "Page " + std::to_string(i) + " of the reopen test has a sentence of its own about the " +
         "harbour number " + std::to_string(i * 7) + ", and another one about the bridge that " +
         "was closed on day " + std::to_string(i % 31) + " of the month.";
}

void put(neardup::Index& ix, const std::string& key, int i) {
  const std::string t = text(i);
  (void)ix.insert(neardup::PageRef(key, t, neardup::ContentKind::Text));
}

// In a child: a failed expectation is its exit status.
#define CHILD_EXPECT(cond, code)                                                            \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "child: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);       \
      std::_Exit(code);                                                                     \
    }                                                                                       \
  } while (0)

void fork_children(neardup::Index& ix, const std::string& dir) {
  neardup::Cursor cur = ix.keys();
  const uint64_t before = ix.len();
  int clean = 0;
  for (int run = 0; run < 50; ++run) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      const nd_status W = ND_WRONG_PROCESS;
      std::string message;
      CHILD_EXPECT(thrown([&] { (void)ix.len(); }, &message) == W, 10);
      CHILD_EXPECT(message.find("process") != std::string::npos, 11);
      CHILD_EXPECT(thrown([&] { put(ix, "from-child", 1); }) == W, 12);
      CHILD_EXPECT(thrown([&] { (void)ix.find("k1"); }) == W, 13);
      CHILD_EXPECT(thrown([&] { (void)ix.query(text(1), neardup::ContentKind::Text); }) == W, 14);
      CHILD_EXPECT(thrown([&] { (void)ix.erase("k1"); }) == W, 15);
      CHILD_EXPECT(thrown([&] { (void)ix.clusters(); }) == W, 16);
      CHILD_EXPECT(thrown([&] { (void)ix.stats(); }) == W, 17);
      CHILD_EXPECT(thrown([&] { (void)ix.check(); }) == W, 18);
      CHILD_EXPECT(thrown([&] { (void)cur.next(); }) == W, 19);
      CHILD_EXPECT(thrown([&] { ix.reopen(); }) == W, 20);
      CHILD_EXPECT(thrown([&] { ix.close(); }) == W, 21);
      CHILD_EXPECT(thrown([&] { (void)neardup::Index::open(dir); }) == W, 22);
      CHILD_EXPECT(thrown([&] { (void)neardup::Index::open_read_only(dir); }) == W, 23);
      {
        // What going out of scope does in the child: ~Cursor and ~Index on inherited handles.
        neardup::Cursor c = std::move(cur);
        neardup::Index mine = std::move(ix);
      }
      std::exit(0);
    }
    int ws = 0;
    if (waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
      ++clean;
    } else if (WIFSIGNALED(ws)) {
      std::fprintf(stderr, "child %d: killed by signal %d\n", run, WTERMSIG(ws));
    } else {
      std::fprintf(stderr, "child %d: exit %d\n", run, WEXITSTATUS(ws));
    }
  }
  std::printf("~Index + exit in the child: %d of 50 exited 0\n", clean);
  expect(clean == 50, "50 of 50 children exit 0 after destroying their Index");
  expect(cur.next().has_value(), "the parent's cursor reads");
  expect(ix.len() == before, "the parent's index is as it was");
  expect(!ix.find("from-child"), "nothing from the children");
}

void reopen_idiom(neardup::Index& ix, const std::string& dir, const neardup::Options& opts) {
  const uint64_t n = ix.len();

  // The assignment idiom opens before ix lets go: refused, with the way out in the message.
  std::string message;
  expect(thrown([&] { ix = neardup::Index::open(dir, opts); }, &message) == ND_ALREADY_OPEN,
         "ix = Index::open(same path) throws ND_ALREADY_OPEN");
  expect(message.find("reopen()") != std::string::npos, "the message names reopen()");
  expect(ix.len() == n, "ix is as it was after the refused assignment");

  // reopen() in place.
  ix.reopen();
  expect(ix.len() == n, "reopen keeps the pages");
  expect(ix.find("k1").has_value(), "a page from before the reopen");
  put(ix, "after-reopen", 1000);
  expect(ix.len() == n + 1, "insert after reopen");

  // Refused while a cursor is open: the index stays open.
  {
    neardup::Cursor c = ix.clusters();
    expect(thrown([&] { ix.reopen(); }) == ND_INVALID_ARGUMENT, "reopen with a cursor open");
    expect(ix.len() == n + 1, "still open after the refused reopen");
  }
  ix.reopen();

  // close() first, then the assignment.
  ix.close();
  ix = neardup::Index::open(dir, opts);
  expect(ix.len() == n + 1, "close() then ix = Index::open(same path)");

  // A read-only Index sees later writes after reopen().
  neardup::Index ro = neardup::Index::open_read_only(dir);
  expect(ro.len() == n + 1, "read-only len");
  put(ix, "after-read-only", 1001);
  expect(ro.len() == n + 1, "a read-only Index does not see later writes");
  ro.reopen();
  expect(ro.len() == n + 2, "a read-only Index sees them after reopen()");
  expect(thrown([&] { put(ro, "x", 1); }) == ND_READ_ONLY, "still read-only after reopen()");

  // Calls from other threads during reopens wait for the reopened index: none fails.
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0}, calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        try {
          if (ix.len() != n + 2 || !ix.find("k1")) ++errors;
        } catch (const neardup::Error& e) {
          std::fprintf(stderr, "a call during reopen: %s\n", e.what());
          ++errors;
        }
        ++calls;
      }
    });
  }
  for (int i = 0; i < 20; ++i) ix.reopen();
  stop = true;
  for (std::thread& t : threads) t.join();
  expect(errors.load() == 0, "every call during the reopens succeeds");
  expect(calls.load() > 0, "calls ran during the reopens");

  ix.close();
  expect(thrown([&] { ix.reopen(); }) == ND_CLOSED, "reopen after close");
  ix = neardup::Index::open(dir, opts);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string dir = std::string(argv[1]) + "/ix";
  try {
    neardup::Options opts;
    opts.sync_writes(false);
    neardup::Index ix = neardup::Index::open(dir, opts);
    for (int i = 1; i <= 20; ++i) put(ix, "k" + std::to_string(i), i);
    fork_children(ix, dir);
    reopen_idiom(ix, dir, opts);
    ix.close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: %s\n", e.what());
    ++failures;
  }
  if (failures == 0) std::printf("fork_reopen: ok\n");
  return failures == 0 ? 0 : 1;
}
