/* A forked child and the handles it inherits, through the C ABI (issue #33, B1 and B2).
 * Built and run by tests/ffi_fork.rs, plainly and under ASan+UBSan.
 *
 * 1. free + exit: 50 children each free their copy of the handle (and of a cursor) and call
 *    exit(0), which runs RocksDB's static destructors: every one exits 0 (before: SIGSEGV in
 *    RocksDB's JoinThreadsOnExit in 12 of 12 runs).
 * 2. every call on an inherited handle or cursor returns ND_WRONG_PROCESS, nd_index_len and
 *    nd_index_close included; the parent's handle and cursor work on afterwards.
 * 3. opens in the child of a process that had opened an index — for writing, existing,
 *    read-only — are refused at once with ND_WRONG_PROCESS, while the parent holds the index and
 *    after it closed it (not ND_ALREADY_OPEN, never a hang): RocksDB's process-wide state is the
 *    parent's (a child's own open waited forever for its first flush, and even a read-only open
 *    made exit() crash in RocksDB's thread join). A child forked from a process that had opened
 *    no index opens one for writing, writes 200 pages and closes it.
 *
 * Usage: fork DIR   (DIR must not exist yet)
 * Prints "fork: ok" and exits 0 when every check passed. */
#define _POSIX_C_SOURCE 200809L
#include <neardup.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s (last error: %s)\n", what, nd_last_error());
    ++failures;
  }
}

/* In a child: a failed expectation is its exit status, reported by the parent. */
#define CHILD_EXPECT(cond, code)                                                        \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "child: %s:%d: expected %s (last error: %s)\n", __FILE__, __LINE__, \
              #cond, nd_last_error());                                                  \
      _exit(code);                                                                      \
    }                                                                                   \
  } while (0)

static nd_page text_page(const char *key, const char *text) {
  nd_page p;
  memset(&p, 0, sizeof p);
  p.key = key;
  p.key_len = strlen(key);
  p.content = (const uint8_t *)text;
  p.content_len = strlen(text);
  p.content_kind = ND_CONTENT_TEXT;
  return p;
}

static nd_status insert(nd_index *ix, const char *key, int i) {
  char text[256];
  snprintf(text, sizeof text,
           "Page %d of the fork test has a sentence of its own about the harbour number %d, and "
           "another about the bridge that was closed on day %d of the month.",
           i, i * 7, i % 31);
  nd_page p = text_page(key, text);
  nd_verdict v;
  memset(&v, 0, sizeof v);
  nd_status s = nd_index_insert(ix, &p, &v);
  if (s == ND_OK) nd_verdict_free(&v);
  return s;
}

static nd_status open_at(const char *dir, nd_index **out) {
  return nd_index_open(dir, strlen(dir), NULL, out);
}

/* Waits for a child; returns its exit status, or 1000 + the signal that killed it. */
static int wait_child(pid_t pid) {
  int ws = 0;
  if (waitpid(pid, &ws, 0) != pid) return 2000;
  if (WIFSIGNALED(ws)) return 1000 + WTERMSIG(ws);
  return WEXITSTATUS(ws);
}

/* 1. The child frees what it inherited (what ~Index and ~Cursor do) and calls exit(). */
static void free_and_exit(nd_index *ix) {
  int clean = 0, first_bad = 0;
  for (int run = 0; run < 50; ++run) {
    nd_cursor *cur = NULL;
    expect(nd_index_keys(ix, &cur) == ND_OK, "a cursor before the fork");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      nd_cursor_free(cur);
      nd_index_free(ix);
      nd_index_free(ix); /* still a no-op: the handle was never released */
      exit(0);
    }
    int st = wait_child(pid);
    if (st == 0)
      ++clean;
    else if (first_bad == 0)
      first_bad = st;
    nd_cursor_free(cur);
  }
  printf("free + exit in the child: %d of 50 exited 0\n", clean);
  if (clean != 50) fprintf(stderr, "FAILED: a child ended with %d (1000+: a signal)\n", first_bad);
  expect(clean == 50, "50 of 50 children exit 0 after freeing their handle");
  expect(insert(ix, "after-free-exit", 1) == ND_OK, "the parent writes after the children");
}

