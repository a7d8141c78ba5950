/* The checks of the C ABI's tests (C99): CHECK counts a failed condition and
 * prints it with kiln_last_error(); CHECK_FAILS checks a call's status and
 * that its message holds a word. A test's main returns failures != 0. */
#ifndef KILN_TESTS_C_CHECKS_H
#define KILN_TESTS_C_CHECKS_H

#include <kiln/kiln.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition)                                                                            \
  do {                                                                                              \
    if (!(condition)) {                                                                             \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #condition, \
              kiln_last_error());                                                                   \
      ++failures;                                                                                   \
    }                                                                                               \
  } while (0)

/* status == expected and the message holds `word` */
#define CHECK_FAILS(call, expected, word)             \
  do {                                                \
    kiln_status status_ = (call);                     \
    CHECK(status_ == (expected));                     \
    CHECK(strstr(kiln_last_error(), (word)) != NULL); \
  } while (0)

#endif
