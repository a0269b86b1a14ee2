package classify

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// MaxReturnDays is how far after the message a stated return date may be and still be believed (a later one is
// more likely a misread, and campaign holds are capped there too).
const MaxReturnDays = 90

// trigger is a phrase after which a return date is stated: back says the sender is back that day ("back on"),
// otherwise the date ends the absence ("until").
type trigger struct {
	words []string
	back  bool
}

// Date shapes, on folded text. Each names its fields; where a shape's boundaries need a non-digit before it,
// the first group is that boundary.
var (
	isoDate     = regexp.MustCompile(`(?:^|[^\d])((\d{4})-(\d{1,2})-(\d{1,2}))(?:[^\d]|$)`)
	numDate     = regexp.MustCompile(`(?:^|[^\d.])((\d{1,2})([./-])(\d{1,2})(?:[./-](\d{4}|\d{2}))?)(?:[^\d]|$)`)
	dayMonth    = regexp.MustCompile(`(?:^|[^\pL\d])((\d{1,2})(?:st|nd|rd|th|er|o)?\.?\s*(?:of\s+|de\s+)?(\pL+)\.?(?:,?\s+(?:de\s+|del\s+)?(\d{4}))?)(?:[^\pL\d]|$)`)
	monthDay    = regexp.MustCompile(`(?:^|[^\pL\d])((\pL+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?)(?:[^\pL\d]|$)`)
	dateWindow  = 48
	dateMaxSkip = 30
)

// dateHit is a date read from text.
type dateHit struct {
	date   time.Time
	format string
	text   string
	start  int
}

// returnDate reads the day an out-of-office reply says its sender is back from folded text: a date after a
// trigger phrase ("back on", "until", "bis", "jusqu'au", "hasta el", ...), a "back" phrase before an "until"
// one, the latest where several are stated; with no trigger, the latest date the text states. Dates are
// ISO (2025-07-15), numeric day first (15.07.2025, 15/07/2025, 15.07.; month first only for English with
// slashes, 7/15, when that reads as a date), or with a month name in any language (July 15th, 15 July,
// 15. Juli, 15 juillet, 15 de julio); a missing year is the next occurrence. Only a date after the day the
// message was received and at most MaxReturnDays later counts. ok is false when no date qualifies.
func (r *Rules) returnDate(text, lang string, received time.Time) (date time.Time, ev Evidence, ok bool) {
	y, m, d := received.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	spans := wordSpans(text)
	words := make([]string, len(spans))
	for i, s := range spans {
		words[i] = text[s[0]:s[1]]
	}
	var best [2]*dateHit // [until, back]
	var bestTrigger [2]string
	for i := range words {
		for _, t := range r.triggers[words[i]] {
			end := i + len(t.words)
			if end > len(words) || !slices.Equal(words[i:end], t.words) {
				continue
			}
			from := spans[end-1][1]
			h, found := r.firstDate(text[from:min(len(text), from+dateWindow)], lang, day)
			if !found {
				continue
			}
			k := 0
			if t.back {
				k = 1
			}
			if best[k] == nil || h.date.After(best[k].date) {
				h := h
				best[k], bestTrigger[k] = &h, strings.Join(t.words, " ")
			}
		}
	}
	for _, k := range []int{1, 0} {
		if h := best[k]; h != nil {
			return h.date, Evidence{Kind: "rule", Name: "return_date",
				Value: fmt.Sprintf("%s after %q (%s)", h.date.Format(time.DateOnly), bestTrigger[k], h.format)}, true
		}
	}
	var latest *dateHit
	for _, h := range r.allDates(text, lang, day) {
		if latest == nil || h.date.After(latest.date) {
			h := h
			latest = &h
		}
	}
	if latest != nil {
		return latest.date, Evidence{Kind: "rule", Name: "return_date",
			Value: fmt.Sprintf("%s stated without a trigger (%s)", latest.date.Format(time.DateOnly), latest.format)}, true
	}
	return time.Time{}, Evidence{}, false
}