/* 2. Every call on the inherited handle and cursor is refused. */
static void every_call_refused(nd_index *ix, const char *dir) {
  nd_cursor *cur = NULL;
  expect(nd_index_clusters(ix, &cur) == ND_OK, "a cursor before the fork");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    const nd_status W = ND_WRONG_PROCESS;
    uint64_t n = 0, problems = 0;
    nd_str s = {0};
    nd_stats stats;
    memset(&stats, 0, sizeof stats);
    nd_verdict v;
    memset(&v, 0, sizeof v);
    nd_record r;
    memset(&r, 0, sizeof r);
    nd_deletion d;
    memset(&d, 0, sizeof d);
    nd_key_list keys;
    memset(&keys, 0, sizeof keys);
    nd_cursor *c2 = NULL;
    nd_cursor_item item;
    bool has = false;
    uint32_t cluster = 0;
    const char *text = "A page the child must not be able to write anywhere, long enough to count.";
    nd_page p = text_page("from-child", text);
    nd_status statuses[1];
    nd_verdict verdicts[1];
    char cp[600];
    snprintf(cp, sizeof cp, "%s-child-checkpoint", dir);

    CHILD_EXPECT(nd_index_len(ix, &n) == W && n == 0, 10);
    CHILD_EXPECT(strstr(nd_last_error(), "process") != NULL, 11);
    CHILD_EXPECT(nd_index_insert(ix, &p, &v) == W, 12);
    CHILD_EXPECT(nd_index_query(ix, p.content, p.content_len, ND_CONTENT_TEXT, &v) == W, 13);
    CHILD_EXPECT(nd_index_delete(ix, "k1", 2, &d) == W, 14);
    CHILD_EXPECT(nd_index_get(ix, "k1", 2, &r) == W, 15);
    CHILD_EXPECT(nd_index_representative(ix, "k1", 2, &cluster, &s) == W, 16);
    CHILD_EXPECT(nd_index_cluster_members(ix, 0, 0, 10, &keys) == W, 17);
    CHILD_EXPECT(nd_index_clusters(ix, &c2) == W && c2 == NULL, 18);
    CHILD_EXPECT(nd_index_keys(ix, &c2) == W && c2 == NULL, 19);
    CHILD_EXPECT(nd_index_members(ix, 0, &c2) == W && c2 == NULL, 20);
    CHILD_EXPECT(nd_index_query_batch(ix, &p, 1, verdicts, statuses, NULL) == W, 21);
    CHILD_EXPECT(nd_index_insert_batch(ix, &p, 1, ND_ORDER_INPUT, verdicts, statuses, NULL, NULL,
                                       NULL) == W,
                 22);
    CHILD_EXPECT(nd_index_stats(ix, &stats) == W, 23);
    CHILD_EXPECT(nd_index_check(ix, &problems, &s) == W, 24);
    CHILD_EXPECT(nd_index_check_sample(ix, 10, &problems, &s) == W, 25);
    CHILD_EXPECT(nd_index_rocksdb_stats(ix, &s) == W, 26);
    CHILD_EXPECT(nd_index_config_json(ix, &s) == W, 27);
    CHILD_EXPECT(nd_index_metrics_json(ix, &s) == W, 63);
    CHILD_EXPECT(nd_index_checkpoint(ix, cp, strlen(cp)) == W, 28);
    CHILD_EXPECT(nd_index_compact(ix) == W, 29);
    CHILD_EXPECT(nd_cursor_next(cur, &item, &has) == W, 30);
    CHILD_EXPECT(nd_index_reopen(ix) == W, 31);
    CHILD_EXPECT(nd_index_close(ix) == W, 32);
    /* Still refused after the refused close: nothing of the handle changed. */
    CHILD_EXPECT(nd_index_len(ix, &n) == W, 33);
    CHILD_EXPECT(access(cp, F_OK) != 0, 34);
    nd_cursor_free(cur);
    nd_index_free(ix);
    exit(0);
  }
  int st = wait_child(pid);
  if (st != 0) fprintf(stderr, "FAILED: the refusing child ended with %d\n", st);
  expect(st == 0, "every call on the inherited handle returns ND_WRONG_PROCESS");
  /* The parent's handle and cursor are as they were. */
  nd_cursor_item item;
  bool has = false;
  expect(nd_cursor_next(cur, &item, &has) == ND_OK && has, "the parent's cursor reads");
  nd_cursor_free(cur);
  uint64_t n = 0;
  expect(nd_index_len(ix, &n) == ND_OK && n > 0, "the parent's handle reads");
  nd_record r;
  memset(&r, 0, sizeof r);
  expect(nd_index_get(ix, "from-child", 10, &r) == ND_NOT_FOUND, "nothing the child wrote");
}

/* 3. Opens in the child, while the parent holds the index and after it closed it: refused at
 * once (no RocksDB code runs in the child), never a hang; the child then exits cleanly. */
