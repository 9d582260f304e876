/* pack_cmd.c - atf pack and atf unpack: index files converted between layout 1 and the
 * packed layout (atf_index_pack / atf_index_unpack do the work), in place or into copies.
 * SPDX-License-Identifier: MIT */
#include "atf.h"
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#else
#include <direct.h>
#endif

typedef struct pack_job {
    int unpack;                 /* atf unpack */
    const char *out;            /* -o DIR, or NULL: in place */
    uint64_t files, before, after;
} pack_job;

/* Whether the index file at path is in the layout the job converts to already. */
static int pack_done_already(const pack_job *j, const char *path) {
    atf_index_reader r;
    int done;
    if (atf_index_reader_open(&r, path, NULL) != ATF_OK) return 0;
    done = j->unpack ? !r.packed && r.layout == ATF_LAYOUT_1 : r.packed;
    atf_index_reader_close(&r);
    return done;
}

static atf_result pack_convert(pack_job *j, const char *in, const char *out) {
    atf_error e;
    atf_result rc;
    uint64_t before = cli_file_size(in);
    const char *verb = j->unpack ? "unpack" : "pack";
    memset(&e, 0, sizeof e);
    if (strcmp(in, out) != 0 && cli_exists(out)) {
        fprintf(cli_err(), "atf %s: %s exists: not overwritten\n", verb, out);
        return ATF_E_ARG;
    }
    rc = j->unpack ? atf_index_unpack(in, out, &e) : atf_index_pack(in, out, &e);
    if (rc == ATF_E_VERSION && strcmp(in, out) == 0 && pack_done_already(j, in)) {
        cli_printf("OK %s (%s already)\n", in, j->unpack ? "layout 1" : "packed");
        return ATF_OK;
    }
    if (rc != ATF_OK) {
        if (rc == ATF_E_VERSION)
            fprintf(cli_err(), "atf %s: %s: %s\n", verb, in,
                    j->unpack ? "not packed (nothing to unpack)"
                              : "not a layout-1 index file (packed already, or layout 2)");
        else
            cli_report(&e);
        return rc;
    }
    j->files++;
    j->before += before;
    j->after += cli_file_size(out);
    cli_printf("%s %s (%llu -> %llu bytes)\n", j->unpack ? "unpacked" : "packed", out,
               (cli_ull)before, (cli_ull)cli_file_size(out));
    return ATF_OK;
}

#if !defined(_WIN32)
/* manifest.json of a pid_* directory whose threads were all converted: its "layout" (the
 * second key, as the session writer writes it) says the new one. */
static void pack_manifest_layout(const char *pid_dir, uint32_t layout) {
    char path[CLI_PATH_MAX], tmp[CLI_PATH_MAX + 16], *text;
    const char *head = "{\"format_version\":2,\"layout\":";
    size_t n, digits;
    FILE *f;
    atf_error e;
    if (cli_join(path, sizeof path, pid_dir, "manifest.json", &e) != ATF_OK) return;
    if ((f = fopen(path, "rb")) == NULL) return;
    n = (size_t)cli_file_size(path);
    text = (char *)malloc(n + 1);
    if (!text || fread(text, 1, n, f) != n) {
        fclose(f);
        free(text);
        return;
    }
    fclose(f);
    text[n] = '\0';
    if (strncmp(text, head, strlen(head)) != 0) {
        fprintf(cli_err(), "atf: %s: not written by this library: its layout is left as is\n", path);
        free(text);
        return;
    }
    digits = strspn(text + strlen(head), "0123456789");
    snprintf(tmp, sizeof tmp, "%s.layout.tmp", path); /* not the session writer's name */
    if ((f = fopen(tmp, "wb")) != NULL) {
        int ok = fprintf(f, "%s%u", head, (unsigned)layout) > 0 &&
                 fputs(text + strlen(head) + digits, f) >= 0;
        ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) {
            fprintf(cli_err(), "atf: %s: cannot rewrite its layout\n", path);
            remove(tmp);
        }
    }
    free(text);
}

/* Copies the regular file `from` to `to`; ATF_OK or a report on stderr. */
static atf_result pack_copy_file(const char *from, const char *to) {
    char buf[1 << 16];
    size_t n;
    int ok = 1;
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    if (!in || !out) ok = 0;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in && ferror(in)) ok = 0;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    if (!ok) fprintf(cli_err(), "atf: cannot copy %s to %s\n", from, to);
    return ok ? ATF_OK : ATF_E_IO;
}

/* Converts every index.atf under `dir` (a thread_N, pid_* or session_* directory): in
 * place, or into a copy of the tree at `copy` (NULL: in place). The first failure's code. */
