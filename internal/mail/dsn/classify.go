package dsn

import "strings"

// The rules that decide hard or soft, stored with each recipient as the evidence of its verdict.
const (
	RuleActionDelayed = "action_delayed" // Action: delayed; the server is still trying
	RuleMailboxFull   = "mailbox_full"   // x.2.2, soft whatever its class (see classify)
	RuleStatusClass5  = "status_class_5" // enhanced status 5.x.x
	RuleStatusClass4  = "status_class_4" // enhanced status 4.x.x
	RuleSMTP5xx       = "smtp_5xx"       // no enhanced status; basic reply code 5xx
	RuleSMTP4xx       = "smtp_4xx"       // no enhanced status; basic reply code 4xx
	RuleActionFailed  = "action_failed"  // no code at all; RFC 3464 defines failed as permanent
)

// classify decides hard or soft for one recipient, by the first rule that applies.
//
// Mailbox full (5.2.2, or 552 without an enhanced code, which RFC 5321 names "exceeded storage allocation")
// is soft although its class is 5: RFC 3463 itself says x.2.2 is "generally" transient, the mailbox empties
// as its owner reads mail, and the major senders (and most bounce processors) retry it. Treating it as hard
// would suppress live addresses; the attempt limit still ends retries to a mailbox that stays full.
func classify(action, status string, smtp int) (Severity, string) {
	switch {
	case action == "delayed":
		return Soft, RuleActionDelayed
	case strings.HasSuffix(status, ".2.2") && status[0] != '2',
		status == "" && smtp == 552:
		return Soft, RuleMailboxFull
	case strings.HasPrefix(status, "5."):
		return Hard, RuleStatusClass5
	case strings.HasPrefix(status, "4."):
		return Soft, RuleStatusClass4
	case smtp >= 500:
		return Hard, RuleSMTP5xx
	case smtp >= 400:
		return Soft, RuleSMTP4xx
	}
	return Hard, RuleActionFailed
}

// reason names the cause class of a status for the timeline and for counting bounces by cause (RFC 3463
// subject and detail codes).
func reason(status string, smtp int) string {
	if len(status) < 5 {
		if smtp == 552 {
			return "mailbox_full"
		}
		return "other"
	}
	detail := status[2:] // subject.detail, e.g. "1.1"
	switch {
	case detail == "1.1" || detail == "1.0" || detail == "1.6" || detail == "1.10":
		return "unknown_user"
	case detail == "1.2" || detail == "4.4":
		return "bad_domain"
	case detail == "2.2":
		return "mailbox_full"
	case detail == "2.1":
		return "mailbox_disabled"
	case detail == "2.3" || detail == "3.4":
		return "message_too_large"
	case strings.HasPrefix(detail, "7."):
		return "policy"
	case strings.HasPrefix(detail, "4."):
		return "network"
	}
	return "other"
}

// Diagnose reads one SMTP reply or diagnostic text (a rejection the sender's own SMTP session was answered,
// or the text a provider reports a bounce with) the way a report's Diagnostic-Code is read: its reply and
// enhanced status codes, hard or soft by the same rules, and the reason class, so a bounce is judged alike
// whichever path it came by. The text is bounded and folded to one line as a report's is.
func Diagnose(text string) Recipient {
	rc := Recipient{Action: "failed", Diagnostic: bound(text)}
	rc.SMTPCode, rc.Status = codes(rc.Diagnostic)
	rc.Severity, rc.Rule = classify(rc.Action, rc.Status, rc.SMTPCode)
	rc.Reason = reason(rc.Status, rc.SMTPCode)
	return rc
}
