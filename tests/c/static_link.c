/* The embeddable static archive (scripts/static-lib.sh) in a plain C program that links no other
 * RocksDB: `cc static_link.c libneardup_embed.a -lstdc++ -lpthread -ldl -lm` is all it takes.
 *
 * Usage: static_link DIR   (DIR must not exist yet)
 * Prints "static_link_c: ok" and exits 0 when every check passed. */
#include <neardup.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s (last error: %s)\n", what, nd_last_error());
    ++failures;
  }
}

static nd_status insert(nd_index *ix, const char *key, const char *text, nd_verdict *v) {
  nd_page p;
  memset(&p, 0, sizeof p);
  p.key = key;
  p.key_len = strlen(key);
  p.content = (const uint8_t *)text;
  p.content_len = strlen(text);
  p.content_kind = ND_CONTENT_TEXT;
  return nd_index_insert(ix, &p, v);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const char *text = "The river rose two metres overnight, and the town council closed the old "
                     "bridge before dawn. Engineers will inspect its piers once the water falls, "
                     "the mayor said on Tuesday.";
  nd_index *ix = NULL;
  nd_status st = nd_index_open(argv[1], strlen(argv[1]), NULL, &ix);
  expect(st == ND_OK, "nd_index_open");
  if (st != ND_OK) return 1;
  nd_verdict v;
  memset(&v, 0, sizeof v);
  expect(insert(ix, "a", text, &v) == ND_OK && !v.duplicate, "insert the first page");
  nd_verdict_free(&v);
  expect(insert(ix, "b", text, &v) == ND_OK && v.duplicate && v.exact, "insert its copy");
  nd_verdict_free(&v);
  expect(nd_index_query(ix, (const uint8_t *)text, strlen(text), ND_CONTENT_TEXT, &v) == ND_OK &&
             v.duplicate,
         "query finds the page");
  nd_verdict_free(&v);
  expect(nd_index_close(ix) == ND_OK, "nd_index_close");
  nd_index_free(ix);
  if (failures != 0) return 1;
  printf("static_link_c: ok\n");
  return 0;
}
