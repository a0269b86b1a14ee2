package dsn

import (
	"bufio"
	"cmp"
	"regexp"
	"strings"
)

// fromReport reads a multipart/report: a delivery-status part makes a bounce or delay when a recipient
// failed or was delayed, a feedback-report part with a Feedback-Type makes a complaint. It fills r and
// reports whether the message is one of them.
func fromReport(r *Report, m walked) bool {
	for _, p := range m.parts {
		if p.depth != 1 {
			continue
		}
		switch p.mediaType {
		case "message/rfc822", "text/rfc822-headers", "message/rfc822-headers":
			if r.Original.MessageID == "" {
				r.Original = original(p.body)
			}
		case "message/delivery-status", "message/global-delivery-status":
			if r.Recipients == nil {
				r.Recipients = deliveryStatus(string(p.body))
			}
		case "message/feedback-report":
			if r.Feedback == nil {
				r.Feedback = feedback(string(p.body))
			}
		}
	}
	r.Structured = true
	if r.Feedback != nil {
		r.Kind, r.Shape = KindComplaint, ShapeARF
		r.Recipients = nil
		to := r.Feedback.OriginalRcptTo
		if to == "" && len(r.Original.To) > 0 {
			to = r.Original.To[0]
		}
		if to != "" {
			r.Recipients = []Recipient{{Address: to}}
		}
		return true
	}
	r.Kind = KindDelay
	for _, rc := range r.Recipients {
		if rc.Action == "failed" {
			r.Kind = KindBounce
		}
	}
	return len(r.Recipients) > 0
}

// deliveryStatus reads an RFC 3464 message/delivery-status body: groups of fields separated by blank lines,
// the first per-message, each further one per recipient. Only failed and delayed recipients are kept; a
// delivered, relayed or expanded recipient is a success the sender asked to hear about, not a bounce.
func deliveryStatus(body string) []Recipient {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	var out []Recipient
	for _, group := range strings.Split(body, "\n\n") {
		h := readFields(group)
		if h == nil || (h.Get("Final-Recipient") == "" && h.Get("Original-Recipient") == "" && h.Get("Action") == "") {
			continue
		}
		action := strings.ToLower(strings.TrimSpace(h.Get("Action")))
		if action != "failed" && action != "delayed" {
			continue
		}
		rc := Recipient{
			Address:         typedValue(h.Get("Final-Recipient")),
			OriginalAddress: typedValue(h.Get("Original-Recipient")),
			Action:          action,
			RemoteMTA:       typedValue(h.Get("Remote-MTA")),
			Diagnostic:      bound(typedValue(h.Get("Diagnostic-Code"))),
		}
		if rc.Address == "" {
			rc.Address = rc.OriginalAddress
		}
		rc.Status = findStatus(h.Get("Status"))
		code, enhanced := codes(rc.Diagnostic)
		rc.SMTPCode = code
		if rc.Status == "" || strings.HasSuffix(rc.Status, ".0.0") && strings.HasPrefix(enhanced, rc.Status[:1]) {
			// a generic x.0.0 Status says less than the remote server's own enhanced code
			rc.Status = cmp.Or(enhanced, rc.Status)
		}
		rc.Severity, rc.Rule = classify(action, rc.Status, rc.SMTPCode)
		rc.Reason = reason(rc.Status, rc.SMTPCode)
		out = append(out, rc)
		if len(out) == maxRecipients {
			break
		}
	}
	return out
}

// feedback reads an RFC 5965 message/feedback-report body; without a Feedback-Type it is not a report.
func feedback(body string) *Feedback {
	h := readFields(body)
	if h == nil || strings.TrimSpace(h.Get("Feedback-Type")) == "" {
		return nil
	}
	return &Feedback{
		Type:             strings.ToLower(strings.TrimSpace(h.Get("Feedback-Type"))),
		UserAgent:        h.Get("User-Agent"),
		Version:          h.Get("Version"),
		OriginalMailFrom: strings.ToLower(strings.Trim(h.Get("Original-Mail-From"), "<> ")),
		OriginalRcptTo:   strings.ToLower(strings.Trim(h.Get("Original-Rcpt-To"), "<> ")),
		ArrivalDate:      h.Get("Arrival-Date"),
		ReportedDomain:   h.Get("Reported-Domain"),
		SourceIP:         h.Get("Source-IP"),
	}
}

// typedValue strips the type of an RFC 3464 typed field ("rfc822; a@example.net", "smtp; 550 ...", "dns;
// mx.example.net") and angle brackets around an address.
func typedValue(v string) string {
	v = strings.TrimSpace(v)
	if t, rest, ok := strings.Cut(v, ";"); ok && !strings.ContainsAny(t, " <@") {
		v = strings.TrimSpace(rest)
	}
	if strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">") {
		v = v[1 : len(v)-1]
	}
	if strings.Contains(v, "@") && !strings.Contains(v, " ") {
		v = strings.ToLower(v)
	}
	return v
}

var (
	// statusRe finds enhanced status code candidates; findStatus keeps those that stand on their own.
	statusRe = regexp.MustCompile(`[245]\.[0-9]{1,3}\.[0-9]{1,3}`)
	// smtpRe finds a basic reply code as SMTP writes it: three digits then a space, a hyphen (continuation
	// line) or the end, optionally followed by the enhanced code ("550 5.1.1", "552-5.2.2", "550 #5.1.0").
	smtpRe = regexp.MustCompile(`(?:^|[\s:;(\[])([45][0-9]{2})(?:[ -]#?([45]\.[0-9]{1,3}\.[0-9]{1,3}))?(?:[ -]|$)`)
)

// codes finds the basic SMTP code and the enhanced status code in a diagnostic text.
func codes(s string) (int, string) {
	code, enhanced := 0, ""
	if m := smtpRe.FindStringSubmatch(s); m != nil {
		code = int(m[1][0]-'0')*100 + int(m[1][1]-'0')*10 + int(m[1][2]-'0')
		enhanced = m[2]
	}
	if enhanced == "" {
		enhanced = findStatus(s)
	}
	return code, enhanced
}

// findStatus finds the first enhanced status code in s that stands on its own, not inside a longer dotted
// number: the host address in "host mx.example.net [10.4.4.1]" holds no status 4.4.1, which would turn the
// hard 550 that follows it into a soft bounce.
func findStatus(s string) string {
	for _, loc := range statusRe.FindAllStringIndex(s, -1) {
		start, end := loc[0], loc[1]
		if start > 0 && (isWordByte(s[start-1]) || s[start-1] == '.') {
			continue
		}
		if end < len(s) && (isWordByte(s[end]) || s[end] == '.' && end+1 < len(s) && isDigit(s[end+1])) {
			continue
		}
		return s[start:end]
	}
	return ""
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isWordByte(b byte) bool {
	return isDigit(b) || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}

// bound cuts text to maxDiagnostic bytes without splitting a UTF-8 sequence and folds it to one line.
func bound(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxDiagnostic {
		return s
	}
	cut := maxDiagnostic
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut]
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }
