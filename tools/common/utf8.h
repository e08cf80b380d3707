/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BUDDY_UTF8_H
#define BUDDY_UTF8_H

/*
 * buddy_utf8() - @s as valid UTF-8: every byte that does not start a valid
 * sequence (overlong forms, surrogates and code points past U+10FFFF are
 * not valid) becomes U+FFFD.  Returns a malloc'ed string, NULL without
 * memory.  JSON must be UTF-8 (RFC 8259), file names need not be.
 */
char *buddy_utf8(const char *s);

#endif /* BUDDY_UTF8_H */
