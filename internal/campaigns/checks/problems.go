package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// Severity says whether a problem stops a launch (error) or is advice a person may overrule (warning).
type Severity string

// The two severities of the API's problems and checks.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem codes: stable names clients and agents branch on; the message and fix are for people.
const (
	CodeNoSteps                  = "no_steps"
	CodeNoEmailStep              = "no_email_step"
	CodeStepEmptyBody            = "step_empty_body"
	CodeStepEmptySubject         = "step_empty_subject"
	CodeTemplateError            = "template_error"
	CodeUnresolvedVariable       = "unresolved_variable"
	CodeOneTimeMultipleEmails    = "one_time_multiple_emails"
	CodeStepKindUnsupported      = "step_kind_unsupported"
	CodeThreadReplyFirstStep     = "thread_reply_first_step"
	CodeNoSenders                = "no_senders"
	CodeScheduleNoWindow         = "schedule_no_window"
	CodeEndBeforeNow             = "end_before_now"
	CodeDailyLimitAboveCapacity  = "daily_limit_above_capacity"
	CodeTrackingDomainUnverified = "tracking_domain_unverified"
	CodeUnsubscribeHeaderOff     = "unsubscribe_header_off"
	CodeABVariantsWeights        = "ab_variants_weights"
	CodeContentScoreLow          = "content_score_low"
)

// Problem is one thing that keeps a campaign from sending well: a stable code, how bad it is, what is wrong
// in words a person understands, the concrete change that fixes it, and the step it concerns (if any).
type Problem struct {
	Code     string
	Severity Severity
	Message  string
	Fix      string
	StepID   uuid.NullUUID
}

// Snapshot is everything the checks read about one campaign, loaded once (Load) so every check is a pure
// function of it and the same snapshot always gives the same problems and report.
type Snapshot struct {
	Campaign campaign.Campaign
	// Steps are the sequence in position order.
	Steps    []campaign.Step
	Variants []Variant
	// Pool is every mailbox the sender strategy names (see Load), usable or not.
	Pool []Mailbox
	// Preflight is the campaign's preflight block: which checks preflight runs.
	Preflight Preflight
	// CustomFieldKeys are the custom-field keys present on the organization's contacts; nil when no template
	// names a custom field without a fallback (nothing asks then).
	CustomFieldKeys []string
	Now             time.Time
}

// Variant is an A/B variant as the checks read it. StepID is null for a campaign-wide variant.
type Variant struct {
	ID                           uuid.UUID
	StepID                       uuid.NullUUID
	Name                         string
	Weight                       int32
	Subject, BodyPlain, BodyHTML string
	IsControl, IsActive          bool
}

// Mailbox is one mailbox of a campaign's sender pool: it sends only when Active (its status) and Enabled
// (its flag in an explicit pool; always true for tagged mailboxes); DailyCap is its campaign_limit.
type Mailbox struct {
	ID              uuid.UUID
	Email           string
	Active, Enabled bool
	DailyCap        int32
}

// Problems runs every check, whatever the preflight block switches on, and lists what it found in check
// order: validation's answer. It reads only s.
func Problems(s Snapshot) []Problem {
	a := analyse(s)
	var out []Problem
	for _, c := range catalog {
		out = append(out, c.run(a)...)
	}
	return out
}

// stepLabel names a step as a person counts them: "step 2" or `step 2 ("Follow-up")`.
func stepLabel(st campaign.Step) string {
	if st.Name != "" {
		return fmt.Sprintf("step %d (%q)", st.Position+1, st.Name)
	}
	return fmt.Sprintf("step %d", st.Position+1)
}

func stepID(st campaign.Step) uuid.NullUUID { return uuid.NullUUID{UUID: st.ID, Valid: true} }

// upper is s with its first letter in upper case, for a label opening a sentence.
func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// plural counts n things: "1 mailbox", "2 mailboxes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// emailSteps are the email steps of the sequence, in order.
func emailSteps(steps []campaign.Step) []campaign.Step {
	var out []campaign.Step
	for _, st := range steps {
		if st.Kind == campaign.StepEmail {
			out = append(out, st)
		}
	}
	return out
}

// outputKey is the output key an app_action step stores its answer under ("" for other steps).
func outputKey(st campaign.Step) string {
	if st.ActionType() != campaign.ActionApp {
		return ""
	}
	var a struct {
		OutputKey string `json:"output_key"`
	}
	_ = json.Unmarshal(st.Action, &a)
	return a.OutputKey
}

