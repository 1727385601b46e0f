// The check macros of the C ABI test programs: a failed expectation prints where, what and the
// library's last error message, and exits 1.
#ifndef NEARDUP_TEST_EXPECT_HPP
#define NEARDUP_TEST_EXPECT_HPP

#include <cstdio>
#include <cstdlib>

#include <neardup.h>

#define EXPECT(c)                                                                  \
  do {                                                                             \
    if (!(c)) {                                                                    \
      std::fprintf(stdout, "%s:%d: expected %s (%s)\n", __FILE__, __LINE__, #c,    \
                   nd_last_error());                                               \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)
#define OK(call) EXPECT((call) == ND_OK)

#endif
