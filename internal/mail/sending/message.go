package sending

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// MessageID is a task's Message-ID, without angle brackets: derived from the task id and the sender's domain
// only, so every attempt of one task writes the same one and a reply can always be matched to its task.
func MessageID(task uuid.UUID, senderEmail string) string {
	domain := "outflow.invalid"
	if _, d, ok := strings.Cut(senderEmail, "@"); ok && d != "" {
		domain = d
	}
	return task.String() + "@" + domain
}

// FromAddress is the address a mailbox's mail goes out as: its verified send-as alias when one is chosen.
// Composing a campaign message shows it as the sender, so a preview names the address the pipeline uses.
func FromAddress(m dbq.Mailbox) string {
	if m.SendAsEmail != "" {
		return m.SendAsEmail
	}
	return m.Email
}

// build renders a task as the RFC 5322 message handed to SMTP: multipart/alternative when it has both a plain
// and an HTML body, the mailbox's signature appended when signature_sync is on (never to warmup mail), and
// multipart/mixed around that with one part per file when the task carries attachments.
func build(t dbq.SendTask, m dbq.Mailbox, now time.Time, files []dbq.SendTaskAttachmentsRow) ([]byte, error) {
	var h mail.Header
	h.SetDate(now)
	h.SetAddressList("From", []*mail.Address{{Name: t.FromName, Address: t.FromEmail}})
	h.SetAddressList("To", addresses(t.ToList))
	if len(t.Cc) > 0 {
		h.SetAddressList("Cc", addresses(t.Cc))
	}
	if replyTo := cmp.Or(t.ReplyTo, m.ReplyTo); replyTo != "" {
		h.SetAddressList("Reply-To", addresses([]string{replyTo}))
	}
	h.SetSubject(t.Subject)
	h.SetMessageID(strings.Trim(t.MessageID, "<>"))
	if t.InReplyTo != "" {
		h.SetMsgIDList("In-Reply-To", []string{strings.Trim(t.InReplyTo, "<>")})
	}
	if len(t.ThreadReferences) > 0 {
		refs := make([]string, len(t.ThreadReferences))
		for i, r := range t.ThreadReferences {
			refs[i] = strings.Trim(r, "<>")
		}
		h.SetMsgIDList("References", refs)
	}
	listUnsubscribe(&h, t)
	text, htmlBody := t.BodyText, t.BodyHtml
	if m.SignatureSync && t.Kind != "warmup" && !t.Signed {
		text, htmlBody = withSignature(text, htmlBody, m)
	}

	parts := []struct{ contentType, body string }{}
	if text != "" || htmlBody == "" {
		parts = append(parts, struct{ contentType, body string }{"text/plain", text})
	}
	if htmlBody != "" {
		parts = append(parts, struct{ contentType, body string }{"text/html", htmlBody})
	}
	var buf bytes.Buffer
	if len(files) == 0 {
		if len(parts) == 1 {
			h.Set("Content-Type", parts[0].contentType+"; charset=utf-8")
			w, err := mail.CreateSingleInlineWriter(&buf, h)
			if err != nil {
				return nil, fmt.Errorf("sending: build: %w", err)
			}
			if _, err := io.WriteString(w, parts[0].body); err != nil {
				return nil, err
			}
			if err := w.Close(); err != nil {
				return nil, err
			}
			return buf.Bytes(), nil
		}
		iw, err := mail.CreateInlineWriter(&buf, h)
		if err != nil {
			return nil, fmt.Errorf("sending: build: %w", err)
		}
		if err := writeParts(iw, parts); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	mw, err := mail.CreateWriter(&buf, h)
	if err != nil {
		return nil, fmt.Errorf("sending: build: %w", err)
	}
	iw, err := mw.CreateInline()
	if err != nil {
		return nil, err
	}
	if err := writeParts(iw, parts); err != nil {
		return nil, err
	}
	for _, f := range files {
		var ah mail.AttachmentHeader
		ah.Set("Content-Type", f.MimeType)
		ah.SetFilename(f.Filename)
		w, err := mw.CreateAttachment(ah)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.Content); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// listUnsubscribe adds a campaign send's unsubscribe headers when the task has an unsubscribe URL: its page
// and a mailto of the sending address (RFC 2369), and the one-click marker when the page is https (RFC 8058
// requires an https URI for it).
func listUnsubscribe(h *mail.Header, t dbq.SendTask) {
	if t.UnsubscribeUrl == "" {
		return
	}
	h.Set("List-Unsubscribe", "<"+t.UnsubscribeUrl+">, <mailto:"+t.FromEmail+"?subject=unsubscribe>")
	if strings.HasPrefix(t.UnsubscribeUrl, "https://") {
		h.Set("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
	}
}

// writeParts writes the message's bodies as the parts of a multipart/alternative and closes it.
func writeParts(iw *mail.InlineWriter, parts []struct{ contentType, body string }) error {
	for _, p := range parts {
		var ph mail.InlineHeader
		ph.Set("Content-Type", p.contentType+"; charset=utf-8")
		w, err := iw.CreatePart(ph)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, p.body); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return iw.Close()
}

// withSignature appends the mailbox's signature to each body that exists: the plain one after the usual
// "-- " line, the HTML one as stored (written in the editor or, with signature_code, by hand), or the plain
// one escaped when there is no HTML signature.
func withSignature(text, htmlBody string, m dbq.Mailbox) (string, string) {
	if text != "" && m.SignaturePlain != "" {
		text += "\r\n\r\n-- \r\n" + m.SignaturePlain
	}
	if htmlBody != "" {
		switch {
		case m.SignatureHtml != "":
			htmlBody += "<br><br>" + m.SignatureHtml
		case m.SignaturePlain != "":
			htmlBody += "<br><br>" + strings.ReplaceAll(html.EscapeString(m.SignaturePlain), "\n", "<br>")
		}
	}
	return text, htmlBody
}

func addresses(list []string) []*mail.Address {
	out := make([]*mail.Address, len(list))
	for i, a := range list {
		out[i] = &mail.Address{Address: a}
	}
	return out
}
