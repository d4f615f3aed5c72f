//===- strings.c - String tensors: the hooks generated code calls -*- C -*-===//
//
// A string tensor's element is a pointer to NUL-terminated UTF-8 (NULL reads
// as ""). Generated code passes them as uintptr_t. Strings a model makes
// while it runs (a Cast to string, a case change) are allocated here and
// belong to the run's arena, which the entry point opens before the model's
// code and closes after it: everything in it is freed then. The strings of
// the model's string outputs are exported: each is a malloc'd copy the
// caller owns and releases with free().
//
// The arena is a lock-free list (workers of a parallel loop add to the
// caller's arena, see parallel.c), found through a thread-local pointer so
// that the model's code needs no extra argument. An allocation that fails
// yields "" and marks the arena; the entry point then returns
// KILN_STATUS_OUT_OF_MEMORY.
//
// Case changes map each code point with towupper/towlower in the C.UTF-8
// locale (Unicode's simple case mapping); bytes that are not valid UTF-8
// are kept as they are.
//
//===----------------------------------------------------------------------===//

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "kiln/runtime.h"
#include "internal.h"

// String tensors need a hosted C library with POSIX locales; firmware
// builds of the runtime leave them out (kiln refuses strings there).
#if defined(__unix__) || defined(__APPLE__)

#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

/// A string the run made: freed when the run ends.
typedef struct owned_block {
  struct owned_block *next;
  char text[];
} owned_block;

/// A string handed to the caller: the node goes when the run ends, the
/// text only if the run failed.
typedef struct exported_node {
  struct exported_node *next;
  char *text;
} exported_node;

static _Thread_local kiln_string_arena *current;

void *kiln_string_arena_current(void) { return current; }

void *kiln_string_arena_swap(void *arena) {
  void *previous = current;
  current = (kiln_string_arena *)arena;
  return previous;
}

void kiln_string_run_begin(kiln_string_arena *a) {
  a->owned = NULL;
  a->exported = NULL;
  a->failed = 0;
  a->previous = kiln_string_arena_swap(a);
}

int kiln_string_run_end(kiln_string_arena *a) {
  kiln_string_arena_swap(a->previous);
  for (owned_block *b = (owned_block *)a->owned; b;) {
    owned_block *next = b->next;
    free(b);
    b = next;
  }
  int failed = a->failed != 0;
  for (exported_node *e = (exported_node *)a->exported; e;) {
    exported_node *next = e->next;
    if (failed)
      free(e->text);
    free(e);
    e = next;
  }
  a->owned = a->exported = NULL;
  return failed ? KILN_STATUS_OUT_OF_MEMORY : KILN_STATUS_OK;
}

static void mark_failed(void) {
  if (current)
    __atomic_store_n(&current->failed, 1, __ATOMIC_RELAXED);
}

/// Pushes onto a list head shared with other threads of the run.
static void push(void **head, void *node, void **next) {
  void *old = __atomic_load_n(head, __ATOMIC_RELAXED);
  do
    *next = old;
  while (!__atomic_compare_exchange_n(head, &old, node, 1, __ATOMIC_RELEASE,
                                      __ATOMIC_RELAXED));
}

/// A new string of the run, \p n bytes of \p bytes plus the NUL; "" when
/// memory runs out (the run then fails) or outside a run.
static uintptr_t make_string(const char *bytes, size_t n) {
  if (!current)
    return (uintptr_t)"";
  owned_block *b = (owned_block *)malloc(sizeof(owned_block) + n + 1);
  if (!b) {
    mark_failed();
    return (uintptr_t)"";
  }
  memcpy(b->text, bytes, n);
  b->text[n] = '\0';
  push(&current->owned, b, (void **)&b->next);
  return (uintptr_t)b->text;
}

static const char *text_of(uintptr_t s) { return s ? (const char *)s : ""; }

