/* Every near duplicate of a page through the C ABI (issue #33, item 7): nd_index_near,
 * nd_index_near_page, nd_near_options_* and nd_near_list_free, from C99.
 * Built and run by tests/ffi_near.rs: plainly, under ASan+UBSan and under valgrind.
 *
 * An article, a near copy of it (one paragraph rewritten) and an unrelated article are stored.
 * A probe that is a near copy of the copy (another paragraph rewritten) finds the article and
 * its copy, with their ids, cluster, representative and rates (the ones nd_index_query gives
 * its similar_to), best first, and not the unrelated one; the article's own text is found
 * exact; k, the inclusive threshold and the score take effect; an unrelated probe finds nothing
 * ({NULL, 0}). Bad options (k 0, a
 * threshold outside [0, 1] or NaN, an unknown score) give ND_INVALID_ARGUMENT and leave the
 * options as they were; NULL arguments give ND_NULL_POINTER; nothing is written to `out` on a
 * failure; a closed handle gives ND_CLOSED.
 *
 * Usage: near DIR   (an empty directory; the index is created under it)
 * Prints "near: ok" and exits 0 when every check holds. */
#include <neardup.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pages.h"

/* ----- helpers ----- */

static nd_page page(const char *key, const char *html) {
  nd_page p;
  memset(&p, 0, sizeof p);
  p.key = key;
  p.key_len = strlen(key);
  p.host = "example.com";
  p.host_len = 11;
  p.content = (const uint8_t *)html;
  p.content_len = strlen(html);
  p.content_kind = ND_CONTENT_HTML;
  return p;
}

static int is(const nd_str *s, const char *text) {
  return s->ptr != NULL && s->len == strlen(text) && memcmp(s->ptr, text, s->len) == 0;
}

static nd_status near(nd_index *ix, const char *html, const nd_near_options *o, nd_near_list *out) {
  return nd_index_near(ix, (const uint8_t *)html, strlen(html), ND_CONTENT_HTML, o, out);
}

/* The index of `key` in the list, or -1. */
static long find(const nd_near_list *l, const char *key) {
  size_t i;
  for (i = 0; i < l->len; ++i)
    if (is(&l->items[i].key, key)) return (long)i;
  return -1;
}

