package checks

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// usable are the mailboxes of pool that can send: active and enabled.
func usable(pool []Mailbox) []Mailbox {
	var out []Mailbox
	for _, m := range pool {
		if m.Active && m.Enabled {
			out = append(out, m)
		}
	}
	return out
}

// Senders are the mailboxes the campaign can send from now (active and enabled): every one an agent policy
// must list for a credential to launch the campaign or add leads to it.
func (s Snapshot) Senders() []uuid.UUID {
	var out []uuid.UUID
	for _, m := range usable(s.Pool) {
		out = append(out, m.ID)
	}
	return out
}

// capacity is how many campaign emails mailboxes can send a day together: the sum of their caps.
func capacity(mailboxes []Mailbox) int64 {
	var n int64
	for _, m := range mailboxes {
		n += int64(m.DailyCap)
	}
	return n
}

// checkSenders needs a mailbox that can send: the explicit pool never widens, and the tags strategy falls
// back to every mailbox only when the campaign names neither senders nor tags (Load resolves which).
func checkSenders(a *analysis) []Problem {
	s := a.s
	if len(usable(s.Pool)) > 0 {
		return nil
	}
	p := Problem{Code: CodeNoSenders, Severity: SeverityError}
	c := s.Campaign
	switch {
	case len(s.Pool) > 0:
		var why []string
		for _, m := range s.Pool[:min(len(s.Pool), 5)] {
			if !m.Active {
				why = append(why, m.Email+" is not active")
			} else {
				why = append(why, m.Email+" is disabled in the pool")
			}
		}
		if len(s.Pool) > 5 {
			why = append(why, fmt.Sprintf("and %d more", len(s.Pool)-5))
		}
		p.Message = fmt.Sprintf("No mailbox the campaign would send from can send (%s): %s.", plural(len(s.Pool), "mailbox", "mailboxes"), strings.Join(why, ", "))
		p.Fix = "Enable a sender of the pool (PUT /campaigns/{id}/senders with enabled true), reconnect an inactive mailbox, or add a mailbox that can send."
	case c.SenderStrategy == campaign.StrategyExplicit:
		p.Message = "The explicit sender pool is empty, and the explicit strategy never falls back to other mailboxes."
		p.Fix = "Add mailboxes with PUT /campaigns/{id}/senders or tag mailboxes with the campaign's email tags, or set sender_strategy to tags."
	case len(c.EmailTags) > 0:
		p.Message = "No mailbox carries any of the campaign's email tags."
		p.Fix = "Tag an active mailbox with one of the campaign's email tags, or change the campaign's email_tags."
	default:
		p.Message = "The organization has no mailbox to send from."
		p.Fix = "Connect a mailbox (POST /v1/emails), then validate again."
	}
	return []Problem{p}
}

// checkSchedule needs a day and time to send on and an end date still ahead.
func checkSchedule(a *analysis) []Problem {
	c, now := a.s.Campaign, a.s.Now
	var out []Problem
	w := c.Windows()
	switch {
	case len(w) == 0 && c.Days == 0:
		out = append(out, Problem{Code: CodeScheduleNoWindow, Severity: SeverityError,
			Message: "days is 0 and there are no schedule_windows, so the campaign has no day to send on.",
			Fix:     "Set days to the weekdays to send on (a bitmask, bit 0 = Monday; 31 = Monday to Friday), or set schedule_windows."})
	case len(w) > 0 && noWindow(w):
		out = append(out, Problem{Code: CodeScheduleNoWindow, Severity: SeverityError,
			Message: "schedule_windows holds no window on any day, so the campaign has no time to send in.",
			Fix:     "Add a {start, end} window to at least one weekday of schedule_windows, or clear schedule_windows to use days, start_time and end_time."})
	}
	if c.EndDate != nil && !c.EndDate.After(now) {
		out = append(out, Problem{Code: CodeEndBeforeNow, Severity: SeverityError,
			Message: fmt.Sprintf("end_date (%s) has passed, so the campaign would send nothing more.", c.EndDate.UTC().Format(time.RFC3339)),
			Fix:     "Move end_date into the future, or clear it (null)."})
	}
	return out
}

func noWindow(w [][]campaign.Window) bool {
	for _, day := range w {
		if len(day) > 0 {
			return false
		}
	}
	return true
}

