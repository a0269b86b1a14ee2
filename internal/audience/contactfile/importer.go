package contactfile

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Report limits.
const (
	// MaxEntries is how many failures and notes a report lists.
	MaxEntries = 1000
	// MaxCategoryLen is the longest category name (the labels table's title limit).
	MaxCategoryLen = 100
	// flagShare and flagMinRows: a file is flagged when more than flagShare percent of its rows are malformed
	// or disposable and it has at least flagMinRows rows.
	flagShare   = 25
	flagMinRows = 20
)

// Entry is one line of an import report: a failed row, or a note about a row that was still loaded (or
// skipped). Line is the file line; 0 is a note about the whole import.
type Entry struct {
	Line  int
	Email string
	// Values are the row's cells, kept for failed rows so the caller can fix and resend them.
	Values []string
	Reason string
}

// Checks tell disposable and role addresses for the quality report; either may be nil.
type Checks struct {
	// Disposable reports whether a domain belongs to a throwaway-address service.
	Disposable func(domain string) bool
	// Role reports whether an address names a function (admin@, info@) rather than a person.
	Role func(email string) bool
}

// Contact is one accepted row.
type Contact struct {
	Line                                int
	Email                               string
	FirstName, LastName, Company, Phone string
	// Custom holds the non-empty custom cells; nil when there are none.
	Custom map[string]string
	// Subscribed is nil when the row does not say (no column, a blank cell or a value not understood).
	Subscribed *bool
	// Categories are the row's category names, lowercased (categories match names case-insensitively).
	Categories []string
	// Verified is set when the row carries an external verifier's verdict this service recognises.
	Verified bool
	Verdict  contacts.Verdict
	// Provider is the vocabulary the verdict was read in.
	Provider string
}

// Quality counts the rows that make a list risky to mail.
type Quality struct {
	// Malformed rows have no address or one that is not an address.
	Malformed int
	// Disposable rows have an address at a throwaway-address service.
	Disposable int
	// Role rows have an address that names a function (counted, not part of the bad share).
	Role int
}

// BadShare returns malformed plus disposable rows as a percent of total (two decimals), and whether that
// share flags the file: above 25 percent on files of 20 rows or more.
func (q Quality) BadShare(total int) (pct float64, flagged bool) {
	if total == 0 {
		return 0, false
	}
	pct = math.Round(float64(q.Malformed+q.Disposable)*10000/float64(total)) / 100
	return pct, pct > flagShare && total >= flagMinRows
}

// Importer reads an import's data rows into contacts and keeps its report. It is not safe for concurrent use.
type Importer struct {
	columns []Column
	email   int // index into columns of the email column
	checks  Checks

	seen       map[string]int // address -> line of the row that brought it
	categories map[string]string
	order      []string // category keys in order of appearance

	total, failed, repeats int
	quality                Quality
	entries                []Entry
	dropped                int
	notes                  []string // the current row's notes, kept only when the row is accepted
}

// NewImporter reads rows with a validated mapping: exactly one email column, custom columns with valid
// keys, verification providers known.
func NewImporter(columns []Column, checks Checks) *Importer {
	im := &Importer{columns: columns, email: -1, checks: checks, seen: map[string]int{}, categories: map[string]string{}}
	for i, c := range columns {
		if c.Target == TargetEmail {
			im.email = i
		}
	}
	return im
}

