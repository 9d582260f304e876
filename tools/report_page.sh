#!/bin/sh
# report_page.sh - writes tools/report_page.h from tools/report.html: the page of
# `atf report` as a C array of strings, one per line of the page (each line shorter than
# the 4095 bytes C99 promises in a literal), with \, " and ? escaped (no trigraph can
# form). `make` runs it when report.html changes; tests/report_checks.sh checks that the
# header committed is what it writes.
#   sh tools/report_page.sh tools/report.html > tools/report_page.h
set -e
page=${1:-tools/report.html}
echo "/* report_page.h - the page of atf report, made from tools/report.html by"
echo " * tools/report_page.sh: edit report.html, never this file. The line ATF_REPORT_DATA"
echo " * is where report_cmd.c writes the report's data."
echo " * SPDX-License-Identifier: MIT */"
echo "static const char *const report_page[] = {"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/    "/' -e 's/$/\\n",/' "$page"
echo "};"
