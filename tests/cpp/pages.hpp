// Deterministic test pages for the C and C++ test programs: paragraphs of several sentences of
// made-up words (sentence fingerprints need sentences), and articles of such paragraphs.
#ifndef NEARDUP_TEST_PAGES_HPP
#define NEARDUP_TEST_PAGES_HPP

#include <string>

namespace testpages {

// A paragraph of 4–6 sentences of 8–15 words, all from `seed`.
inline std::string paragraph(unsigned seed) {
  static const char* words[] = {"river",  "stone",   "market", "lantern", "orbit",  "harbor",
                                "signal", "meadow",  "copper", "thunder", "silver", "garden",
                                "window", "railway", "forest", "compass", "mirror", "valley",
                                "letter", "morning", "kitchen", "journey", "answer", "picture"};
  std::string p;
  unsigned x = seed * 2654435761u + 12345u;
  auto next = [&x]() {
    x = x * 1103515245u + 12345u;
    return x >> 16;
  };
  const unsigned sentences = 4 + next() % 3;
  for (unsigned s = 0; s < sentences; ++s) {
    const unsigned n = 8 + next() % 8;
    for (unsigned w = 0; w < n; ++w) {
      std::string word = words[next() % 24];
      if (w == 0) word[0] = static_cast<char>(word[0] - 'a' + 'A');
      if (!p.empty()) p += ' ';
      p += word;
    }
    p += '.';
  }
  return p;
}

// An HTML article of `paras` paragraphs from `seed`; paragraphs `edited` and `edited2` (if
// any) rewritten.
inline std::string article(unsigned seed, int paras, int edited = -1, int edited2 = -1) {
  std::string h = "<html><head><title>T" + std::to_string(seed) + "</title></head><body>";
  for (int i = 0; i < paras; ++i) {
    unsigned s = seed * 100 + static_cast<unsigned>(i);
    if (i == edited || i == edited2) s += 7777;
    h += "<p>" + paragraph(s) + "</p>";
  }
  return h + "</body></html>";
}

}  // namespace testpages

#endif
