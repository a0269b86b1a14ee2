package dsn

import (
	"net/mail"
	"regexp"
	"strings"
)

// daemonLocals are the local parts mail software sends bounces from.
var daemonLocals = map[string]bool{
	"mailer-daemon": true, "mailer_daemon": true, "mailerdaemon": true, "postmaster": true,
	"mail-daemon": true, "mdaemon": true,
}

// fromSoftware reports whether a message was sent by mail software rather than a person: a daemon sender,
// an empty Return-Path (RFC 5321 requires one on bounces) or an Auto-Submitted header other than "no".
func fromSoftware(h mail.Header) bool {
	from := firstAddress(h.Get("From"))
	local, _, _ := strings.Cut(from, "@")
	if daemonLocals[local] || strings.HasPrefix(local, "microsoftexchange") {
		return true
	}
	if strings.TrimSpace(h.Get("Return-Path")) == "<>" {
		return true
	}
	as := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted")))
	return as != "" && as != "no"
}

const addr = `<?([A-Za-z0-9._%+'=&/-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})>?`

// recipientRes find the failed recipient in the phrasings servers use; the first that matches wins.
var recipientRes = []*regexp.Regexp{
	// Exim: "The following address(es) failed:\n\n  bob@example.net\n    host ... said: 550 ..."
	regexp.MustCompile(`(?i)following address(?:\(es\))? failed:\s*\n\s*` + addr),
	// Gmail: "Delivery to the following recipient failed permanently:\n\n     bob@example.net"
	regexp.MustCompile(`(?i)delivery to the following recipients? (?:failed|has been delayed)[a-z ]*:\s*\n\s*` + addr),
	// Exchange: "Delivery has failed to these recipients or groups:\n\nBob (bob@example.net)"
	regexp.MustCompile(`(?i)delivery has failed to these recipients or groups:\s*\n\s*[^\n]*?` + addr),
	regexp.MustCompile(`(?i)your message to ` + addr + ` couldn't be delivered`),
	// Postfix text part and qmail: "<bob@example.net>: host mx.example.net said: 550 ..."
	regexp.MustCompile(`(?m)^\s*<([A-Za-z0-9._%+'=&/-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})>:`),
	// Inline delivery-status fields some servers put in the text
	regexp.MustCompile(`(?im)^\s*final-recipient:\s*rfc822;\s*` + addr),
	// Sendmail-style and others: "... could not be delivered to: bob@example.net" / "550 ... user unknown"
	regexp.MustCompile(`(?i)(?:could not be delivered to|undeliverable to|failed recipient)s?:?\s*\n?\s*` + addr),
}

// originalMarkers start the returned message in text forms; nothing after one is evidence of failure.
var originalMarkers = []string{
	"------ This is a copy of the message",         // Exim
	"--- Below this line is a copy of the message", // qmail
	"----- Original message -----",                 // Gmail
	"Original message headers:",                    // Exchange
	"----- Original Message -----",
	"------- Returned message",
}

// fromText reads a bounce written as text. It demands all of: mail software as sender, a failed recipient
// named in a known phrasing, and an SMTP or enhanced status code in the message's own text.
func fromText(r *Report, h mail.Header, m walked) bool {
	if !fromSoftware(h) {
		return false
	}
	text := m.text()
	own, returned := splitReturned(text)
	own = unquoted(own)
	var rcpt string
	at := -1
	for _, re := range recipientRes {
		if loc := re.FindStringSubmatchIndex(own); loc != nil {
			rcpt, at = strings.ToLower(own[loc[2]:loc[3]]), loc[1]
			break
		}
	}
	if rcpt == "" || rcpt == firstAddress(h.Get("From")) {
		return false
	}
	// the code that counts is the first after the recipient, else the first anywhere in the own text
	line, code, enhanced := codeLine(own[at:])
	if code == 0 && enhanced == "" {
		line, code, enhanced = codeLine(own)
	}
	if code == 0 && enhanced == "" {
		return false
	}
	rc := Recipient{Address: rcpt, Action: "failed", Status: enhanced, SMTPCode: code, Diagnostic: bound(line)}
	if strings.HasPrefix(enhanced, "4.") || (enhanced == "" && code < 500) {
		// a text notice with a temporary code is a delay report ("still being retried"), not a failure
		if delayRe.MatchString(own) {
			rc.Action = "delayed"
		}
	}
	rc.Severity, rc.Rule = classify(rc.Action, rc.Status, rc.SMTPCode)
	rc.Reason = reason(rc.Status, rc.SMTPCode)
	r.Recipients = []Recipient{rc}
	r.Kind = KindBounce
	if rc.Action == "delayed" {
		r.Kind = KindDelay
	}
	r.Original = originalFromText(returned, m)
	return true
}

// codeLine finds the first line carrying an SMTP or enhanced status code, with the codes.
func codeLine(s string) (string, int, string) {
	for line := range strings.Lines(s) {
		if code, enhanced := codes(line); code != 0 || enhanced != "" {
			return strings.TrimSpace(line), code, enhanced
		}
	}
	return "", 0, ""
}

// splitReturned cuts a text bounce at the first marker of the returned message.
func splitReturned(text string) (string, string) {
	cut := len(text)
	for _, mk := range originalMarkers {
		if i := strings.Index(text, mk); i >= 0 && i < cut {
			cut = i
		}
	}
	return text[:cut], text[cut:]
}

// unquoted drops quoted lines, so a bounce quoted in a message is no evidence.
func unquoted(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(strings.TrimLeft(line, " \t"), ">") {
			b.WriteString(line)
		}
	}
	return b.String()
}

var delayRe = regexp.MustCompile(`(?i)will (?:continue to |keep |be )?retr|still being retried|has been delayed`)

var headerStartRe = regexp.MustCompile(`(?im)^([ \t]*)(?:return-path|received|message-id|from|to|subject|date|mime-version|delivered-to):`)

// originalFromText reads the returned message's headers: from an attached message/rfc822 or
// text/rfc822-headers part when there is one, else from the first header block in the returned text,
// indented or not (Exim and Exchange indent it, qmail and Gmail do not).
func originalFromText(returned string, m walked) Original {
	for _, p := range m.parts {
		if p.mediaType == "message/rfc822" || p.mediaType == "text/rfc822-headers" {
			if o := original(p.body); o.MessageID != "" {
				return o
			}
		}
	}
	for _, loc := range headerStartRe.FindAllStringSubmatchIndex(returned, 8) {
		indent := returned[loc[2]:loc[3]]
		var block strings.Builder
		for line := range strings.Lines(returned[loc[0]:]) {
			line = strings.TrimRight(line, "\r\n")
			if strings.TrimSpace(line) == "" {
				break
			}
			block.WriteString(strings.TrimPrefix(line, indent))
			block.WriteByte('\n')
		}
		if o := original([]byte(block.String())); o.MessageID != "" {
			return o
		}
	}
	return Original{}
}
