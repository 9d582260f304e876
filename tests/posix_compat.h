/* posix_compat.h - the few POSIX file calls the harnesses use, mapped onto the C runtime
 * when they are built for Windows (mingw-w64); nothing on other systems. Include it after
 * <sys/stat.h> and <unistd.h>. Windows has no symbolic links here: lstat is stat. */
#ifndef ATF_TESTS_POSIX_COMPAT_H
#define ATF_TESTS_POSIX_COMPAT_H

#if defined(_WIN32)
#  include <direct.h>
#  include <io.h>
#  define lstat stat
#  define mkdir(path, mode) _mkdir(path)
static char *mkdtemp(char *templ) { return _mktemp(templ) && _mkdir(templ) == 0 ? templ : NULL; }
#endif

#endif
