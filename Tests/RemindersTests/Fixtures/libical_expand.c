/*
 * libical_expand: expands one RRULE with libical, for weighing libical against the
 * Swift expansion on rrule-corpus.json (see libical_compare.py). Measurement only: the
 * Swift package does not link libical.
 *
 *   cc -O2 libical_expand.c -o libical_expand $(pkg-config --cflags --libs libical)
 *   ./libical_expand 19970902T090000 'FREQ=DAILY;COUNT=10' [EXDATE,EXDATE...] [LIMIT]
 *
 * Prints the occurrences (floating local times, YYYY-MM-DDTHH:MM) separated by commas on
 * one line, after removing the exception date-times (YYYYMMDDTHHMMSS), at most LIMIT
 * (50) of them; or "ERROR <reason>" when libical refuses the rule. The start is a
 * floating local time, as the corpus' starts are (the corpus is expanded in UTC).
 */
#include <libical/ical.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_exception(const char *exdates, const char *compact) {
    if (exdates == NULL || *exdates == '\0') return 0;
    const char *found = strstr(exdates, compact);
    return found != NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s DTSTART RRULE [EXDATES] [LIMIT]\n", argv[0]);
        return 2;
    }
    const char *exdates = argc > 3 ? argv[3] : "";
    int limit = argc > 4 ? atoi(argv[4]) : 50;

    icalerror_set_errors_are_fatal(0);
    struct icalrecurrencetype recur = icalrecurrencetype_from_string(argv[2]);
    if (recur.freq == ICAL_NO_RECURRENCE) {
        printf("ERROR %s\n", icalerror_strerror(icalerrno));
        return 0;
    }
    struct icaltimetype start = icaltime_from_string(argv[1]);
    icalrecur_iterator *iterator = icalrecur_iterator_new(recur, start);
    if (iterator == NULL) {
        printf("ERROR %s\n", icalerror_strerror(icalerrno));
        return 0;
    }
    int printed = 0;
    struct icaltimetype next;
    while (printed < limit && !icaltime_is_null_time(next = icalrecur_iterator_next(iterator))) {
        char compact[32];
        snprintf(compact, sizeof compact, "%04d%02d%02dT%02d%02d%02d", next.year, next.month, next.day, next.hour,
                 next.minute, next.second);
        if (is_exception(exdates, compact)) continue;
        printf("%s%04d-%02d-%02dT%02d:%02d", printed ? "," : "", next.year, next.month, next.day, next.hour, next.minute);
        printed++;
    }
    printf("\n");
    icalrecur_iterator_free(iterator);
    return 0;
}
