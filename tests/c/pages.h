/* What the C programs under tests/c share: EXPECT and OK, which print the failed condition with
 * nd_last_error() and exit 1, and deterministic pages as tests/cpp/pages.hpp makes them
 * (article(seed, edit1, edit2): 8 paragraphs, two of them rewritten when not -1). Included by
 * near.c and changes.c. */
#ifndef NEARDUP_TESTS_C_PAGES_H
#define NEARDUP_TESTS_C_PAGES_H

#include <neardup.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPECT(c)                                                                        \
  do {                                                                                   \
    if (!(c)) {                                                                          \
      printf("%s:%d: expected %s (%s)\n", __FILE__, __LINE__, #c, nd_last_error());      \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)
#define OK(call) EXPECT((call) == ND_OK)

/* ----- deterministic pages, as tests/cpp/pages.hpp makes them ----- */

static const char *const WORDS[24] = {
    "river",  "stone",  "market", "lantern", "orbit",  "harbor",  "signal",  "meadow",
    "copper", "thunder", "silver", "garden", "window", "railway", "forest",  "compass",
    "mirror", "valley", "letter", "morning", "kitchen", "journey", "answer", "picture"};

/* Appends `s` to the buffer `b` of capacity `cap` holding `*len` bytes. */
static void put(char *b, size_t cap, size_t *len, const char *s) {
  size_t n = strlen(s);
  EXPECT(*len + n < cap);
  memcpy(b + *len, s, n + 1);
  *len += n;
}

/* A paragraph of 4–6 sentences of 8–15 words, all from `seed`. */
static void paragraph(unsigned seed, char *b, size_t cap, size_t *len) {
  unsigned x = seed * 2654435761u + 12345u;
  unsigned sentences, s, n, w;
  int first = 1;
#define NEXT() (x = x * 1103515245u + 12345u, x >> 16)
  sentences = 4 + NEXT() % 3;
  for (s = 0; s < sentences; ++s) {
    n = 8 + NEXT() % 8;
    for (w = 0; w < n; ++w) {
      char word[16];
      strcpy(word, WORDS[NEXT() % 24]);
      if (w == 0) word[0] = (char)(word[0] - 'a' + 'A');
      if (!first) put(b, cap, len, " ");
      first = 0;
      put(b, cap, len, word);
    }
    put(b, cap, len, ".");
  }
#undef NEXT
}

/* An HTML article of 8 paragraphs from `seed`; paragraphs `edit1` and `edit2` (when not -1)
 * rewritten. The caller frees it. */
static char *article(unsigned seed, int edit1, int edit2) {
  const size_t cap = 64 * 1024;
  char *b = malloc(cap);
  size_t len = 0;
  char head[64];
  int i;
  EXPECT(b != NULL);
  b[0] = '\0';
  snprintf(head, sizeof head, "<html><head><title>T%u</title></head><body>", seed);
  put(b, cap, &len, head);
  for (i = 0; i < 8; ++i) {
    unsigned s = seed * 100 + (unsigned)i;
    if (i == edit1 || i == edit2) s += 7777;
    put(b, cap, &len, "<p>");
    paragraph(s, b, cap, &len);
    put(b, cap, &len, "</p>");
  }
  put(b, cap, &len, "</body></html>");
  return b;
}

#endif