// checkSteps is the structure of the step graph: something to send, step kinds the engine runs, the one_time
// rule, and a first email that has a conversation to start rather than one to reply to.
func checkSteps(a *analysis) []Problem {
	s := a.s
	if len(s.Steps) == 0 {
		return []Problem{{Code: CodeNoSteps, Severity: SeverityError,
			Message: "The campaign has no steps, so it has nothing to send.",
			Fix:     "Add an email step with a subject and a body (POST /campaigns/{id}/steps)."}}
	}
	var out []Problem
	for _, st := range s.Steps {
		if t := st.ActionType(); st.Kind == campaign.StepAction && t == campaign.ActionApp {
			out = append(out, Problem{Code: CodeStepKindUnsupported, Severity: SeverityError, StepID: stepID(st),
				Message: fmt.Sprintf("%s is an %s step, which runs when agent app actions ship; until then a campaign containing one cannot start.", upper(stepLabel(st)), t),
				Fix:     fmt.Sprintf("Delete %s, or replace it with a wait step (kind wait, action {\"wait_minutes\": ...}).", stepLabel(st))})
		}
	}
	emails := emailSteps(s.Steps)
	if len(emails) == 0 {
		return append(out, Problem{Code: CodeNoEmailStep, Severity: SeverityError,
			Message: fmt.Sprintf("None of the campaign's steps (%s) is an email step, so it would send nothing.", plural(len(s.Steps), "step", "steps")),
			Fix:     "Add an email step (kind email) with a subject and a body."})
	}
	if s.Campaign.Kind == campaign.KindOneTime && len(emails) > 1 {
		out = append(out, Problem{Code: CodeOneTimeMultipleEmails, Severity: SeverityError,
			Message: fmt.Sprintf("A one_time campaign sends one email, but this one has %d email steps.", len(emails)),
			Fix:     "Delete the extra email steps, or create a sequence campaign for a multi-step sequence (kind is fixed at creation)."})
	}
	if first := emails[0]; first.ThreadReply {
		out = append(out, Problem{Code: CodeThreadReplyFirstStep, Severity: SeverityWarning, StepID: stepID(first),
			Message: fmt.Sprintf("%s is the first email but is set to reply in a thread; there is no earlier email to reply to, so it starts a new conversation.", upper(stepLabel(first))),
			Fix:     fmt.Sprintf("Set thread_reply to false on %s and give it its own subject.", stepLabel(first))})
	}
	return out
}

// checkContent is what each email says: a subject where one is needed, a body that will be sent, and
// templates that parse and whose variables can resolve.
func checkContent(a *analysis) []Problem {
	s := a.s
	var out []Problem
	for i, st := range emailSteps(s.Steps) {
		if strings.TrimSpace(st.Subject) == "" && (i == 0 || !st.ThreadReply) {
			why := "it starts a conversation"
			if i > 0 {
				why = "it does not reply in the thread (thread_reply is false)"
			}
			out = append(out, Problem{Code: CodeStepEmptySubject, Severity: SeverityError, StepID: stepID(st),
				Message: fmt.Sprintf("%s has no subject, but %s.", upper(stepLabel(st)), why),
				Fix:     fmt.Sprintf("Write a subject for %s, or set thread_reply to true to reply under the conversation's subject.", stepLabel(st))})
		}
		plain, html := strings.TrimSpace(st.BodyPlain) != "", strings.TrimSpace(st.BodyHTML) != ""
		if !plain && (!html || s.Campaign.TextOnly) {
			msg := fmt.Sprintf("%s has no body.", upper(stepLabel(st)))
			fix := fmt.Sprintf("Write body_plain or body_html for %s.", stepLabel(st))
			if html {
				msg = fmt.Sprintf("%s has only an HTML body, and text_only campaigns send no HTML, so it would be empty.", upper(stepLabel(st)))
				fix = fmt.Sprintf("Write body_plain for %s, or turn text_only off.", stepLabel(st))
			}
			out = append(out, Problem{Code: CodeStepEmptyBody, Severity: SeverityError, StepID: stepID(st), Message: msg, Fix: fix})
		}
	}
	for _, m := range a.messages {
		out = append(out, m.problems...)
	}
	return out
}

// launchBlocking are the problems that make a campaign unable to send at all: start (and, in the engine, a
// restart) refuses a campaign with one. Quality findings (content score, tracking, unsubscribe header, limits
// above capacity) are preflight's business and never block a start.
var launchBlocking = []string{CodeNoSteps, CodeNoEmailStep, CodeStepEmptyBody, CodeStepEmptySubject, CodeTemplateError,
	CodeUnresolvedVariable, CodeOneTimeMultipleEmails, CodeStepKindUnsupported, CodeNoSenders, CodeScheduleNoWindow,
	CodeEndBeforeNow}

// LaunchBlockers are the error-severity problems of s that stop a campaign from starting.
func LaunchBlockers(s Snapshot) []Problem {
	var out []Problem
	for _, p := range Problems(s) {
		if p.Severity == SeverityError && slices.Contains(launchBlocking, p.Code) {
			out = append(out, p)
		}
	}
	return out
}
