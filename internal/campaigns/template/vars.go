package template

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// field is what a variable reads, decided once at parse time so rendering never looks at names.
type field uint8

const (
	fieldFirstName field = iota
	fieldLastName
	fieldFullName
	fieldEmail
	fieldCompany
	fieldPhone
	fieldCustom
	fieldSenderName
	fieldSenderFirstName
	fieldSenderEmail
	fieldSignature
	fieldCampaignName
	fieldApp
)

// contactFields are the standard contact fields by normalised name.
var contactFields = map[string]field{
	"firstname": fieldFirstName, "lastname": fieldLastName, "fullname": fieldFullName,
	"email": fieldEmail, "company": fieldCompany, "phone": fieldPhone,
}

// senderFields are the fields of {{.Sender.X}} by normalised name.
var senderFields = map[string]field{
	"name": fieldSenderName, "firstname": fieldSenderFirstName, "email": fieldSenderEmail,
}

// variable is one compiled {{...}}: what it reads, the name a person wrote (reported when it does not
// resolve) and its fallback.
type variable struct {
	field field
	// name is the path as written, without the leading dot ("first_name", "Custom.industry").
	name string
	// keys are the custom-field key, or the App output key and fields, each with its normalised form.
	keys, norms []string
	def         string
	hasDefault  bool
}

// fallbackHint shows the one fallback syntax in error messages.
const fallbackHint = `{{.FirstName | default "there"}}`

// variable compiles the variable src[start:end] ("{{" to "}}").
func (p *parser) variable(start, end int) (*variable, error) {
	i, stop := start+2, end-2
	s := p.src
	skip := func() {
		for i < stop && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	skip()
	if i == stop {
		return nil, p.errorAt(start, `empty "{{ }}" (write a variable such as {{.FirstName}})`)
	}
	if s[i] != '.' {
		word := s[i:stop]
		return nil, p.errorAt(i, fmt.Sprintf("a variable starts with a dot: write {{.%s}}", strings.TrimSpace(word)))
	}
	pathAt := i + 1
	for i < stop && s[i] == '.' {
		i = nameEnd(s, i+1, stop)
	}
	name := s[pathAt:i]
	v, err := p.resolve(pathAt, name)
	if err != nil {
		return nil, err
	}
	skip()
	if i == stop {
		return v, nil
	}
	if s[i] != '|' {
		return nil, p.errorAt(i, fmt.Sprintf("unexpected %q after {{.%s (a variable is a name and an optional fallback, as in %s)", s[i:stop], name, fallbackHint))
	}
	if i+1 < stop && s[i+1] == '|' {
		return nil, p.errorAt(i, `unknown "||" (write a fallback as `+fallbackHint+`)`)
	}
	i++
	skip()
	fn := i
	i = nameEnd(s, i, stop)
	if fn == i {
		return nil, p.errorAt(fn, `"|" needs a function: write a fallback as `+fallbackHint)
	}
	if s[fn:i] != "default" {
		return nil, p.errorAt(fn, fmt.Sprintf("unknown function %q (the one function is default, as in %s)", s[fn:i], fallbackHint))
	}
	skip()
	lit := i
	strEnd, ok := 0, i < stop && s[i] == '"'
	if ok {
		strEnd, ok = stringEnd(s, i)
	}
	if !ok {
		return nil, p.errorAt(lit, "default needs one double-quoted string, as in "+fallbackHint)
	}
	def, err := strconv.Unquote(s[lit:strEnd])
	if err != nil {
		return nil, p.errorAt(lit, fmt.Sprintf("invalid string %s (use Go-style escapes such as \\\" and \\n)", s[lit:strEnd]))
	}
	i = strEnd
	skip()
	if i != stop {
		return nil, p.errorAt(i, fmt.Sprintf("unexpected %q after the fallback string", s[i:stop]))
	}
	v.def, v.hasDefault = def, true
	return v, nil
}

// nameEnd is the end of the name starting at s[i] (before stop): letters, digits, underscores and dashes.
func nameEnd(s string, i, stop int) int {
	for i < stop {
		r, size := utf8.DecodeRuneInString(s[i:stop])
		if r != '_' && r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		i += size
	}
	return i
}

// resolve decides what the path name (written at byte offset at) reads.
func (p *parser) resolve(at int, name string) (*variable, error) {
	parts := strings.Split(name, ".")
	for _, part := range parts {
		if part == "" {
			return nil, p.errorAt(at, fmt.Sprintf("variable {{.%s}} has an empty name (names are joined by single dots)", name))
		}
	}
	v := &variable{name: name}
	head, rest := normalize(parts[0]), parts[1:]
	noFields := func() error {
		return p.errorAt(at, fmt.Sprintf("{{.%s}} has no fields", parts[0]))
	}
	if f, ok := contactFields[head]; ok {
		if len(rest) > 0 {
			return nil, noFields()
		}
		v.field = f
		return v, nil
	}
	switch head {
	case "custom":
		if len(rest) != 1 {
			return nil, p.errorAt(at, "a custom field is written {{.Custom.<name>}}, one name after Custom")
		}
		v.field = fieldCustom
	case "sender":
		f, ok := field(0), len(rest) == 1
		if ok {
			f, ok = senderFields[normalize(rest[0])]
		}
		if !ok {
			return nil, p.errorAt(at, fmt.Sprintf("unknown sender field {{.%s}} (use Sender.Name, Sender.FirstName or Sender.Email)", name))
		}
		v.field = f
		return v, nil
	case "signature":
		if len(rest) > 0 {
			return nil, noFields()
		}
		v.field = fieldSignature
		return v, nil
	case "campaign":
		if len(rest) != 1 || normalize(rest[0]) != "name" {
			return nil, p.errorAt(at, fmt.Sprintf("unknown campaign field {{.%s}} (use Campaign.Name)", name))
		}
		v.field = fieldCampaignName
		return v, nil
	case "app":
		if len(rest) < 2 {
			return nil, p.errorAt(at, "an app value is written {{.App.<output_key>.<field>}}, naming the step's output key and a field")
		}
		v.field = fieldApp
	default:
		if len(rest) > 0 {
			return nil, p.errorAt(at, fmt.Sprintf("unknown variable {{.%s}} (custom fields are not nested; App values are written {{.App.<output_key>.<field>}})", name))
		}
		rest = parts
		v.field = fieldCustom
	}
	v.keys = rest
	for _, k := range rest {
		v.norms = append(v.norms, normalize(k))
	}
	return v, nil
}

// normalize is a name as matched: lower case, without underscores, spaces and dashes.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r != '_' && r != ' ' && r != '-' {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// lookup finds key in m exactly, or else the first key whose normalised form is norm. Map order is random,
// so when two keys normalise alike only an exact match is deterministic; keys the product stores differ.
func lookup[V any](m map[string]V, key, norm string) (V, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if normEqual(k, norm) {
			return v, true
		}
	}
	var zero V
	return zero, false
}

// normEqual reports whether normalize(s) == norm without building the normalised string.
func normEqual(s, norm string) bool {
	for _, r := range s {
		if r == '_' || r == ' ' || r == '-' {
			continue
		}
		n, size := utf8.DecodeRuneInString(norm)
		if size == 0 || unicode.ToLower(r) != n {
			return false
		}
		norm = norm[size:]
	}
	return norm == ""
}