static atf_result pack_tree(pack_job *j, const char *dir, const char *copy) {
    DIR *d = opendir(dir);
    struct dirent *ent;
    atf_result rc = ATF_OK, first = ATF_OK;
    int threads = 0, converted = 0;
    if (!d) {
        fprintf(cli_err(), "atf: cannot read directory %s\n", dir);
        return ATF_E_IO;
    }
    if (copy && mkdir(copy, 0777) != 0) {
        fprintf(cli_err(), "atf: cannot make %s (it must not exist)\n", copy);
        closedir(d);
        return ATF_E_IO;
    }
    while ((ent = readdir(d)) != NULL) {
        char from[CLI_PATH_MAX], to[CLI_PATH_MAX];
        struct stat st;
        atf_error e;
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
        if (cli_join(from, sizeof from, dir, ent->d_name, &e) != ATF_OK ||
            cli_join(to, sizeof to, copy ? copy : dir, ent->d_name, &e) != ATF_OK) {
            cli_report(&e);
            rc = ATF_E_ARG;
        } else if (lstat(from, &st) != 0 || S_ISLNK(st.st_mode)) {
            rc = ATF_OK; /* a link is not followed: it may lead out of the tree, or into it */
        } else if (S_ISDIR(st.st_mode)) {
            rc = pack_tree(j, from, copy ? to : NULL);
            threads += strncmp(ent->d_name, "thread_", 7) == 0;
            converted += strncmp(ent->d_name, "thread_", 7) == 0 && rc == ATF_OK;
        } else if (strcmp(ent->d_name, "index.atf") == 0) {
            rc = pack_convert(j, from, to);
            if (rc != ATF_OK && copy) pack_copy_file(from, to); /* the copy stays whole */
        } else if (copy && strcmp(ent->d_name, "manifest.json.tmp") != 0) {
            rc = pack_copy_file(from, to);
        }
        if (first == ATF_OK) first = rc;
    }
    closedir(d);
    if (threads && threads == converted) /* a pid_* directory: its manifest says so now */
        pack_manifest_layout(copy ? copy : dir, j->unpack ? ATF_LAYOUT_1 : ATF_LAYOUT_PACKED);
    return first;
}
#else
static atf_result pack_tree(pack_job *j, const char *dir, const char *copy) {
    (void)j, (void)copy;
    fprintf(cli_err(), "atf: %s: directories are converted on POSIX systems only; give the "
                       "index.atf files\n", dir);
    return ATF_E_UNSUPPORTED;
}
#endif

#if !defined(_WIN32)
/* Whether directory `inner` is `outer` or lies inside it (both existing). */
static int pack_inside(const char *inner, const char *outer) {
    char a[PATH_MAX], b[PATH_MAX];
    size_t n;
    if (!realpath(inner, a) || !realpath(outer, b)) return 0;
    n = strlen(b);
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/' || n == 1);
}
#else
static int pack_inside(const char *inner, const char *outer) {
    (void)inner, (void)outer;
    return 0;
}
#endif

static int pack_path(pack_job *j, const char *path) {
    char out[CLI_PATH_MAX], dir[CLI_PATH_MAX], base[CLI_PATH_MAX];
    cli_kind kind;
    atf_error e;
    atf_result rc;
    if (cli_classify(path, &kind, &e) != ATF_OK) return cli_report(&e);
    if (kind == CLI_KIND_DETAIL || kind == CLI_KIND_SIDE) {
        fprintf(cli_err(), "atf: %s: only index files are packed\n", path);
        return CLI_EXIT_DATA;
    }
    cli_split_path(path, dir, base, sizeof dir);
    if (j->out && cli_join(out, sizeof out, j->out, base, &e) != ATF_OK) return cli_report(&e);
    if (kind != CLI_KIND_INDEX && j->out && pack_inside(j->out, path)) {
        fprintf(cli_err(), "atf: -o %s lies inside %s: its copy would be read while written\n",
                j->out, path);
        return CLI_EXIT_USAGE;
    }
    if (kind == CLI_KIND_INDEX) rc = pack_convert(j, path, j->out ? out : path);
    else rc = pack_tree(j, path, j->out ? out : NULL);
    return rc == ATF_OK ? CLI_EXIT_OK : CLI_EXIT_DATA;
}

static int pack_main(const cli_command *cmd, int argc, char **argv, int unpack) {
    pack_job j;
    int nops = 0, i, rc, status = CLI_EXIT_OK;
    size_t made_from = 0; /* the -o directories made: from this length of j.out on */
    const cli_flag flags[] = { { "-o", NULL, CLI_OPT_STR, &j.out } };
    memset(&j, 0, sizeof j);
    j.unpack = unpack;
    rc = cli_parse_args(cmd, argc, argv, flags, sizeof flags / sizeof flags[0], 1, 0, &nops);
    if (rc != CLI_CONTINUE) return rc;
    if (j.out && !cli_is_dir(j.out)) {
        atf_error e;
        if (cli_exists(j.out)) return cli_usage_error(cmd, "-o %s: not a directory", j.out);
        if (cli_make_dirs(j.out, &made_from) != 0) {
            cli_error_errno(&e, j.out, "make the -o directory", errno);
            return cli_report(&e);
        }
    }
    for (i = 1; i <= nops; i++) {
        int s = pack_path(&j, argv[i]);
        if (status == CLI_EXIT_OK) status = s;
    }
    if (j.out && j.files == 0) cli_remove_made_dirs(j.out, made_from); /* made for nothing */
    if (j.files > 1)
        cli_printf("%s %llu files: %llu -> %llu bytes\n", unpack ? "unpacked" : "packed",
                   (cli_ull)j.files, (cli_ull)j.before, (cli_ull)j.after);
    return status;
}

int cli_cmd_pack(const cli_command *cmd, int argc, char **argv) {
    return pack_main(cmd, argc, argv, 0);
}

int cli_cmd_unpack(const cli_command *cmd, int argc, char **argv) {
    return pack_main(cmd, argc, argv, 1);
}
