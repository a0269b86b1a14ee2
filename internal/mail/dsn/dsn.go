package dsn

import (
	"bytes"
	"net/mail"
	"strings"
)

// MaxBytes is how much of a message Parse reads. Reports put their machine-readable parts and the returned
// headers first; a returned message's body is never needed, so a large attachment cannot make parsing costly.
const MaxBytes = 256 << 10

const (
	maxParts      = 32  // MIME parts walked per message; real reports have three to six
	maxDepth      = 4   // multipart nesting; a report's text is at most multipart/related in multipart/alternative
	maxRecipients = 50  // recipients kept per report; one send task has one recipient
	maxDiagnostic = 512 // bytes of diagnostic text kept, enough for a full SMTP reply line
)

// Kind says what a report tells the sender, because a caller acts differently on each: a bounce ends (hard)
// or retries (soft) the send, a delay only informs, a complaint suppresses the address.
type Kind string

// The kinds of report Parse recognises.
const (
	KindBounce    Kind = "bounce"
	KindDelay     Kind = "delay"
	KindComplaint Kind = "complaint"
)

// Severity is whether retrying the same recipient can succeed: hard means no (stop the lead, suppress), soft
// means it may (retry within the attempt limit).
type Severity string

// The severities of a failed or delayed recipient.
const (
	Hard Severity = "hard"
	Soft Severity = "soft"
)

// Shape names the format a report was recognised in, stored as evidence so a misread can be traced to the
// server style that produced it.
type Shape string

// The shapes Parse recognises. A server style (postfix, exim, exchange, gmail) is named whenever its markers
// are present, whether its content was read from a standard report part or from text; Report.Structured says
// which. rfc3464 is a standard report from an unrecognised server, nonstandard a text bounce from one.
const (
	ShapeRFC3464     Shape = "rfc3464"
	ShapePostfix     Shape = "postfix"
	ShapeExim        Shape = "exim"
	ShapeExchange    Shape = "exchange"
	ShapeGmail       Shape = "gmail"
	ShapeNonstandard Shape = "nonstandard"
	ShapeARF         Shape = "arf"
)

// Report is what a bounce, delay or complaint says, with the evidence that decided it.
type Report struct {
	Kind  Kind
	Shape Shape
	// Structured is true when the content came from a machine-readable part (message/delivery-status or
	// message/feedback-report) rather than from matching text.
	Structured bool
	// Subject and From are the report's own, kept for the timeline.
	Subject string
	From    string
	// Recipients lists the failed or delayed recipients (bounce, delay) or the complained-about recipient
	// (complaint), in report order.
	Recipients []Recipient
	// Feedback holds the ARF fields of a complaint; nil otherwise.
	Feedback *Feedback
	// Original holds the headers of the returned message, the caller's key to the send task.
	Original Original
}

// Recipient is one recipient's outcome as the report states it.
type Recipient struct {
	Address         string // Final-Recipient, or the address the text names
	OriginalAddress string // Original-Recipient when given
	Action          string // failed or delayed (text forms: failed)
	Severity        Severity
	Status          string // enhanced status code, e.g. 5.1.1; empty when none was given
	SMTPCode        int    // basic SMTP reply code, e.g. 550; 0 when none was given
	Diagnostic      string // Diagnostic-Code or the text line with the code, at most maxDiagnostic bytes
	RemoteMTA       string
	Rule            string // the rule that decided Severity (see classify)
	Reason          string // reason class: unknown_user, bad_domain, mailbox_full, policy, ...
}

// Feedback is the machine-readable part of an RFC 5965 feedback report.
type Feedback struct {
	Type             string // abuse, fraud, virus, other, ...
	UserAgent        string
	Version          string
	OriginalMailFrom string
	OriginalRcptTo   string
	ArrivalDate      string
	ReportedDomain   string
	SourceIP         string
}

// Original is the returned message's headers. Message IDs are kept without angle brackets.
type Original struct {
	MessageID  string
	InReplyTo  string
	References []string
	From       string
	To         []string
	Subject    string
}

// Failed reports whether any recipient failed permanently, the case a caller stops the lead for.
func (r Report) Failed() bool {
	for _, rc := range r.Recipients {
		if rc.Action == "failed" && rc.Severity == Hard {
			return true
		}
	}
	return false
}

// Parse recognises a bounce, delay or complaint report in raw message bytes. It answers a bool rather than
// an error because almost every message a mailbox receives is not a report and that is not a failure; a
// malformed message is simply not a report, or the report read up to where it breaks.
func Parse(raw []byte) (Report, bool) {
	if len(raw) > MaxBytes {
		raw = raw[:MaxBytes]
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Report{}, false
	}
	m := walk(msg)
	r := Report{Subject: decodeHeader(msg.Header.Get("Subject")), From: firstAddress(msg.Header.Get("From"))}
	ok := false
	if m.mediaType == "multipart/report" {
		ok = fromReport(&r, m)
	}
	if !ok && m.mediaType != "multipart/report" {
		ok = fromText(&r, msg.Header, m)
	}
	if !ok {
		return Report{}, false
	}
	if r.Shape == "" {
		r.Shape = shapeOf(msg.Header, m.text())
	}
	if r.Shape == "" && r.Structured {
		r.Shape = ShapeRFC3464
	} else if r.Shape == "" {
		r.Shape = ShapeNonstandard
	}
	return r, true
}

// shapeOf names the server style by its markers, or nothing when none is present (Parse then names the
// report rfc3464 when structured and nonstandard when read from text).
func shapeOf(h mail.Header, text string) Shape {
	subject := strings.ToLower(decodeHeader(h.Get("Subject")))
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-ms-exchange-") {
			return ShapeExchange
		}
	}
	switch {
	case strings.HasPrefix(subject, "undeliverable:"):
		return ShapeExchange
	case strings.HasPrefix(subject, "delivery status notification"):
		return ShapeGmail
	case strings.HasPrefix(subject, "undelivered mail returned to sender"),
		strings.HasPrefix(subject, "delayed mail (still being retried)"),
		strings.Contains(text, "This is the mail system at host"):
		return ShapePostfix
	case strings.HasPrefix(subject, "mail delivery failed"),
		strings.Contains(text, "This message was created automatically by mail delivery software"):
		return ShapeExim
	}
	return ""
}
