/* The change feed through the C ABI (issue #33, item 4): nd_index_changes, nd_changes_next,
 * nd_changes_last, nd_changes_free, nd_index_last_change, nd_index_apply_change and
 * nd_options_set_change_retention, from C99. Built and run by tests/ffi_changes.rs: plainly,
 * under ASan+UBSan and under valgrind.
 *
 * An index gets an article and two near copies (one cluster), an unrelated article, a replace
 * of it, an unchanged recrawl with a new publish time and the delete of the cluster's
 * representative. Its feed lists them from 1 with their kinds, keys, hosts, texts and the
 * hand-over; each change's bytes applied to an empty copy give a copy holding the same pages
 * with the same ids, clusters and representatives. A change applied twice, bytes that are not a
 * change, a trimmed feed (ND_CHANGES_TRIMMED), a follower ahead of the feed, NULL arguments and
 * a closed handle give their statuses, and `out` is not written on a failure.
 *
 * Usage: changes DIR   (an empty directory; the indexes are created under it)
 * Prints "changes: ok" and exits 0 when every check holds. */
#include <neardup.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pages.h"

/* ----- helpers ----- */

static nd_page page(const char *key, const char *html, int64_t time) {
  nd_page p;
  memset(&p, 0, sizeof p);
  p.key = key;
  p.key_len = strlen(key);
  p.host = "example.com";
  p.host_len = 11;
  p.time = time;
  p.content = (const uint8_t *)html;
  p.content_len = strlen(html);
  p.content_kind = ND_CONTENT_HTML;
  return p;
}

static int is(const char *s, size_t len, const char *text) {
  return s != NULL && len == strlen(text) && memcmp(s, text, len) == 0 && s[len] == '\0';
}