// Row reads one data row found at line. ok is false when the row failed or repeats an address an earlier row
// brought; either way the report says so.
func (im *Importer) Row(line int, cells []string) (c Contact, ok bool) {
	im.total++
	im.notes = im.notes[:0]
	cell := func(i int) string {
		if i < len(cells) {
			return strings.TrimSpace(cells[i])
		}
		return ""
	}
	raw := cell(im.columns[im.email].Index)
	if raw == "" {
		im.quality.Malformed++
		im.fail(line, "", cells, "no email address")
		return Contact{}, false
	}
	email, valid := contacts.NormalizeEmail(raw)
	if !valid {
		im.quality.Malformed++
		im.fail(line, truncate.Chars(raw, contacts.MaxEmailLen), cells, "not a valid email address")
		return Contact{}, false
	}
	if im.checks.Disposable != nil && im.checks.Disposable(contacts.Domain(email)) {
		im.quality.Disposable++
	}
	if im.checks.Role != nil && im.checks.Role(email) {
		im.quality.Role++
	}
	if first, dup := im.seen[email]; dup {
		im.repeats++
		im.add(Entry{Line: line, Email: email, Reason: fmt.Sprintf("repeats the address of line %d; skipped", first)})
		return Contact{}, false
	}
	c = Contact{Line: line, Email: email}
	var catNames []string
	for _, col := range im.columns {
		v := cell(col.Index)
		if v == "" {
			continue
		}
		var problem string
		switch col.Target {
		case TargetFirstName:
			c.FirstName, problem = v, tooLong("first_name", v, contacts.MaxNameLen)
		case TargetLastName:
			c.LastName, problem = v, tooLong("last_name", v, contacts.MaxNameLen)
		case TargetCompany:
			c.Company, problem = v, tooLong("company", v, contacts.MaxNameLen)
		case TargetPhone:
			c.Phone, problem = v, tooLong("phone", v, contacts.MaxPhoneLen)
		case TargetCustom:
			if problem = tooLong(fmt.Sprintf("custom field %q", col.CustomKey), v, contacts.MaxCustomValueLen); problem == "" {
				if c.Custom == nil {
					c.Custom = map[string]string{}
				}
				c.Custom[col.CustomKey] = v
			}
		case TargetSubscribed:
			if b, known := ParseSubscribed(v); known {
				c.Subscribed = &b
			} else {
				im.notes = append(im.notes, fmt.Sprintf("subscribed value %q not understood; a new contact takes subscribed_default, an existing one keeps its subscription", truncate.Chars(v, 64)))
			}
		case TargetCategories:
			catNames = im.rowCategories(&c, catNames, v)
		case TargetVerificationStatus:
			verdict, provider, known := contacts.Recognize(col.Provider, v)
			if !known {
				im.notes = append(im.notes, fmt.Sprintf("verification value %q is not a verdict %s uses; left unverified",
					truncate.Chars(v, 64), vocabularyName(col.Provider)))
				continue
			}
			c.Verified, c.Verdict, c.Provider = true, verdict, provider
		}
		if problem != "" {
			im.fail(line, email, cells, problem)
			return Contact{}, false
		}
	}
	for i, k := range c.Categories {
		if _, known := im.categories[k]; !known {
			im.categories[k] = catNames[i]
			im.order = append(im.order, k)
		}
	}
	for _, n := range im.notes {
		im.add(Entry{Line: line, Email: email, Reason: n})
	}
	im.seen[email] = line
	return c, true
}

// rowCategories adds the category names of one cell (separated by commas or semicolons) to c once each,
// lowercased, and their spellings to names.
func (im *Importer) rowCategories(c *Contact, names []string, v string) []string {
	for name := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ',' || r == ';' }) {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if utf8.RuneCountInString(name) > MaxCategoryLen {
			im.notes = append(im.notes, fmt.Sprintf("category name %q is longer than %d characters; ignored",
				truncate.Chars(name, 64)+"...", MaxCategoryLen))
			continue
		}
		k := strings.ToLower(name)
		if slices.Contains(c.Categories, k) {
			continue
		}
		c.Categories = append(c.Categories, k)
		names = append(names, name)
	}
	return names
}

func vocabularyName(provider string) string {
	if provider == "" {
		return "any known verifier"
	}
	return provider
}

func tooLong(field, v string, limit int) string {
	if utf8.RuneCountInString(v) > limit {
		return fmt.Sprintf("%s is longer than %d characters", field, limit)
	}
	return ""
}

func (im *Importer) fail(line int, email string, cells []string, reason string) {
	im.failed++
	im.add(Entry{Line: line, Email: email, Values: slices.Clone(cells), Reason: reason})
}

func (im *Importer) add(e Entry) {
	if len(im.entries) >= MaxEntries {
		im.dropped++
		return
	}
	im.entries = append(im.entries, e)
}

// Report is an import's outcome as far as the file is concerned.
type Report struct {
	// Total counts the data rows read.
	Total int
	// Failed rows had no valid address or a value over its limit.
	Failed int
	// Repeats are rows whose address an earlier row brought (skipped).
	Repeats int
	Quality Quality
	// Entries are the failures and notes by line, at most MaxEntries; Dropped counts the ones beyond.
	Entries []Entry
	Dropped int
	// Categories are the category names the file uses, first spelling of each, in order of appearance.
	Categories []string
}

// Report returns the report of the rows read so far.
func (im *Importer) Report() Report {
	cats := make([]string, len(im.order))
	for i, k := range im.order {
		cats[i] = im.categories[k]
	}
	return Report{Total: im.total, Failed: im.failed, Repeats: im.repeats, Quality: im.quality,
		Entries: im.entries, Dropped: im.dropped, Categories: cats}
}

// subscribedWords are the cell values a subscribed column understands (lowercase, spaces and dashes as
// underscores).
var subscribedWords = map[string]bool{
	"true": true, "yes": true, "y": true, "1": true, "t": true, "on": true, "subscribed": true, "opted_in": true, "opt_in": true,
	"false": false, "no": false, "n": false, "0": false, "f": false, "off": false, "unsubscribed": false, "opted_out": false, "opt_out": false,
}

// ParseSubscribed reads a subscribed cell: true/false, yes/no, 1/0, subscribed/unsubscribed and their usual
// variants, any case. known is false for anything else.
func ParseSubscribed(v string) (subscribed, known bool) {
	k := strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(v)))
	subscribed, known = subscribedWords[k]
	return subscribed, known
}
