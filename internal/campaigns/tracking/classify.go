package tracking

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Verdict says whether a person or a machine opened or clicked. Only a person's opens and clicks count in
// analytics, stamp the lead and fire campaign.email_opened and campaign.email_clicked.
type Verdict string

// The two verdicts.
const (
	// VerdictHuman is a person reading or clicking.
	VerdictHuman Verdict = "human"
	// VerdictMachine is a scanner, a privacy proxy or a prefetch; it is stored but has no effects.
	VerdictMachine Verdict = "machine"
)

// Rule names the rule that decided a verdict; it is stored with every event and shown in the contact's
// timeline, so a person can see why an open or click did or did not count.
type Rule string

// The rules, in the order Classify applies them.
const (
	// RuleScanner: the source is a recognised scanner network.
	RuleScanner Rule = "scanner"
	// RuleProbableScanner: the source is a probable scanner network and the event came within the
	// probable-scanner window after dispatch.
	RuleProbableScanner Rule = "probable_scanner"
	// RuleMissingUserAgent: the request carried no user agent.
	RuleMissingUserAgent Rule = "missing_user_agent"
	// RulePrivacyProxy: an open fetched through a mail privacy proxy (by network or user agent).
	RulePrivacyProxy Rule = "privacy_proxy"
	// RuleOpenMachineWindow: an open within the open machine window after dispatch.
	RuleOpenMachineWindow Rule = "open_machine_window"
	// RuleClickMachineWindow: a click within the click machine window after dispatch.
	RuleClickMachineWindow Rule = "click_machine_window"
	// RuleBurst: the same source clicked another link of the same message within the burst window.
	RuleBurst Rule = "burst"
	// RuleHuman: no machine rule applied.
	RuleHuman Rule = "human"
)

// Windows are the time windows classification uses. The specification fixes only the click machine
// window's default and range; the other defaults and ranges are Outflow's and are written here and in the
// contract's descriptions of the tracking endpoints.
type Windows struct {
	// OpenMachine: an open this soon after dispatch is a gateway or prefetch, not a reader. Default 60 s,
	// valid 1 to 900 s (the click window's range).
	OpenMachine time.Duration
	// ClickMachine: a click this soon after dispatch is a link scanner. Default 30 s, valid 1 to 900 s
	// (specification), set independently of OpenMachine.
	ClickMachine time.Duration
	// Burst: one source clicking two different links of one message this close together is a scanner
	// walking the links. Default 10 s, valid 1 to 60 s; a human click's effects wait this long plus a second,
	// so it stays short.
	Burst time.Duration
	// ProbableScanner: a probable scanner network (cloud, hosting) is a machine this soon after dispatch and
	// judged like any other source later. Default 300 s, valid up to 3,600 s, and it must be wider than both
	// machine windows.
	ProbableScanner time.Duration
}

// DefaultWindows are the windows used when the deployment sets none.
func DefaultWindows() Windows {
	return Windows{
		OpenMachine:     60 * time.Second,
		ClickMachine:    30 * time.Second,
		Burst:           10 * time.Second,
		ProbableScanner: 300 * time.Second,
	}
}

// Validate names every window outside its range, in words a deployer can act on.
func (w Windows) Validate() error {
	var errs []error
	check := func(name string, d, lo, hi time.Duration) {
		if d < lo || d > hi {
			errs = append(errs, fmt.Errorf("the %s is %s; it must be between %s and %s", name, d, lo, hi))
		}
	}
	check("open machine window", w.OpenMachine, time.Second, 900*time.Second)
	check("click machine window", w.ClickMachine, time.Second, 900*time.Second)
	check("click burst window", w.Burst, time.Second, 60*time.Second)
	check("probable scanner window", w.ProbableScanner, time.Second, 3600*time.Second)
	if w.ProbableScanner <= w.ClickMachine || w.ProbableScanner <= w.OpenMachine {
		errs = append(errs, fmt.Errorf("the probable scanner window is %s; it must be wider than the click machine window (%s) and the open machine window (%s)",
			w.ProbableScanner, w.ClickMachine, w.OpenMachine))
	}
	return errors.Join(errs...)
}