static int same(const nd_str *a, const nd_str *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

static nd_index *open_at(const char *dir, const char *name, uint64_t retention) {
  char path[4096];
  nd_options *opts = NULL;
  nd_index *ix = NULL;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  OK(nd_options_new(&opts));
  OK(nd_options_set_sync_writes(opts, false));
  OK(nd_options_set_change_retention(opts, retention));
  OK(nd_index_open(path, strlen(path), opts, &ix));
  nd_options_free(opts);
  return ix;
}

static void insert(nd_index *ix, const char *key, const char *html, int64_t time) {
  nd_verdict v;
  nd_page p = page(key, html, time);
  OK(nd_index_insert(ix, &p, &v));
  nd_verdict_free(&v);
}

/* The copy holds `key` as the original does: same id, cluster, insertion number and
 * representative. */
static void same_record(nd_index *a, nd_index *b, const char *key) {
  nd_record ra, rb;
  OK(nd_index_get(a, key, strlen(key), &ra));
  OK(nd_index_get(b, key, strlen(key), &rb));
  EXPECT(ra.doc_id == rb.doc_id && ra.cluster_id == rb.cluster_id && ra.seq == rb.seq);
  EXPECT(ra.time == rb.time && same(&ra.representative, &rb.representative));
  nd_record_free(&ra);
  nd_record_free(&rb);
}

int main(int argc, char **argv) {
  nd_index *ix, *copy, *small;
  nd_changes *c = NULL;
  nd_change ch;
  nd_deletion d;
  bool has = false;
  uint64_t last = 0, n = 0, expected = 1, problems = 1;
  int kinds[7] = {0, 0, 0, 0, 0, 0, 0};
  char *a, *copy1, *copy2, *other, *other2;
  const char *dir;
  int i;

  if (argc != 2) {
    fprintf(stderr, "usage: changes DIR\n");
    return 2;
  }
  dir = argv[1];
  EXPECT(strcmp(nd_status_name(ND_CHANGES_TRIMMED), "ND_CHANGES_TRIMMED") == 0);
  ix = open_at(dir, "original", 100000);
  copy = open_at(dir, "copy", 100000);
  OK(nd_index_last_change(ix, &last));
  EXPECT(last == 0);

  a = article(1, -1, -1);
  copy1 = article(1, 3, -1);
  copy2 = article(1, 5, -1);
  other = article(2, -1, -1);
  other2 = article(4, -1, -1);
  insert(ix, "a", a, 0);
  insert(ix, "a-copy", copy1, 0);
  insert(ix, "a-copy2", copy2, 0);
  insert(ix, "other", other, 0);
  insert(ix, "other", other2, 0);           /* replaced */
  insert(ix, "a-copy", copy1, 1700000000);  /* the same text, a new time: retimed */
  OK(nd_index_delete(ix, "a", 1, &d));      /* the representative: a hand-over */
  EXPECT(d.was_representative);
  nd_deletion_free(&d);
  OK(nd_index_last_change(ix, &last));
  EXPECT(last >= 7);

  /* --- the feed from the start, applied to the copy change by change. */
  OK(nd_index_changes(ix, 0, &c));
  for (;;) {
    OK(nd_changes_next(c, &ch, &has));
    if (!has) break;
    EXPECT(ch.seq == expected);
    ++expected;
    EXPECT(ch.kind >= ND_CHANGE_INSERTED && ch.kind <= ND_CHANGE_REPRESENTATIVE_CHANGED);
    kinds[ch.kind] += 1;
    EXPECT(ch.committed_ms > 0 && ch.bytes != NULL && ch.bytes_len > 8);
    EXPECT(ch.key != NULL && ch.key[ch.key_len] == '\0' && ch.text[ch.text_len] == '\0');
    if (ch.seq == 1) {
      EXPECT(ch.kind == ND_CHANGE_INSERTED && is(ch.key, ch.key_len, "a"));
      EXPECT(is(ch.host, ch.host_len, "example.com") && ch.text_len > 100);
      EXPECT(is(ch.representative, ch.representative_len, "a"));
    }
    if (ch.kind == ND_CHANGE_REPLACED) EXPECT(is(ch.key, ch.key_len, "other"));
    if (ch.kind == ND_CHANGE_RETIMED)
      EXPECT(is(ch.key, ch.key_len, "a-copy") && ch.time == 1700000000);
    if (ch.kind == ND_CHANGE_DELETED) EXPECT(is(ch.key, ch.key_len, "a"));
    if (ch.kind == ND_CHANGE_REPRESENTATIVE_CHANGED)
      EXPECT(is(ch.previous, ch.previous_len, "a") && ch.representative_len > 0);
    OK(nd_index_apply_change(copy, ch.bytes, ch.bytes_len));
    /* Applied twice: refused, nothing written. */
    if (ch.kind == ND_CHANGE_INSERTED)
      EXPECT(nd_index_apply_change(copy, ch.bytes, ch.bytes_len) == ND_INVALID_ARGUMENT);
  }
  OK(nd_changes_next(c, &ch, &has));
  EXPECT(!has);
  OK(nd_changes_last(c, &n));
  EXPECT(n == last && expected == last + 1);
  nd_changes_free(c);
  c = NULL;
  EXPECT(kinds[ND_CHANGE_INSERTED] == 4 && kinds[ND_CHANGE_REPLACED] == 1);
  EXPECT(kinds[ND_CHANGE_RETIMED] == 1 && kinds[ND_CHANGE_DELETED] == 1);
  EXPECT(kinds[ND_CHANGE_REPRESENTATIVE_CHANGED] == 1);

  /* --- the copy holds what the original holds, and its own feed goes as far. */
  OK(nd_index_len(copy, &n));
  EXPECT(n == 3);
  same_record(ix, copy, "a-copy");
  same_record(ix, copy, "a-copy2");
  same_record(ix, copy, "other");
  OK(nd_index_check(copy, &problems, NULL));
  EXPECT(problems == 0);
  OK(nd_index_last_change(copy, &n));
  EXPECT(n == last);

  /* --- a follower resuming at the end reads nothing; one ahead of the feed is refused. */
  OK(nd_index_changes(ix, last, &c));
  OK(nd_changes_next(c, &ch, &has));
  EXPECT(!has);
  nd_changes_free(c);
  c = NULL;
  EXPECT(nd_index_changes(ix, last + 1, &c) == ND_INVALID_ARGUMENT && c == NULL);

  /* --- a feed that keeps 2 changes: the older ones are gone. */
  small = open_at(dir, "small", 2);
  for (i = 0; i < 6; ++i) {
    char key[16];
    char *html = article(10 + (unsigned)i, -1, -1);
    snprintf(key, sizeof key, "p%d", i);
    insert(small, key, html, 0);
    free(html);
  }
  OK(nd_index_last_change(small, &n));
  EXPECT(n == 6);
  EXPECT(nd_index_changes(small, 0, &c) == ND_CHANGES_TRIMMED && c == NULL);
  EXPECT(strstr(nd_last_error(), "trimmed") != NULL);
  OK(nd_index_changes(small, n - 2, &c));
  OK(nd_changes_next(c, &ch, &has));
  EXPECT(has && ch.seq == n - 1 && is(ch.key, ch.key_len, "p4"));
  nd_changes_free(c);
  c = NULL;

  /* --- bad arguments. */
  {
    const uint8_t junk[12] = {0, 0, 0, 0, 0, 0, 0, 1, 0xE1, 0, 0, 0};
    EXPECT(nd_index_apply_change(copy, junk, sizeof junk) == ND_INVALID_ARGUMENT);
    EXPECT(nd_index_apply_change(copy, NULL, 3) == ND_NULL_POINTER);
    EXPECT(nd_index_changes(NULL, 0, &c) == ND_NULL_POINTER && c == NULL);
    EXPECT(nd_index_changes(ix, 0, NULL) == ND_NULL_POINTER);
    EXPECT(nd_changes_next(NULL, &ch, &has) == ND_NULL_POINTER);
    EXPECT(nd_index_last_change(ix, NULL) == ND_NULL_POINTER);
    EXPECT(nd_changes_last(NULL, &n) == ND_NULL_POINTER);
    OK(nd_index_changes(ix, 0, &c));
    EXPECT(nd_changes_next(c, NULL, &has) == ND_NULL_POINTER);
    EXPECT(nd_changes_next(c, &ch, NULL) == ND_NULL_POINTER);
    nd_changes_free(c);
    nd_changes_free(NULL);
    c = NULL;
  }

  /* --- a closed handle. */
  OK(nd_index_close(small));
  EXPECT(nd_index_changes(small, 0, &c) == ND_CLOSED && c == NULL);
  EXPECT(nd_index_last_change(small, &n) == ND_CLOSED);
  nd_index_free(small);
  OK(nd_index_close(copy));
  nd_index_free(copy);
  OK(nd_index_close(ix));
  nd_index_free(ix);

  free(a);
  free(copy1);
  free(copy2);
  free(other);
  free(other2);
  printf("changes: ok\n");
  return 0;
}
