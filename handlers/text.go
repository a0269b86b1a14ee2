package handlers

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// maxMultipartMemory is how much of a multipart body the text check holds in memory before its files spill
// to disk; the generated decoder reuses the form the check parsed.
const maxMultipartMemory = 32 << 20

// maxJSONDepth bounds how deeply the text check follows nested JSON: far deeper than any body of the
// contract, and a bound on the scan's recursion.
const maxJSONDepth = 512

// RefuseInvalidText answers 400 invalid_text, naming the field, when any text of a request holds a NUL
// character or bytes that are not UTF-8: header values, the URL path and query, JSON bodies (every string and
// key, at any depth) and form bodies. Postgres stores neither, so without this check such input reaches a
// query and fails there as a 500. It runs before routing, behind the body size limit; a body it reads is
// handed on intact. Multipart bodies are RefuseInvalidMultipartText's.
func RefuseInvalidText(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkRequestText(r); err != nil {
			apierror.Write(w, r, logger, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// RefuseInvalidMultipartText checks the text fields of a multipart body (uploaded files are content and are
// not checked) as RefuseInvalidText checks the rest. Parsing a multipart body may spill it to disk, so the
// credential layer runs it only for requests whose credential it admitted: an anonymous upload is refused
// by the API's security check without being read.
func RefuseInvalidMultipartText(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := checkMultipartText(r)
		if r.MultipartForm != nil {
			defer func() { _ = r.MultipartForm.RemoveAll() }()
		}
		if err != nil {
			apierror.Write(w, r, logger, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkMultipartText parses a multipart body into r (the generated decoders reuse the parsed form) and checks
// its text fields; other bodies pass untouched.
func checkMultipartText(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "multipart/form-data" {
		return nil
	}
	if err := r.ParseMultipartForm(maxMultipartMemory); err != nil {
		return DecodeError(err)
	}
	return checkForm("form field", r.MultipartForm.Value)
}

// checkRequestText checks every text part of r but a multipart body's; it leaves a JSON body readable again
// and a form body parsed into r (the generated decoders reuse the parsed form).
func checkRequestText(r *http.Request) error {
	for _, name := range sortedKeys(r.Header) {
		for _, v := range r.Header[name] {
			if bad := textFault(v); bad != "" {
				return invalidText("The "+name+" header", bad)
			}
		}
	}
	for i, seg := range strings.Split(r.URL.Path, "/") {
		if bad := textFault(seg); bad != "" {
			// Routing has not happened yet, so the parameter is named by its place in the path.
			return invalidText(fmt.Sprintf("The URL path segment %d (%s)", i, quoteShort(seg)), bad)
		}
	}
	if err := checkValues("query parameter", r.URL.RawQuery); err != nil {
		return err
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return DecodeError(err)
		}
		return checkJSONText(body)
	case ct == "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return DecodeError(err)
		}
		return checkForm("form field", r.PostForm)
	}
	return nil
}

// checkValues checks a raw query string: each name and each value once percent-decoded. A malformed query is
// left to the decoder, which names it.
func checkValues(kind, raw string) error {
	if raw == "" {
		return nil
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		return nil
	}
	return checkForm(kind, values)
}

// checkForm checks the names and values of a parsed form or query, in name order so the answer is stable.
func checkForm(kind string, values map[string][]string) error {
	for _, name := range sortedKeys(values) {
		if bad := textFault(name); bad != "" {
			return invalidText("A "+kind+" name", bad)
		}
		for _, v := range values[name] {
			if bad := textFault(v); bad != "" {
				return invalidText(fmt.Sprintf("The %s %s", kind, name), bad)
			}
		}
	}
	return nil
}

// quoteShort quotes s for a message, escaping what is not printable and cutting it at 40 bytes.
func quoteShort(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "..."
	}
	return strconv.Quote(s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// textFault says what makes s unstorable text ("" when nothing does).
func textFault(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return faultNUL
	}
	if !utf8.ValidString(s) {
		return faultUTF8
	}
	return ""
}

const (
	faultNUL  = "contains a NUL character (U+0000)"
	faultUTF8 = "is not valid UTF-8 text"
)

// invalidText is the one answer for unstorable text; what names the field.
func invalidText(what, fault string) error {
	return apierror.BadRequest("invalid_text", what+" "+fault+"; text must be UTF-8 without NUL characters.")
}

// checkJSONText scans a JSON body for strings (values and keys) holding NUL (raw or as \u0000), a lone
// surrogate escape or bytes that are not UTF-8, and names the first one by its path (steps[0].subject). A
// body that is not JSON is left to the decoder, which names the syntax error.
func checkJSONText(body []byte) error {
	s := jsonScanner{b: body}
	s.value(0)
	if s.fault == "" {
		return nil
	}
	if s.fault == faultDepth {
		return apierror.BadRequest("invalid_body", fmt.Sprintf("The request body nests deeper than %d levels.", maxJSONDepth))
	}
	return invalidText(describePath(s.path, s.inKey), s.fault)
}

const faultDepth = "nests too deeply"

// describePath names a body field for a message: "The body field steps[0].subject".
func describePath(path []pathSeg, inKey bool) string {
	p := renderPath(path)
	switch {
	case inKey && p == "":
		return "A field name of the request body"
	case inKey:
		return "A field name in the body field " + p
	case p == "":
		return "The request body"
	}
	return "The body field " + p
}

// pathSeg is one step into a JSON document: an object key or an array index.
type pathSeg struct {
	key   string
	index int
	isIdx bool
}

// renderPath writes a path the way people read it: steps[0].subject.
func renderPath(path []pathSeg) string {
	var b strings.Builder
	for _, seg := range path {
		if seg.isIdx {
			b.WriteString("[" + strconv.Itoa(seg.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg.key)
	}
	return b.String()
}

// jsonScanner walks JSON bytes, keeping the path of the value it is in. It stops at the first string it
// refuses (fault, path) or at the first syntax error (stop without fault: the decoder reports those).
// visitor, when set, sees every value as it ends, with its path and byte range.
type jsonScanner struct {
	b       []byte
	i       int
	path    []pathSeg
	inKey   bool
	fault   string
	stop    bool
	visitor func(path []pathSeg, start, end int)
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// value scans one JSON value at the current position.
func (s *jsonScanner) value(depth int) {
	if depth > maxJSONDepth {
		s.fault, s.stop = faultDepth, true
		return
	}
	s.ws()
	if s.i >= len(s.b) {
		s.stop = true
		return
	}
	start := s.i
	switch s.b[s.i] {
	case '{':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			break
		}
		for !s.stop {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				s.stop = true
				return
			}
			s.inKey = true
			key := s.str()
			if s.stop {
				return
			}
			s.inKey = false
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				s.stop = true
				return
			}
			s.i++
			s.path = append(s.path, pathSeg{key: key})
			s.value(depth + 1)
			if s.stop {
				return
			}
			s.path = s.path[:len(s.path)-1]
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == '}' {
				s.i++
				break
			}
			s.stop = true
			return
		}
	case '[':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			break
		}
		for n := 0; !s.stop; n++ {
			s.path = append(s.path, pathSeg{index: n, isIdx: true})
			s.value(depth + 1)
			if s.stop {
				return
			}
			s.path = s.path[:len(s.path)-1]
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == ']' {
				s.i++
				break
			}
			s.stop = true
			return
		}
	case '"':
		s.str()
	default:
		for s.i < len(s.b) && !strings.ContainsRune(",]} \t\r\n", rune(s.b[s.i])) {
			s.i++
		}
	}
	if s.stop {
		return
	}
	if s.visitor != nil {
		s.visitor(s.path, start, s.i)
	}
}

// str scans a string starting at its opening quote and returns its raw text (escapes left as written, which is
// enough to name a key). A refused character sets fault and stops the scan.
func (s *jsonScanner) str() string {
	s.i++ // opening quote
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			text := string(s.b[start:s.i])
			s.i++
			return text
		case c == 0:
			s.fault, s.stop = faultNUL, true
			return ""
		case c == '\\':
			if s.i+1 >= len(s.b) {
				s.stop = true
				return ""
			}
			if s.b[s.i+1] != 'u' {
				s.i += 2
				continue
			}
			r, ok := s.hex4(s.i + 2)
			if !ok {
				s.stop = true
				return ""
			}
			s.i += 6
			switch {
			case r == 0:
				s.fault, s.stop = faultNUL, true
				return ""
			case r >= 0xD800 && r < 0xDC00:
				low, ok := rune(0), false
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					low, ok = s.hex4(s.i + 2)
				}
				if !ok || low < 0xDC00 || low > 0xDFFF {
					s.fault, s.stop = faultUTF8, true
					return ""
				}
				s.i += 6
			case r >= 0xDC00 && r <= 0xDFFF:
				s.fault, s.stop = faultUTF8, true
				return ""
			}
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				s.fault, s.stop = faultUTF8, true
				return ""
			}
			s.i += size
		}
	}
	s.stop = true
	return ""
}

