package contactfile

import (
	"fmt"
	"strings"

	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// Target is where a file column goes.
type Target string

// The targets of a column mapping.
const (
	TargetIgnore             Target = "ignore"
	TargetEmail              Target = "email"
	TargetFirstName          Target = "first_name"
	TargetLastName           Target = "last_name"
	TargetCompany            Target = "company"
	TargetPhone              Target = "phone"
	TargetSubscribed         Target = "subscribed"
	TargetCategories         Target = "categories"
	TargetVerificationStatus Target = "verification_status"
	TargetCustom             Target = "custom"
)

// Targets lists every target, in the order the API documents them.
var Targets = []Target{TargetIgnore, TargetEmail, TargetFirstName, TargetLastName, TargetCompany, TargetPhone,
	TargetSubscribed, TargetCategories, TargetVerificationStatus, TargetCustom}

// Column maps one file column.
type Column struct {
	// Index is the zero-based column index.
	Index int
	// Target is where the column goes.
	Target Target
	// CustomKey is the custom-field name of a custom column.
	CustomKey string
	// Provider is the verifier vocabulary of a verification_status column; empty reads every vocabulary.
	Provider string
}

// headerKey reads a header cell for matching: lowercase, every run of other characters than letters and
// digits one underscore.
func headerKey(h string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
			continue
		}
		sep = true
	}
	return b.String()
}

// headerTargets are the header names each built-in target is suggested for (as headerKey reads them).
var headerTargets = func() map[string]Target {
	m := map[string]Target{}
	for t, names := range map[Target][]string{
		TargetEmail: {"email", "e_mail", "mail", "email_address", "e_mail_address", "mail_address", "emailaddress",
			"email_id", "work_email", "business_email", "contact_email"},
		TargetFirstName: {"first_name", "firstname", "first", "given_name", "givenname", "fname", "forename"},
		TargetLastName:  {"last_name", "lastname", "last", "surname", "family_name", "familyname", "lname"},
		TargetCompany: {"company", "company_name", "companyname", "organization", "organisation",
			"organization_name", "organisation_name", "org", "business", "employer", "account", "account_name"},
		TargetPhone: {"phone", "phone_number", "phonenumber", "mobile", "mobile_phone", "mobile_number", "cell",
			"cell_phone", "telephone", "tel", "work_phone"},
		TargetSubscribed: {"subscribed", "subscription", "subscription_status", "opt_in", "opted_in", "optin",
			"marketing_consent"},
		TargetCategories: {"categories", "category", "tags", "tag", "lists", "list", "groups", "group"},
	} {
		for _, n := range names {
			m[n] = t
		}
	}
	return m
}()

// looksLikeAddress reports whether a cell holds an email address.
func looksLikeAddress(cell string) bool {
	if !strings.Contains(cell, "@") {
		return false
	}
	_, ok := contacts.NormalizeEmail(cell)
	return ok
}

func anyAddress(row []string) bool {
	for _, c := range row {
		if looksLikeAddress(c) {
			return true
		}
	}
	return false
}

// mentionsEmail reports whether a header key (headerKey) names an address: "Work Email", "E-mail (primary)".
func mentionsEmail(k string) bool {
	return strings.Contains(k, "email") || strings.Contains(k, "e_mail")
}

// DetectHeader tells whether first, the file's first row, is a header; second is the row after it (nil when
// there is none). A row holding an address is data. Otherwise the first row is a header when the second holds
// an address or when one of its cells is a usual header name (email, first name, company, ...).
func DetectHeader(first, second []string) bool {
	if anyAddress(first) {
		return false
	}
	if anyAddress(second) {
		return true
	}
	for _, c := range first {
		k := headerKey(c)
		if _, ok := headerTargets[k]; ok || mentionsEmail(k) || k == "name" || k == "full_name" {
			return true
		}
	}
	return false
}

// Suggest proposes a mapping for every column of a file: columns is the header (or "Column N" names),
// samples the first data rows. Header names pick the built-in targets (the first column for each); a column
// whose values read as another verifier's verdicts is verification_status; every other named column becomes a
// custom field under a key derived from its name, or is ignored when no valid key can be derived. Without a
// header the email column is the one whose samples hold the most addresses.
func Suggest(columns []string, hasHeader bool, samples [][]string) []Column {
	out := make([]Column, len(columns))
	used := map[Target]bool{}
	keys := map[string]bool{}
	for i, name := range columns {
		values := columnValues(samples, i)
		out[i] = Column{Index: i, Target: TargetIgnore}
		if hasHeader {
			if t, ok := headerTargets[headerKey(name)]; ok && !used[t] {
				out[i].Target, used[t] = t, true
				continue
			}
		}
		if !used[TargetVerificationStatus] && contacts.LooksLikeVerifierColumn(headerName(name, hasHeader), values) {
			out[i].Target, used[TargetVerificationStatus] = TargetVerificationStatus, true
			continue
		}
		if hasHeader {
			// "Primary Email", "Email (work)": an email column under another name, when it holds addresses.
			if !used[TargetEmail] && mentionsEmail(headerKey(name)) && anyAddress(values) {
				out[i].Target, used[TargetEmail] = TargetEmail, true
				continue
			}
			if key := CustomKeyFrom(name, keys); key != "" {
				out[i].Target, out[i].CustomKey, keys[strings.ToLower(key)] = TargetCustom, key, true
			}
		}
	}
	if !used[TargetEmail] {
		best, bestCount := -1, 0
		for i := range columns {
			if out[i].Target != TargetIgnore && out[i].Target != TargetCustom {
				continue
			}
			n := 0
			for _, v := range columnValues(samples, i) {
				if looksLikeAddress(v) {
					n++
				}
			}
			if n > bestCount {
				best, bestCount = i, n
			}
		}
		if best >= 0 {
			out[best] = Column{Index: best, Target: TargetEmail}
		}
	}
	return out
}

func headerName(name string, hasHeader bool) string {
	if hasHeader {
		return name
	}
	return ""
}

func columnValues(rows [][]string, i int) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		if i < len(r) {
			out = append(out, r[i])
		}
	}
	return out
}

// CustomKeyFrom derives a custom-field key from a header name: the characters a key may hold
// (contacts.ValidCustomKey), runs of spaces as one, at most 64 characters. taken holds the lowercased keys
// already in use; a repeat gets " 2", " 3", ... appended. It returns "" when the name has no letter or digit
// to keep.
func CustomKeyFrom(name string, taken map[string]bool) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(name) {
		switch {
		case r == ' ' || r == '\t':
			space = b.Len() > 0
		case r < 128 && contacts.ValidCustomKey(string(r)):
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	key := strings.Trim(b.String(), " _-")
	if key == "" {
		return ""
	}
	key = truncateKey(key, contacts.MaxCustomKeyLen)
	for n, base := 2, key; taken[strings.ToLower(key)]; n++ {
		suffix := fmt.Sprintf(" %d", n)
		key = truncateKey(base, contacts.MaxCustomKeyLen-len(suffix)) + suffix
	}
	return key
}

func truncateKey(k string, n int) string {
	if len(k) > n {
		k = strings.TrimRight(k[:n], " ")
	}
	return k
}

// ColumnNames returns the names of a file's columns: the header's cells (trimmed) when it has one, "Column N"
// (1-based) for the others and for a header cell left blank.
func ColumnNames(header []string, width int) []string {
	out := make([]string, width)
	for i := range out {
		if i < len(header) && strings.TrimSpace(header[i]) != "" {
			out[i] = strings.TrimSpace(header[i])
		} else {
			out[i] = fmt.Sprintf("Column %d", i+1)
		}
	}
	return out
}
