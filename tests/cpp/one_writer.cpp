// One handle per index per process (issue "Embedding-grade", point 1), through the C ABI:
// a second open under another spelling of the same directory (trailing slash, "/.",
// "dir/../dir", a symbolic link) fails with ND_ALREADY_OPEN; after fork, the child's copy of
// the handle fails every call with ND_WRONG_PROCESS, and the parent's writes are all there.
//
// Usage: one_writer DIR   (DIR must not exist yet)
#include <neardup.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

static int failures = 0;

static void expect(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s (last error: %s)\n", what, nd_last_error());
    ++failures;
  }
}

static nd_status open_at(const std::string &path, nd_index **out) {
  nd_options *opts = nullptr;
  if (nd_options_new(&opts) != ND_OK) return ND_PANIC;
  nd_status st = nd_index_open(path.data(), path.size(), opts, out);
  nd_options_free(opts);
  return st;
}

static nd_status insert(nd_index *ix, const std::string &key, const std::string &text) {
  nd_page p;
  std::memset(&p, 0, sizeof p);
  p.key = key.data();
  p.key_len = key.size();
  p.content = reinterpret_cast<const uint8_t *>(text.data());
  p.content_len = text.size();
  p.content_kind = ND_CONTENT_TEXT;
  nd_verdict v;
  std::memset(&v, 0, sizeof v);
  nd_status st = nd_index_insert(ix, &p, &v);
  nd_verdict_free(&v);
  return st;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  nd_index *ix = nullptr;
  expect(open_at(dir, &ix) == ND_OK, "first open");
  const std::string text =
      "The river market opened early this winter, and the village teacher wrote a letter.";
  expect(insert(ix, "a", text) == ND_OK, "insert through the first handle");

  const std::string link = dir + "-link";
  expect(symlink(dir.c_str(), link.c_str()) == 0, "make a symbolic link");
  const std::string base = dir.substr(dir.find_last_of('/') + 1);
  for (const std::string &alias :
       {dir, dir + "/", dir + "/.", dir + "/../" + base, link}) {
    nd_index *second = nullptr;
    nd_status st = open_at(alias, &second);
    expect(st == ND_ALREADY_OPEN, ("second open refused: " + alias).c_str());
    expect(second == nullptr, "no second handle");
    expect(std::strstr(nd_last_error(), "already open") != nullptr, "message says why");
  }

  // A path with a NUL byte inside is an invalid argument, not a storage error.
  {
    nd_index *bad = nullptr;
    std::string nul = dir + std::string("\0x", 2);
    expect(open_at(nul, &bad) == ND_INVALID_ARGUMENT, "a path with a NUL byte is refused");
    expect(bad == nullptr, "no handle for a bad path");
  }

  pid_t child = fork();
  if (child == 0) {
    // The child's copy of the handle: every call refused, nothing written.
    int bad = 0;
    if (insert(ix, "from-child", text + " child") != ND_WRONG_PROCESS) bad = 1;
    if (std::strstr(nd_last_error(), "process") == nullptr) bad = 1;
    _exit(bad);
  }
  int status = 0;
  expect(waitpid(child, &status, 0) == child, "wait for the child");
  expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child was refused");
  expect(insert(ix, "b", text + " And again.") == ND_OK, "parent insert after fork");
  expect(nd_index_close(ix) == ND_OK, "close");
  nd_index_free(ix);

  // Reopened under the alias: both parent pages are there, the child's is not.
  nd_index *again = nullptr;
  expect(open_at(dir + "/.", &again) == ND_OK, "reopen under an alias after close");
  if (again) {
    uint64_t n = 0;
    expect(nd_index_len(again, &n) == ND_OK && n == 2, "two pages stored");
    nd_index_free(again);
  }
  if (failures == 0) std::printf("ok\n");
  return failures == 0 ? 0 : 1;
}