// hex4 reads the four hex digits of a \u escape at offset at.
func (s *jsonScanner) hex4(at int) (rune, bool) {
	if at+4 > len(s.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.b[at:at+4]), 16, 32)
	return rune(v), err == nil
}

// pathAtOffset names the innermost value of a JSON body that holds byte offset at ("" when none does, or
// the body cannot be followed that far); the decoder's syntax errors carry such offsets.
func pathAtOffset(body []byte, at int) string {
	found, done := "", false
	s := jsonScanner{b: body, visitor: func(path []pathSeg, start, end int) {
		// Values are visited as they end, so the first that holds the offset is the innermost.
		if !done && start <= at && at < end {
			found, done = renderPath(path), true
		}
	}}
	s.value(0)
	return found
}

// pathsMatching lists the paths of a JSON body's values whose keys, indices ignored, are names; with each
// its raw text. The decoder names the fields of a failure but not the array indices on the way.
func pathsMatching(body []byte, names []string) (paths []string, raws [][]byte) {
	s := jsonScanner{b: body}
	s.visitor = func(path []pathSeg, start, end int) {
		n := 0
		for _, seg := range path {
			if seg.isIdx {
				continue
			}
			if n >= len(names) || names[n] != seg.key {
				return
			}
			n++
		}
		if n == len(names) {
			paths = append(paths, renderPath(path))
			raws = append(raws, body[start:end])
		}
	}
	s.value(0)
	return paths, raws
}
