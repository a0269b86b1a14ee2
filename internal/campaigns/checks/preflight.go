package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// Preflight is the preflight block of a campaign's advanced overrides (campaign.Advanced reads it with its
// defaults): whether preflight runs its optional checks, which ones, and the lowest content score it passes.
type Preflight = campaign.Preflight

// DefaultPreflight is the block of a campaign that never set one (every check on, minimum score 60).
func DefaultPreflight() Preflight { return campaign.DefaultOverrides().Preflight }

// Check is one line of a preflight report: a check that passed, or one problem a check found (a check with
// several problems has a line for each). Remediation is the problem's fix.
type Check struct {
	Key         string
	Passed      bool
	Severity    Severity
	Message     string
	Remediation string
}

// Report is what preflight answers and stores: passed when no error-severity check failed (the content score
// check among them when it is on), the content score, every line, and the fixes of the warnings.
type Report struct {
	Passed          bool
	Score           int
	Checks          []Check
	Recommendations []string
}

// check is one entry of the catalog: its report key, the switch of the preflight block that turns it on (nil
// for the checks that always run), what it finds, and the severity and message of a pass.
type check struct {
	key    string
	on     func(Preflight) bool
	run    func(*analysis) []Problem
	passed func(*analysis) (Severity, string)
}

// catalog is every check in report order. Problems runs them all; Evaluate runs those the block turns on.
var catalog = []check{
	{key: "steps", run: checkSteps, passed: func(a *analysis) (Severity, string) {
		return SeverityError, fmt.Sprintf("The sequence has %s, %d of them emails, and every step kind can run.",
			plural(len(a.s.Steps), "step", "steps"), len(emailSteps(a.s.Steps)))
	}},
	{key: "content", run: checkContent, passed: func(*analysis) (Severity, string) {
		return SeverityError, "Every email has a body and the subject it needs, its templates parse and every variable can resolve."
	}},
	{key: "senders", run: checkSenders, passed: func(a *analysis) (Severity, string) {
		u := usable(a.s.Pool)
		return SeverityError, fmt.Sprintf("%s can send for this campaign, %d campaign emails a day together.", plural(len(u), "mailbox", "mailboxes"), capacity(u))
	}},
	{key: "schedule_window", on: func(p Preflight) bool { return p.CheckScheduleWindow }, run: checkSchedule,
		passed: func(*analysis) (Severity, string) {
			return SeverityError, "The schedule has sending windows and no end date in the past."
		}},
	{key: "daily_limit", on: func(p Preflight) bool { return p.CheckDailyLimit }, run: checkDailyLimit,
		passed: func(a *analysis) (Severity, string) {
			u := usable(a.s.Pool)
			if len(u) == 0 {
				return SeverityWarning, "No mailbox can send yet (see the senders check), so daily_limit has no capacity to compare with."
			}
			return SeverityWarning, fmt.Sprintf("daily_limit (%d) is within what the mailboxes can send (%d a day).", a.s.Campaign.DailyLimit, capacity(u))
		}},
	{key: "tracking_domain", on: func(p Preflight) bool { return p.CheckTrackingDomain }, run: checkTrackingDomain,
		passed: func(a *analysis) (Severity, string) {
			if d := a.s.Campaign.TrackingDomain; d != "" {
				return trackingSeverity(a), fmt.Sprintf("The tracking domain %s is verified.", d)
			}
			return trackingSeverity(a), "No custom tracking domain is set; the default tracking host serves opens and clicks."
		}},
	{key: "unsubscribe_header", on: func(p Preflight) bool { return p.CheckUnsubscribeHeader }, run: checkUnsubscribeHeader,
		passed: func(*analysis) (Severity, string) {
			return SeverityWarning, "Messages carry a one-click List-Unsubscribe header."
		}},
	{key: "ab_variant_configured", on: func(p Preflight) bool { return p.CheckABVariantConfigured }, run: checkVariants,
		passed: func(a *analysis) (Severity, string) {
			if len(a.s.Variants) == 0 {
				return SeverityError, "The campaign has no A/B variants."
			}
			return SeverityError, "Every A/B test has an active variant with a weight above 0."
		}},
	{key: "content_score", on: func(p Preflight) bool { return p.CheckContentScore }, run: checkContentScore,
		passed: func(a *analysis) (Severity, string) {
			if a.lowest == nil {
				return SeverityError, "There is no email to score yet (see the steps check)."
			}
			return SeverityError, fmt.Sprintf("The content score is %d, at or above the minimum of %d.", a.score, a.s.Preflight.MinContentScore)
		}},
}

// Evaluate is preflight over s: the checks that always run, plus those the preflight block turns on when it
// is enabled (none when it is not), each a passed line or a line per problem. It reads only s.
func Evaluate(s Snapshot) Report {
	a := analyse(s)
	r := Report{Passed: true, Score: a.score, Checks: []Check{}, Recommendations: []string{}}
	for _, c := range catalog {
		if c.on != nil && (!s.Preflight.Enabled || !c.on(s.Preflight)) {
			continue
		}
		found := c.run(a)
		if len(found) == 0 {
			sev, msg := c.passed(a)
			r.Checks = append(r.Checks, Check{Key: c.key, Passed: true, Severity: sev, Message: msg})
			continue
		}
		for _, p := range found {
			r.Checks = append(r.Checks, Check{Key: c.key, Severity: p.Severity, Message: p.Message, Remediation: p.Fix})
			if p.Severity == SeverityError {
				r.Passed = false
			} else if !slices.Contains(r.Recommendations, p.Fix) {
				r.Recommendations = append(r.Recommendations, p.Fix)
			}
		}
	}
	return r
}

// checkContentScore compares the campaign's content score with the block's minimum, naming the message that
// scores lowest and what cost it points.
func checkContentScore(a *analysis) []Problem {
	m, least := a.lowest, a.s.Preflight.MinContentScore
	if m == nil || int32(a.score) >= least {
		return nil
	}
	var found, hints []string
	for _, p := range m.penalties {
		found = append(found, fmt.Sprintf("%s (-%d)", p.Detail, p.Points))
		hints = append(hints, p.Hint)
	}
	return []Problem{{Code: CodeContentScoreLow, Severity: SeverityError, StepID: m.stepID,
		Message: fmt.Sprintf("The content score is %d, below the minimum of %d: %s scores lowest, losing points for %s.",
			a.score, least, m.label, strings.Join(found, "; ")),
		Fix: fmt.Sprintf("Rewrite %s: %s; or lower preflight.min_content_score.", m.label, strings.Join(hints, ", "))}}
}
