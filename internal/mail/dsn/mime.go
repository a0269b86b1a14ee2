package dsn

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
)

// part is one leaf MIME part, its body decoded from its transfer encoding.
type part struct {
	mediaType string
	depth     int // 1 for a child of the top-level multipart
	body      []byte
}

// walked is a message's structure: its top-level type and its leaf parts in order. Parts inside a
// message/rfc822 part are never walked (the invariant that a forwarded report does not count).
type walked struct {
	mediaType string
	parts     []part
}

// walk reads a message's MIME tree within the package's bounds. A part that breaks ends the walk with what
// was read before it.
func walk(msg *mail.Message) walked {
	mediaType, params := contentType(msg.Header.Get("Content-Type"))
	w := walked{mediaType: mediaType}
	body := msg.Body
	if !strings.HasPrefix(mediaType, "multipart/") {
		b, _ := io.ReadAll(body)
		w.parts = append(w.parts, part{mediaType: mediaType, depth: 0,
			body: decode(b, msg.Header.Get("Content-Transfer-Encoding"))})
		return w
	}
	w.multipart(body, params["boundary"], 1)
	return w
}

func (w *walked) multipart(r io.Reader, boundary string, depth int) {
	if boundary == "" || depth > maxDepth {
		return
	}
	mr := multipart.NewReader(r, boundary)
	for len(w.parts) < maxParts {
		p, err := mr.NextPart() // decodes quoted-printable itself
		if err != nil {
			return
		}
		mediaType, params := contentType(p.Header.Get("Content-Type"))
		if strings.HasPrefix(mediaType, "multipart/") {
			w.multipart(p, params["boundary"], depth+1)
			continue
		}
		b, err := io.ReadAll(p)
		if err != nil && len(b) == 0 {
			return
		}
		w.parts = append(w.parts, part{mediaType: mediaType, depth: depth,
			body: decode(b, p.Header.Get("Content-Transfer-Encoding"))})
		if err != nil {
			return
		}
	}
}

// contentType parses a Content-Type header; a missing or unreadable one is text/plain (RFC 2045 default).
func contentType(v string) (string, map[string]string) {
	mediaType, params, err := mime.ParseMediaType(v)
	if err != nil || mediaType == "" {
		return "text/plain", map[string]string{}
	}
	return mediaType, params
}

// decode undoes a transfer encoding. multipart.Reader has already removed quoted-printable from parts (and
// the header with it); the top-level body still carries it. An undecodable body is kept as it is.
func decode(b []byte, encoding string) []byte {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "base64":
		clean := bytes.Map(func(r rune) rune {
			if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, b)
		out, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(string(clean), "="))
		if err != nil {
			return b
		}
		return out
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(b)))
		if err != nil && len(out) == 0 {
			return b
		}
		return out
	}
	return b
}

var tagRe = regexp.MustCompile(`(?s)<[^>]*>`)

// text is the message's own readable text: its text/plain parts, or its HTML parts stripped of tags when it
// has no plain text. Returned messages are not included.
func (w walked) text() string {
	var plain, html strings.Builder
	for _, p := range w.parts {
		switch p.mediaType {
		case "text/plain":
			plain.Write(p.body)
			plain.WriteByte('\n')
		case "text/html":
			html.WriteString(tagRe.ReplaceAllString(string(p.body), "\n"))
			html.WriteByte('\n')
		}
	}
	if plain.Len() > 0 {
		return strings.ReplaceAll(plain.String(), "\r\n", "\n")
	}
	return strings.ReplaceAll(html.String(), "\r\n", "\n")
}

// readFields reads one block of header-style fields (a delivery-status group, a feedback report, returned
// headers). Unreadable trailing lines are ignored; what was read before them is kept.
func readFields(block string) textproto.MIMEHeader {
	block = strings.TrimLeft(strings.ReplaceAll(block, "\r\n", "\n"), "\n")
	h, _ := textproto.NewReader(bufioReader(block + "\n\n")).ReadMIMEHeader()
	return h
}

// original reads the returned message's headers from a message/rfc822 or text/rfc822-headers body.
func original(body []byte) Original {
	h := readFields(string(body))
	o := Original{
		MessageID: trimID(h.Get("Message-Id")),
		InReplyTo: trimID(h.Get("In-Reply-To")),
		From:      firstAddress(h.Get("From")),
		Subject:   decodeHeader(h.Get("Subject")),
	}
	for _, f := range strings.Fields(h.Get("References")) {
		if id := trimID(f); id != "" {
			o.References = append(o.References, id)
		}
	}
	if list, err := mail.ParseAddressList(h.Get("To")); err == nil {
		for _, a := range list {
			o.To = append(o.To, strings.ToLower(a.Address))
		}
	}
	return o
}

func trimID(v string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "<>"))
}

func firstAddress(v string) string {
	if a, err := mail.ParseAddress(v); err == nil {
		return strings.ToLower(a.Address)
	}
	return strings.ToLower(strings.Trim(strings.TrimSpace(v), "<>"))
}

var wordDecoder = mime.WordDecoder{}

func decodeHeader(v string) string {
	if d, err := wordDecoder.DecodeHeader(v); err == nil {
		return d
	}
	return v
}