uintptr_t kiln_string_export(uintptr_t s) {
  const char *text = text_of(s);
  size_t n = strlen(text);
  char *copy = (char *)malloc(n + 1);
  exported_node *e = copy ? (exported_node *)malloc(sizeof(exported_node)) : NULL;
  if (!e || !current) {
    free(copy);
    free(e);
    mark_failed();
    return 0;
  }
  memcpy(copy, text, n + 1);
  e->text = copy;
  push(&current->exported, e, (void **)&e->next);
  return (uintptr_t)copy;
}

//===----------------------------------------------------------------------===//
// Numbers to strings and back
//===----------------------------------------------------------------------===//

/// ONNX's spellings of the special values; NULL for a finite \p x.
static const char *special(double x) {
  if (isnan(x))
    return "NaN";
  if (isinf(x))
    return x > 0 ? "INF" : "-INF";
  return NULL;
}

/// \p x (finite) with the fewest significant digits that read back as the
/// same value (\p single: as a float), spelled as NumPy prints it: positional
/// for magnitudes in [1e-4, 1e16) ("100.0", "0.039187793"), else with an
/// exponent ("1e-05", "1.5e+20").
static uintptr_t shortest(double x, int single) {
  char buf[64];
  int digits = 1, max = single ? 9 : 17;
  for (; digits < max; ++digits) {
    snprintf(buf, sizeof buf, "%.*e", digits - 1, x);
    if (single ? strtof(buf, NULL) == (float)x : strtod(buf, NULL) == x)
      break;
  }
  // buf holds x with that many digits, as %e: its exponent is the
  // decimal exponent of the rounded value.
  snprintf(buf, sizeof buf, "%.*e", digits - 1, x);
  const char *e = strchr(buf, 'e');
  int exponent = e ? atoi(e + 1) : 0;
  double m = fabs(x);
  if (x != 0 && (m < 1e-4 || m >= 1e16))
    return make_string(buf, strlen(buf));
  // Positional: the same digits around the point, zeros to fill.
  char mantissa[32];
  size_t nd = 0;
  for (const char *c = buf; *c && *c != 'e'; ++c)
    if (*c >= '0' && *c <= '9')
      mantissa[nd++] = *c;
  char out[64];
  size_t n = 0;
  if (signbit(x))
    out[n++] = '-';
  if (exponent < 0) {
    out[n++] = '0';
    out[n++] = '.';
    for (int z = 0; z < -exponent - 1; ++z)
      out[n++] = '0';
    memcpy(out + n, mantissa, nd);
    n += nd;
  } else {
    size_t whole = (size_t)exponent + 1;
    for (size_t k = 0; k < whole; ++k)
      out[n++] = k < nd ? mantissa[k] : '0';
    out[n++] = '.';
    if (nd > whole) {
      memcpy(out + n, mantissa + whole, nd - whole);
      n += nd - whole;
    } else {
      out[n++] = '0';
    }
  }
  return make_string(out, n);
}

uintptr_t kiln_string_from_f32(float x) {
  const char *s = special(x);
  return s ? make_string(s, strlen(s)) : shortest(x, 1);
}

uintptr_t kiln_string_from_f64(double x) {
  const char *s = special(x);
  return s ? make_string(s, strlen(s)) : shortest(x, 0);
}

uintptr_t kiln_string_from_i64(int64_t x) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%lld", (long long)x);
  return make_string(buf, (size_t)n);
}

uintptr_t kiln_string_from_u64(uint64_t x) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)x);
  return make_string(buf, (size_t)n);
}

// Text that is not a number reads as NaN (floats) or 0 (integers); strtof
// and strtod read "NaN", "INF", "+INF" and "-INF" in any case.
float kiln_string_to_f32(uintptr_t s) {
  const char *text = text_of(s);
  char *end;
  float x = strtof(text, &end);
  return end == text ? NAN : x;
}

double kiln_string_to_f64(uintptr_t s) {
  const char *text = text_of(s);
  char *end;
  double x = strtod(text, &end);
  return end == text ? NAN : x;
}

int64_t kiln_string_to_i64(uintptr_t s) { return (int64_t)strtoll(text_of(s), NULL, 10); }