// firstDate is the first date in window that starts within dateMaxSkip characters (room for a weekday:
// "back on Monday, July 15") and qualifies.
func (r *Rules) firstDate(window, lang string, day time.Time) (dateHit, bool) {
	var first *dateHit
	for _, h := range r.allDates(window, lang, day) {
		if h.start <= dateMaxSkip && (first == nil || h.start < first.start) {
			h := h
			first = &h
		}
	}
	if first == nil {
		return dateHit{}, false
	}
	return *first, true
}

// allDates are the dates text states that qualify as a return date for a message received on day.
func (r *Rules) allDates(text, lang string, day time.Time) []dateHit {
	var out []dateHit
	add := func(start int, s string, year, month, dom int, format string) {
		if t, ok := qualify(year, month, dom, day); ok {
			out = append(out, dateHit{date: t, format: format, text: s, start: start})
		}
	}
	for _, m := range isoDate.FindAllStringSubmatchIndex(text, -1) {
		add(m[2], text[m[2]:m[3]], atoi(text[m[4]:m[5]]), atoi(text[m[6]:m[7]]), atoi(text[m[8]:m[9]]), "yyyy-mm-dd")
	}
	for _, m := range numDate.FindAllStringSubmatchIndex(text, -1) {
		a, sep, b, year := atoi(text[m[4]:m[5]]), text[m[6]:m[7]], atoi(text[m[8]:m[9]]), 0
		if m[10] >= 0 {
			year = atoi(text[m[10]:m[11]])
			if year < 100 {
				year += 2000
			}
		} else if sep == "-" {
			continue
		}
		// Day first (15.07., 15/07/2025); with slashes the other order too when the first is no date, and
		// first in English (7/15).
		orders := [][2]int{{b, a}}
		names := []string{"d" + sep + "m"}
		if sep == "/" {
			orders, names = append(orders, [2]int{a, b}), append(names, "m/d")
			if lang == "en" {
				orders[0], orders[1] = orders[1], orders[0]
				names[0], names[1] = names[1], names[0]
			}
		}
		for i, o := range orders {
			if t, ok := qualify(year, o[0], o[1], day); ok {
				out = append(out, dateHit{date: t, format: names[i], text: text[m[2]:m[3]], start: m[2]})
				break
			}
		}
	}
	for _, m := range dayMonth.FindAllStringSubmatchIndex(text, -1) {
		month, ok := r.months[text[m[6]:m[7]]]
		if !ok {
			continue
		}
		year := 0
		if m[8] >= 0 {
			year = atoi(text[m[8]:m[9]])
		}
		add(m[2], text[m[2]:m[3]], year, month, atoi(text[m[4]:m[5]]), "day month-name")
	}
	for _, m := range monthDay.FindAllStringSubmatchIndex(text, -1) {
		month, ok := r.months[text[m[4]:m[5]]]
		if !ok {
			continue
		}
		year := 0
		if m[8] >= 0 {
			year = atoi(text[m[8]:m[9]])
		}
		add(m[2], text[m[2]:m[3]], year, month, atoi(text[m[6]:m[7]]), "month-name day")
	}
	return out
}

// qualify is the date year-month-dom (year 0: the next occurrence after day) when it exists and falls after
// day and at most MaxReturnDays after it.
func qualify(year, month, dom int, day time.Time) (time.Time, bool) {
	if month < 1 || month > 12 || dom < 1 || dom > 31 {
		return time.Time{}, false
	}
	guess := year == 0
	if guess {
		year = day.Year()
	}
	t := time.Date(year, time.Month(month), dom, 0, 0, 0, 0, time.UTC)
	if t.Day() != dom {
		return time.Time{}, false
	}
	if guess && !t.After(day) {
		t = t.AddDate(1, 0, 0)
		if t.Day() != dom {
			return time.Time{}, false
		}
	}
	if !t.After(day) || t.After(day.AddDate(0, 0, MaxReturnDays)) {
		return time.Time{}, false
	}
	return t, true
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// wordSpans are the byte ranges of text's words, as tokens splits them.
func wordSpans(text string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\''
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}