// EffectsAt is when a human click's effects (clicked_at, instant actions, the webhook) may apply: after the
// burst window plus a second, so a scanner's second link can still turn the click into a burst first.
func (w Windows) EffectsAt(clickAt time.Time) time.Time {
	return clickAt.Add(w.Burst + time.Second)
}

// TicketAllowed reports whether the click redirect may carry the click identification ticket (website-visit
// attribution): never to a recognised or probable scanner network, even when the click is later counted as
// a person's.
func TicketAllowed(s Source) bool {
	return s.Scanner == "" && !s.ScannerProbable
}

// Event is one open or click as classification sees it.
type Event struct {
	// Kind is KindOpen or KindClick; anything other than KindOpen is judged as a click.
	Kind Kind
	// At is when the pixel or link was fetched.
	At time.Time
	// SentAt is the send task's dispatch time (send_tasks.sent_at); zero when unknown, which puts the event
	// outside every window.
	SentAt time.Time
	// UserAgent is the request's User-Agent header.
	UserAgent string
	// Source is what the network lists say about the request's address and user agent.
	Source Source
	// LinkIndex is the clicked link's position in the message (clicks only).
	LinkIndex int
	// OtherClicks are the same source's other clicks on the same send task (same ip_hash or source
	// network), before or after this one: a later click is passed when re-judging an earlier, still-deferred
	// click of a burst.
	OtherClicks []Click
}

// Click is another click of the same source on the same message, for the burst rule.
type Click struct {
	// At is when it was clicked.
	At time.Time
	// LinkIndex is which link.
	LinkIndex int
}

// Decision is a verdict and the rule that decided it; both are stored with the event.
type Decision struct {
	// Verdict is human or machine.
	Verdict Verdict
	// Rule is the rule that decided.
	Rule Rule
}

// Classify judges an open or click. The rules apply in this order and the first that matches decides:
//
//  1. a recognised scanner network: machine (scanner)
//  2. a probable scanner network within the probable-scanner window after dispatch: machine
//     (probable_scanner); outside it the source is judged like an unrecognised one by the rules below
//  3. no user agent: machine (missing_user_agent)
//  4. an open through a privacy proxy: machine (privacy_proxy)
//  5. within the open machine window (opens) or the click machine window (clicks) after dispatch: machine
//     (open_machine_window, click_machine_window)
//  6. a click, when the same source clicked a different link of the same message within the burst window
//     (either side of it): machine (burst); the same link twice is not a burst
//  7. otherwise: human (human)
//
// "Within" a window includes its edge: an event exactly the window after dispatch is a machine's.
func Classify(e Event, w Windows) Decision {
	machine := func(r Rule) Decision { return Decision{Verdict: VerdictMachine, Rule: r} }
	sinceSent := time.Duration(1<<63 - 1)
	if !e.SentAt.IsZero() {
		sinceSent = e.At.Sub(e.SentAt)
	}
	switch {
	case e.Source.RecognisedScanner():
		return machine(RuleScanner)
	case e.Source.ScannerProbable && sinceSent <= w.ProbableScanner:
		return machine(RuleProbableScanner)
	case strings.TrimSpace(e.UserAgent) == "":
		return machine(RuleMissingUserAgent)
	}
	if e.Kind == KindOpen {
		switch {
		case e.Source.PrivacyProxy != "":
			return machine(RulePrivacyProxy)
		case sinceSent <= w.OpenMachine:
			return machine(RuleOpenMachineWindow)
		}
		return Decision{Verdict: VerdictHuman, Rule: RuleHuman}
	}
	if sinceSent <= w.ClickMachine {
		return machine(RuleClickMachineWindow)
	}
	if w.burst(e.At, e.LinkIndex, e.OtherClicks) {
		return machine(RuleBurst)
	}
	return Decision{Verdict: VerdictHuman, Rule: RuleHuman}
}

// burst is rule 6: a click on link at time at is part of a burst when one of the same source's other clicks
// on the same message is on a different link within the burst window, before or after it. The same link
// twice is not a burst.
func (w Windows) burst(at time.Time, link int, others []Click) bool {
	for _, c := range others {
		if c.LinkIndex != link && at.Sub(c.At).Abs() <= w.Burst {
			return true
		}
	}
	return false
}