// checkDailyLimit warns when daily_limit promises more than the pool can send: the mailboxes' caps bind first.
func checkDailyLimit(a *analysis) []Problem {
	u := usable(a.s.Pool)
	total, limit := capacity(u), int64(a.s.Campaign.DailyLimit)
	if len(u) == 0 || limit <= total {
		return nil
	}
	return []Problem{{Code: CodeDailyLimitAboveCapacity, Severity: SeverityWarning,
		Message: fmt.Sprintf("daily_limit is %d, but the mailboxes that can send for this campaign (%s) send at most %d campaign emails a day together (the sum of their campaign_limit), so it sends at most %d a day.",
			limit, plural(len(u), "mailbox", "mailboxes"), total, total),
		Fix: fmt.Sprintf("Lower daily_limit to %d, or add mailboxes to the pool (or raise their campaign_limit).", total)}}
}

// trackingSeverity is an error when open or click tracking is on (they would rely on the tracking domain),
// a warning otherwise.
func trackingSeverity(a *analysis) Severity {
	if c := a.s.Campaign; (c.OpenTracking || c.LinkTracking) && !c.TextOnly {
		return SeverityError
	}
	return SeverityWarning
}

// checkTrackingDomain flags a custom tracking domain that has not been verified: it is honoured only once it is.
func checkTrackingDomain(a *analysis) []Problem {
	c := a.s.Campaign
	if c.TrackingDomain == "" || c.TrackingDomainVerifiedAt != nil {
		return nil
	}
	msg := fmt.Sprintf("The tracking domain %s is not verified, so it is not used yet.", c.TrackingDomain)
	if trackingSeverity(a) == SeverityError {
		msg = fmt.Sprintf("The tracking domain %s is not verified, and open or click tracking is on and relies on it.", c.TrackingDomain)
	}
	return []Problem{{Code: CodeTrackingDomainUnverified, Severity: trackingSeverity(a), Message: msg,
		Fix: fmt.Sprintf("Point %s at the tracking host with a CNAME record and verify it (POST /campaigns/{id}/tracking-domain/verify), or clear tracking_domain to use the default tracking host.", c.TrackingDomain)}}
}

// checkUnsubscribeHeader warns when messages go out without a List-Unsubscribe header.
func checkUnsubscribeHeader(a *analysis) []Problem {
	if a.s.Campaign.UnsubscribeHeader {
		return nil
	}
	return []Problem{{Code: CodeUnsubscribeHeaderOff, Severity: SeverityWarning,
		Message: "unsubscribe_header is off: messages carry no one-click List-Unsubscribe header, which Gmail and Yahoo require of bulk senders and which lets people leave without reporting spam.",
		Fix:     "Set unsubscribe_header to true."}}
}

// checkVariants needs every A/B test (a step's variants, or the campaign-wide ones) to have an active variant
// and active weights that do not sum to 0, so the engine has a variant to choose. A control variant counts
// with the weight it carries for the step's own content.
func checkVariants(a *analysis) []Problem {
	var out []Problem
	test := func(label string, st *campaign.Step, vs []Variant) {
		if len(vs) == 0 {
			return
		}
		p := Problem{Code: CodeABVariantsWeights, Severity: SeverityError}
		if st != nil {
			p.StepID = stepID(*st)
		}
		active, weight := 0, 0
		for _, v := range vs {
			if v.IsActive {
				active++
				weight += int(v.Weight)
			}
		}
		switch {
		case active == 0:
			p.Message = fmt.Sprintf("No A/B variant of %s is active (%s), so there is no variant to choose.", label, plural(len(vs), "variant", "variants"))
			p.Fix = fmt.Sprintf("Activate a variant of %s (is_active true), or delete its variants.", label)
		case weight == 0:
			p.Message = fmt.Sprintf("Every active A/B variant of %s (%s) has weight 0, so none can be chosen.", label, plural(active, "variant", "variants"))
			p.Fix = fmt.Sprintf("Give an active variant of %s a weight above 0.", label)
		default:
			return
		}
		out = append(out, p)
	}
	for i := range a.s.Steps {
		st := &a.s.Steps[i]
		var vs []Variant
		for _, v := range a.s.Variants {
			if v.StepID.Valid && v.StepID.UUID == st.ID {
				vs = append(vs, v)
			}
		}
		test(stepLabel(*st), st, vs)
	}
	var wide []Variant
	for _, v := range a.s.Variants {
		if !v.StepID.Valid {
			wide = append(wide, v)
		}
	}
	test("the whole campaign", nil, wide)
	return out
}
