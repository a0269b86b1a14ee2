package template

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// variable writes v's value, or its fallback when the value is missing or blank, or records it as
// unresolved and writes nothing.
func (r *renderer) variable(v *variable) {
	start := len(r.out)
	r.value(v)
	if len(bytes.TrimSpace(r.out[start:])) > 0 {
		return
	}
	r.out = r.out[:start]
	if v.hasDefault {
		r.text(v.def)
		return
	}
	r.unresolve(v.name)
}

// value writes what v reads from the data, escaped for the part; nothing when it is missing.
func (r *renderer) value(v *variable) {
	c, s := &r.d.Contact, &r.d.Sender
	switch v.field {
	case fieldFirstName:
		r.text(c.FirstName)
	case fieldLastName:
		r.text(c.LastName)
	case fieldFullName:
		first, last := strings.TrimSpace(c.FirstName), strings.TrimSpace(c.LastName)
		r.text(first)
		if first != "" && last != "" {
			r.out = append(r.out, ' ')
		}
		r.text(last)
	case fieldEmail:
		r.text(c.Email)
	case fieldCompany:
		r.text(c.Company)
	case fieldPhone:
		r.text(c.Phone)
	case fieldCustom:
		if val, ok := lookup(c.Custom, v.keys[0], v.norms[0]); ok {
			r.text(val)
		}
	case fieldSenderName:
		r.text(s.Name)
	case fieldSenderFirstName:
		if strings.TrimSpace(s.FirstName) != "" {
			r.text(s.FirstName)
		} else {
			name := strings.TrimSpace(s.Name)
			if end := strings.IndexFunc(name, unicode.IsSpace); end >= 0 {
				name = name[:end]
			}
			r.text(name)
		}
	case fieldSenderEmail:
		r.text(s.Email)
	case fieldSignature:
		r.signature()
	case fieldCampaignName:
		r.text(r.d.Campaign.Name)
	case fieldApp:
		r.app(v)
	}
}

// text writes s, HTML-escaped in an HTML body.
func (r *renderer) text(s string) {
	if r.html {
		r.out = appendEscaped(r.out, s)
	} else {
		r.out = append(r.out, s...)
	}
}

// signature writes the sender's signature for the part: the HTML one as it is in an HTML body (the plain
// one, escaped and with its line breaks kept, when there is none), the plain one elsewhere.
func (r *renderer) signature() {
	s := &r.d.Sender
	if !r.html {
		r.out = append(r.out, s.SignaturePlain...)
		return
	}
	if strings.TrimSpace(s.SignatureHTML) != "" {
		if r.noLinks {
			r.out = append(r.out, s.SignatureHTML...)
		} else {
			r.emit(s.SignatureHTML, r.sigLinks)
		}
		return
	}
	for i, line := range strings.Split(strings.ReplaceAll(s.SignaturePlain, "\r\n", "\n"), "\n") {
		if i > 0 {
			r.out = append(r.out, "<br>\n"...)
		}
		r.out = appendEscaped(r.out, line)
	}
}

// app writes the App value at v's path: strings as they are, numbers and booleans as JSON prints them.
// Objects, arrays, null and a missing path write nothing, so the variable is unresolved.
func (r *renderer) app(v *variable) {
	var cur any = r.d.App
	for i, k := range v.keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return
		}
		if cur, ok = lookup(m, k, v.norms[i]); !ok {
			return
		}
	}
	switch x := cur.(type) {
	case string:
		r.text(x)
	case json.Number:
		r.text(string(x))
	case bool:
		r.out = strconv.AppendBool(r.out, x)
	case int:
		r.out = strconv.AppendInt(r.out, int64(x), 10)
	case int64:
		r.out = strconv.AppendInt(r.out, x, 10)
	case float64:
		r.out = appendJSONFloat(r.out, x)
	}
}

// appendJSONFloat writes f as encoding/json does: plain notation, exponent form only for very small or
// very large magnitudes, and nothing for NaN and infinities (JSON has none).
func appendJSONFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst
}

// appendEscaped writes s with &, <, >, " and ' escaped, as html.EscapeString does, without an allocation.
func appendEscaped(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		default:
			continue
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		last = i + 1
	}
	return append(dst, s[last:]...)
}

// Seed derives the spintax seed of one contact at one step (their ids), so every render of that pair
// (preview, test send, the send and its retries) picks the same words.
func Seed(contact, step [16]byte) uint64 {
	h := uint64(14695981039346656037) // FNV-1a offset basis
	for _, id := range [2][16]byte{contact, step} {
		for _, b := range id {
			h = (h ^ uint64(b)) * 1099511628211
		}
	}
	return mix(h)
}

// choose is the option of a group of n options picked for seed: a hash of the seed and the group's
// number, so groups vary independently and the same seed always picks the same.
func choose(seed, group uint64, n int) int {
	h := mix(seed ^ mix(group+0x9e3779b97f4a7c15))
	return int((h >> 32) * uint64(n) >> 32)
}

// mix is the splitmix64 finalizer: it spreads consecutive inputs (seeds 1, 2, 3) over all 64 bits.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