uint64_t kiln_string_to_u64(uintptr_t s) { return (uint64_t)strtoull(text_of(s), NULL, 10); }

//===----------------------------------------------------------------------===//
// Case
//===----------------------------------------------------------------------===//

/// C.UTF-8's LC_CTYPE, made once; (locale_t)0 where the C library lacks it
/// (then only ASCII letters change case).
static locale_t utf8_locale(void) {
  static _Atomic(locale_t) cached;
  static atomic_int tried;
  locale_t l = atomic_load(&cached);
  if (l || atomic_load(&tried))
    return l;
  l = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  locale_t expected = (locale_t)0;
  if (l && !atomic_compare_exchange_strong(&cached, &expected, l)) {
    freelocale(l);
    l = expected;
  }
  atomic_store(&tried, 1);
  return l;
}

/// The code point at \p s (length in \p *len), or -1 with *len 1 for a byte
/// that does not start valid UTF-8.
static int32_t decode(const unsigned char *s, size_t *len) {
  unsigned c = s[0];
  int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  *len = 1;
  if (n == 0)
    return -1;
  int32_t cp = n == 1 ? (int32_t)c : (int32_t)(c & (0x7f >> n));
  for (int i = 1; i < n; ++i) {
    if ((s[i] & 0xc0) != 0x80)
      return -1;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  static const int32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return -1;
  *len = (size_t)n;
  return cp;
}

static size_t encode(int32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

static int32_t map_case(int32_t cp, int upper, locale_t l) {
  if (l) {
    wint_t r = upper ? towupper_l((wint_t)cp, l) : towlower_l((wint_t)cp, l);
    if (r <= 0x10ffff && !(r >= 0xd800 && r <= 0xdfff))
      return (int32_t)r;
    return cp;
  }
  if (upper && cp >= 'a' && cp <= 'z')
    return cp - 'a' + 'A';
  if (!upper && cp >= 'A' && cp <= 'Z')
    return cp - 'A' + 'a';
  return cp;
}

uintptr_t kiln_string_change_case(uintptr_t s, int32_t upper) {
  const unsigned char *in = (const unsigned char *)text_of(s);
  size_t n = strlen((const char *)in);
  // A code point of k bytes maps to one of at most 4: 4n bytes hold any
  // result.
  char small[256];
  char *out = n * 4 + 1 <= sizeof small ? small : (char *)malloc(n * 4 + 1);
  if (!out) {
    mark_failed();
    return (uintptr_t)"";
  }
  locale_t l = utf8_locale();
  size_t w = 0;
  for (size_t i = 0; i < n;) {
    size_t len;
    int32_t cp = decode(in + i, &len);
    if (cp < 0)
      out[w++] = (char)in[i];
    else
      w += encode(map_case(cp, upper, l), out + w);
    i += len;
  }
  uintptr_t r = make_string(out, w);
  if (out != small)
    free(out);
  return r;
}

/// Whether \p a and \p b are equal, code point by code point after lower
/// casing when \p ignore_case.
static int equal_text(const char *a, const char *b, int ignore_case, locale_t l) {
  if (!ignore_case)
    return strcmp(a, b) == 0;
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  while (*x && *y) {
    size_t lx, ly;
    int32_t cx = decode(x, &lx), cy = decode(y, &ly);
    if (cx < 0 || cy < 0) {
      if (*x != *y)
        return 0;
    } else if (map_case(cx, 0, l) != map_case(cy, 0, l)) {
      return 0;
    }
    x += lx;
    y += ly;
  }
  return *x == *y;
}

int32_t kiln_string_in_list(uintptr_t s, uintptr_t list, int64_t count, int32_t ignore_case) {
  const char *text = text_of(s);
  locale_t l = ignore_case ? utf8_locale() : (locale_t)0;
  const char *w = (const char *)list;
  for (int64_t i = 0; w && i < count; ++i, w += strlen(w) + 1)
    if (equal_text(text, w, ignore_case, l))
      return 1;
  return 0;
}

#else /* no hosted C library: no string tensors */

typedef int kiln_no_string_tensors;

#endif