static void opens_in_the_child(nd_index **ix, const char *dir) {
  uint64_t parent_len = 0;
  expect(nd_index_len(*ix, &parent_len) == ND_OK, "len");
  int pipefd[2];
  expect(pipe(pipefd) == 0, "pipe");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[1]);
    const nd_status W = ND_WRONG_PROCESS;
    nd_index *mine = NULL;
    nd_str s = {0};
    /* The parent still has it open. */
    CHILD_EXPECT(open_at(dir, &mine) == W && mine == NULL, 40);
    CHILD_EXPECT(strstr(nd_last_error(), "before a fork") != NULL, 41);
    CHILD_EXPECT(nd_index_open_existing(dir, strlen(dir), &mine) == W && mine == NULL, 42);
    CHILD_EXPECT(nd_index_open_read_only(dir, strlen(dir), &mine) == W && mine == NULL, 43);
    CHILD_EXPECT(nd_stored_config_json(dir, strlen(dir), &s) == W, 44);
    /* Wait for the parent to close and free its handle. */
    char c;
    CHILD_EXPECT(read(pipefd[0], &c, 1) == 1, 45);
    /* Not ND_ALREADY_OPEN (the parent's open is not the child's), and not a hang. */
    CHILD_EXPECT(open_at(dir, &mine) == W && mine == NULL, 46);
    CHILD_EXPECT(nd_index_open_read_only(dir, strlen(dir), &mine) == W && mine == NULL, 47);
    /* The child's copy of the handle the parent freed is still a valid, foreign handle. */
    uint64_t n = 0;
    CHILD_EXPECT(nd_index_len(*ix, &n) == W, 48);
    nd_index_free(*ix);
    exit(0);
  }
  close(pipefd[0]);
  expect(nd_index_close(*ix) == ND_OK, "the parent closes");
  nd_index_free(*ix);
  *ix = NULL;
  expect(write(pipefd[1], "x", 1) == 1, "tell the child");
  close(pipefd[1]);
  int st = wait_child(pid);
  if (st != 0) fprintf(stderr, "FAILED: the opening child ended with %d\n", st);
  expect(st == 0, "the child's opens are refused and it exits 0");
  /* The parent opens it again: all its pages are there. */
  expect(open_at(dir, ix) == ND_OK, "the parent reopens");
  uint64_t n = 0;
  expect(*ix != NULL && nd_index_len(*ix, &n) == ND_OK && n == parent_len, "the parent's pages");
}

/* 3b. A child forked before this process opened any index opens one for writing itself. */
static void child_of_a_fresh_process(const char *dir) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    nd_index *mine = NULL;
    CHILD_EXPECT(open_at(dir, &mine) == ND_OK, 60);
    for (int i = 0; i < 200; ++i) {
      char key[32];
      snprintf(key, sizeof key, "child-%d", i);
      CHILD_EXPECT(insert(mine, key, 1000 + i) == ND_OK, 61);
    }
    CHILD_EXPECT(nd_index_close(mine) == ND_OK, 62);
    nd_index_free(mine);
    exit(0);
  }
  int st = wait_child(pid);
  if (st != 0) fprintf(stderr, "FAILED: the fresh child ended with %d\n", st);
  expect(st == 0, "a child of a process without an index opens, writes and closes");
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  char dir[400], fresh[400];
  snprintf(dir, sizeof dir, "%s/ix", argv[1]);
  snprintf(fresh, sizeof fresh, "%s/fresh", argv[1]);

  /* Before any index is opened in this process. */
  child_of_a_fresh_process(fresh);
  nd_index *ix = NULL;
  if (open_at(fresh, &ix) == ND_OK) {
    uint64_t n = 0;
    expect(nd_index_len(ix, &n) == ND_OK && n == 200, "the fresh child's pages are there");
    expect(nd_index_close(ix) == ND_OK, "close the fresh index");
    nd_index_free(ix);
  } else {
    expect(0, "open the fresh child's index");
  }

  ix = NULL;
  if (open_at(dir, &ix) != ND_OK) {
    expect(0, "open");
    return 1;
  }
  for (int i = 0; i < 20; ++i) {
    char key[32];
    snprintf(key, sizeof key, "k%d", i + 1);
    expect(insert(ix, key, i) == ND_OK, "insert");
  }
  free_and_exit(ix);
  every_call_refused(ix, dir);
  opens_in_the_child(&ix, dir);
  if (ix) {
    expect(nd_index_close(ix) == ND_OK, "final close");
    nd_index_free(ix);
  }
  if (failures == 0) printf("fork: ok\n");
  return failures == 0 ? 0 : 1;
}