/* Best first by `by`: exact first, then the score, then the other score. */
static int ordered(const nd_near_list *l, uint32_t by) {
  size_t i;
  for (i = 1; i < l->len; ++i) {
    const nd_near_duplicate *a = &l->items[i - 1], *b = &l->items[i];
    double sa = by == ND_SCORE_RESEMBLE ? a->resemble : a->contain;
    double sb = by == ND_SCORE_RESEMBLE ? b->resemble : b->contain;
    if (a->exact < b->exact) return 0;
    if (a->exact == b->exact && sa < sb) return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  char path[4096];
  nd_options *opts = NULL;
  nd_index *ix = NULL;
  nd_near_options *no = NULL;
  nd_near_list all = {0}, l = {0};
  nd_verdict v = {0};
  nd_record ra = {0}, rc = {0};
  char *a, *copy, *other, *probe, *unrelated;
  const char binary[] = "\x01\x02\x03\x04\x05\x06\x07\x08";
  size_t i;
  long ia, ic;
  double lowest = 1.0;

  if (argc != 2) {
    fprintf(stderr, "usage: near DIR\n");
    return 2;
  }
  snprintf(path, sizeof path, "%s/ix", argv[1]);
  EXPECT(nd_abi_version() == ND_ABI_VERSION && ND_ABI_VERSION >= 5);

  OK(nd_options_new(&opts));
  OK(nd_options_set_sync_writes(opts, false));
  OK(nd_index_open(path, strlen(path), opts, &ix));
  nd_options_free(opts);

  a = article(1, -1, -1);
  copy = article(1, 3, -1);
  other = article(2, -1, -1);
  /* Closer to the copy than to the article: the copy is the cluster's best-sharing member,
   * verified beside the representative. */
  probe = article(1, 3, 6);
  unrelated = article(3, -1, -1);
  {
    nd_page pa = page("a", a), pc = page("a-copy", copy), po = page("other", other);
    OK(nd_index_insert(ix, &pa, &v));
    nd_verdict_free(&v);
    OK(nd_index_insert(ix, &pc, &v));
    EXPECT(v.duplicate && is(&v.similar_to, "a"));
    nd_verdict_free(&v);
    OK(nd_index_insert(ix, &po, &v));
    EXPECT(!v.duplicate);
    nd_verdict_free(&v);
  }
  OK(nd_index_get(ix, "a", 1, &ra));
  OK(nd_index_get(ix, "a-copy", 6, &rc));

  /* --- the defaults (opts NULL): the article and its copy, best first, not the other. */
  OK(near(ix, probe, NULL, &all));
  ia = find(&all, "a");
  ic = find(&all, "a-copy");
  EXPECT(all.len == 2 && all.items != NULL && ia >= 0 && ic >= 0 && find(&all, "other") < 0);
  EXPECT(ordered(&all, ND_SCORE_RESEMBLE));
  EXPECT(all.items[ia].doc_id == ra.doc_id && all.items[ia].cluster_id == ra.cluster_id);
  EXPECT(all.items[ic].doc_id == rc.doc_id && all.items[ic].cluster_id == rc.cluster_id);
  for (i = 0; i < all.len; ++i) {
    const nd_near_duplicate *n = &all.items[i];
    EXPECT(is(&n->representative, "a") && !n->exact);
    EXPECT(n->resemble > 0.0 && n->resemble < 1.0 && n->contain > 0.0 && n->contain < 1.0);
    EXPECT(n->key.ptr[n->key.len] == '\0');
    if (n->resemble < lowest) lowest = n->resemble;
  }
  /* The query's similar_to is one of them, with the same rates. */
  OK(nd_index_query(ix, (const uint8_t *)probe, strlen(probe), ND_CONTENT_HTML, &v));
  EXPECT(v.duplicate);
  {
    long s = find(&all, is(&v.similar_to, "a") ? "a" : "a-copy");
    EXPECT(s >= 0 && all.items[s].resemble == v.resemble && all.items[s].contain == v.contain);
  }
  nd_verdict_free(&v);

  /* --- options: k keeps the best; the threshold is inclusive; by contain orders by contain. */
  OK(nd_near_options_new(&no));
  OK(nd_near_options_set_k(no, 1));
  OK(near(ix, probe, no, &l));
  EXPECT(l.len == 1 && is(&l.items[0].key, (const char *)all.items[0].key.ptr));
  EXPECT(l.items[0].resemble == all.items[0].resemble);
  nd_near_list_free(&l);
  OK(nd_near_options_set_k(no, SIZE_MAX));
  OK(nd_near_options_set_threshold(no, lowest));
  OK(near(ix, probe, no, &l));
  EXPECT(l.len == 2);
  nd_near_list_free(&l);
  OK(nd_near_options_set_threshold(no, nextafter(lowest, 2.0)));
  OK(near(ix, probe, no, &l));
  EXPECT(l.len == 1 && l.items[0].resemble > lowest);
  nd_near_list_free(&l);
  OK(nd_near_options_set_threshold(no, 1.0));
  OK(near(ix, probe, no, &l));
  EXPECT(l.len == 0 && l.items == NULL);
  nd_near_list_free(&l);
  OK(nd_near_options_set_threshold(no, 0.0));
  OK(nd_near_options_set_by(no, ND_SCORE_CONTAIN));
  OK(near(ix, probe, no, &l));
  EXPECT(l.len == 2 && ordered(&l, ND_SCORE_CONTAIN));
  nd_near_list_free(&l);
  nd_near_list_free(&l); /* twice: harmless */
  nd_near_list_free(NULL);

  /* --- bad options: refused, and the options stay as they were (k all, by contain). */
  EXPECT(nd_near_options_set_k(no, 0) == ND_INVALID_ARGUMENT);
  EXPECT(strstr(nd_last_error(), "k is 0") != NULL);
  EXPECT(nd_near_options_set_threshold(no, 1.5) == ND_INVALID_ARGUMENT);
  EXPECT(nd_near_options_set_threshold(no, -0.25) == ND_INVALID_ARGUMENT);
  EXPECT(nd_near_options_set_threshold(no, NAN) == ND_INVALID_ARGUMENT);
  EXPECT(strstr(nd_last_error(), "threshold") != NULL);
  EXPECT(nd_near_options_set_by(no, 7) == ND_INVALID_ARGUMENT);
  EXPECT(nd_near_options_set_k(NULL, 3) == ND_NULL_POINTER);
  EXPECT(nd_near_options_set_threshold(NULL, 0.5) == ND_NULL_POINTER);
  EXPECT(nd_near_options_set_by(NULL, ND_SCORE_RESEMBLE) == ND_NULL_POINTER);
  EXPECT(nd_near_options_new(NULL) == ND_NULL_POINTER);
  OK(near(ix, probe, no, &l));
  EXPECT(l.len == 2 && ordered(&l, ND_SCORE_CONTAIN));
  nd_near_list_free(&l);

  /* --- the article's own text: found first, exact. */
  OK(near(ix, a, NULL, &l));
  EXPECT(l.len >= 1 && is(&l.items[0].key, "a") && l.items[0].exact);
  EXPECT(l.items[0].resemble == 1.0 && l.items[0].contain == 1.0);
  nd_near_list_free(&l);

  /* --- an unrelated page, and a text without main text: nothing. */
  OK(near(ix, unrelated, NULL, &l));
  EXPECT(l.len == 0 && l.items == NULL);
  OK(nd_index_near(ix, (const uint8_t *)"tiny", 4, ND_CONTENT_TEXT, NULL, &l));
  EXPECT(l.len == 0 && l.items == NULL);

  /* --- near_page: the host's chrome dropped as an insert would; the key's own version. */
  {
    nd_page p = page("a", a), q = page("probe", probe), bad = page("", probe);
    OK(nd_index_near_page(ix, &p, NULL, &l));
    EXPECT(l.len >= 1 && is(&l.items[0].key, "a") && l.items[0].exact);
    nd_near_list_free(&l);
    OK(nd_index_near_page(ix, &q, NULL, &l));
    EXPECT(l.len == all.len);
    for (i = 0; i < l.len; ++i) {
      EXPECT(l.items[i].doc_id == all.items[i].doc_id);
      EXPECT(l.items[i].resemble == all.items[i].resemble);
    }
    nd_near_list_free(&l);
    /* Failures write nothing to `out`. */
    l.len = 77;
    EXPECT(nd_index_near_page(ix, &bad, NULL, &l) == ND_INVALID_ARGUMENT && l.len == 77);
    EXPECT(nd_index_near_page(ix, NULL, NULL, &l) == ND_NULL_POINTER && l.len == 77);
    EXPECT(nd_index_near_page(ix, &q, NULL, NULL) == ND_NULL_POINTER);
    EXPECT(nd_index_near_page(NULL, &q, NULL, &l) == ND_NULL_POINTER && l.len == 77);
    EXPECT(nd_index_near(ix, (const uint8_t *)probe, strlen(probe), 9, NULL, &l) ==
               ND_INVALID_ARGUMENT &&
           l.len == 77);
    EXPECT(nd_index_near(ix, NULL, 5, ND_CONTENT_HTML, NULL, &l) == ND_NULL_POINTER);
    EXPECT(nd_index_near(ix, (const uint8_t *)binary, 8, ND_CONTENT_HTML, NULL, &l) ==
           ND_BINARY_PAGE);
    EXPECT(nd_index_near(ix, (const uint8_t *)"\xff\xfe", 2, ND_CONTENT_TEXT, NULL, &l) ==
           ND_INVALID_UTF8);
    EXPECT(nd_index_near(NULL, (const uint8_t *)probe, strlen(probe), ND_CONTENT_HTML, NULL,
                         &l) == ND_NULL_POINTER);
    EXPECT(near(ix, probe, NULL, NULL) == ND_NULL_POINTER);
    EXPECT(l.len == 77);
    l.len = 0;
  }

  /* Nothing was stored. */
  {
    uint64_t n = 0, problems = 1;
    OK(nd_index_len(ix, &n));
    EXPECT(n == 3);
    OK(nd_index_check(ix, &problems, NULL));
    EXPECT(problems == 0);
  }

  /* --- a closed handle. */
  OK(nd_index_close(ix));
  EXPECT(near(ix, probe, no, &l) == ND_CLOSED);
  nd_index_free(ix);

  nd_near_options_free(no);
  nd_near_options_free(NULL);
  nd_near_list_free(&all);
  nd_record_free(&ra);
  nd_record_free(&rc);
  free(a);
  free(copy);
  free(other);
  free(probe);
  free(unrelated);
  printf("near: ok\n");
  return 0;
}
