package tracking_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

const browser = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15"

var sent = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

func machine(r tracking.Rule) tracking.Decision {
	return tracking.Decision{Verdict: tracking.VerdictMachine, Rule: r}
}

var human = tracking.Decision{Verdict: tracking.VerdictHuman, Rule: tracking.RuleHuman}

func TestClassifyAppliesEachRuleAtItsBoundaries(t *testing.T) {
	t.Parallel()
	w := tracking.DefaultWindows()
	ms := time.Millisecond
	open := func(after time.Duration) tracking.Event {
		return tracking.Event{Kind: tracking.KindOpen, At: sent.Add(after), SentAt: sent, UserAgent: browser}
	}
	click := func(after time.Duration) tracking.Event {
		return tracking.Event{Kind: tracking.KindClick, At: sent.Add(after), SentAt: sent, UserAgent: browser, LinkIndex: 1}
	}
	with := func(e tracking.Event, f func(*tracking.Event)) tracking.Event { f(&e); return e }
	late := time.Hour
	burstAt := func(gap time.Duration, link int) func(*tracking.Event) {
		return func(e *tracking.Event) { e.OtherClicks = []tracking.Click{{At: e.At.Add(-gap), LinkIndex: link}} }
	}
	scanner := func(e *tracking.Event) { e.Source = tracking.Source{Scanner: "Proofpoint"} }
	probable := func(e *tracking.Event) { e.Source = tracking.Source{Scanner: "Google Cloud", ScannerProbable: true} }

	for name, tc := range map[string]struct {
		event tracking.Event
		want  tracking.Decision
	}{
		"open 1 ms inside the open machine window":   {open(w.OpenMachine - ms), machine(tracking.RuleOpenMachineWindow)},
		"open exactly at the open machine window":    {open(w.OpenMachine), machine(tracking.RuleOpenMachineWindow)},
		"open 1 ms after the open machine window":    {open(w.OpenMachine + ms), human},
		"click 1 ms inside the click machine window": {click(w.ClickMachine - ms), machine(tracking.RuleClickMachineWindow)},
		"click exactly at the click machine window":  {click(w.ClickMachine), machine(tracking.RuleClickMachineWindow)},
		"click 1 ms after the click machine window":  {click(w.ClickMachine + ms), human},
		"click fetched before the recorded dispatch": {click(-time.Second), machine(tracking.RuleClickMachineWindow)},
		"open with the dispatch time unknown": {
			with(open(0), func(e *tracking.Event) { e.SentAt = time.Time{} }), human},

		"open without a user agent":             {with(open(late), func(e *tracking.Event) { e.UserAgent = "" }), machine(tracking.RuleMissingUserAgent)},
		"click with a blank user agent":         {with(click(late), func(e *tracking.Event) { e.UserAgent = "  " }), machine(tracking.RuleMissingUserAgent)},
		"open through a privacy proxy, late":    {with(open(late), func(e *tracking.Event) { e.Source.PrivacyProxy = "Gmail image proxy" }), machine(tracking.RulePrivacyProxy)},
		"click through a privacy proxy network": {with(click(late), func(e *tracking.Event) { e.Source.PrivacyProxy = "Gmail image proxy" }), human},

		"click on another link 1 ms inside the burst window": {with(click(late), burstAt(w.Burst-ms, 2)), machine(tracking.RuleBurst)},
		"click on another link exactly at the burst window":  {with(click(late), burstAt(w.Burst, 2)), machine(tracking.RuleBurst)},
		"click on another link 1 ms after the burst window":  {with(click(late), burstAt(w.Burst+ms, 2)), human},
		"the same link clicked twice within the burst window": {
			with(click(late), burstAt(time.Second, 1)), human},
		"an earlier click re-judged against a later one on another link": {
			with(click(late), burstAt(-w.Burst, 2)), machine(tracking.RuleBurst)},
		"an open is never a burst": {with(open(late), burstAt(time.Second, 2)), human},

		"recognised scanner late, with a browser user agent": {with(click(late), scanner), machine(tracking.RuleScanner)},
		"recognised scanner open, late":                      {with(open(late), scanner), machine(tracking.RuleScanner)},
		"probable scanner 1 ms inside its window":            {with(click(w.ProbableScanner-ms), probable), machine(tracking.RuleProbableScanner)},
		"probable scanner exactly at its window":             {with(click(w.ProbableScanner), probable), machine(tracking.RuleProbableScanner)},
		"probable scanner 1 ms after its window":             {with(click(w.ProbableScanner+ms), probable), human},
		"probable scanner open inside its window":            {with(open(w.ProbableScanner), probable), machine(tracking.RuleProbableScanner)},
		"probable scanner outside its window, no user agent": {
			with(click(w.ProbableScanner+ms), func(e *tracking.Event) { probable(e); e.UserAgent = "" }), machine(tracking.RuleMissingUserAgent)},
		"probable scanner outside its window, in a burst": {
			with(click(w.ProbableScanner+ms), func(e *tracking.Event) { probable(e); burstAt(time.Second, 0)(e) }), machine(tracking.RuleBurst)},
		"scanner wins over a missing user agent": {
			with(open(0), func(e *tracking.Event) { scanner(e); e.UserAgent = "" }), machine(tracking.RuleScanner)},
		"missing user agent wins over a privacy proxy": {
			with(open(0), func(e *tracking.Event) { e.UserAgent = ""; e.Source.PrivacyProxy = "Yahoo Mail proxy" }), machine(tracking.RuleMissingUserAgent)},
		"privacy proxy wins over the open machine window": {
			with(open(0), func(e *tracking.Event) { e.Source.PrivacyProxy = "Yahoo Mail proxy" }), machine(tracking.RulePrivacyProxy)},
	} {
		require.Equal(t, tc.want, tracking.Classify(tc.event, w), name)
	}
}

func TestClickAndOpenWindowsAreSetIndependently(t *testing.T) {
	t.Parallel()
	w := tracking.DefaultWindows()
	w.ClickMachine, w.OpenMachine = 5*time.Second, 120*time.Second
	at := sent.Add(60 * time.Second)
	require.Equal(t, human, tracking.Classify(tracking.Event{Kind: tracking.KindClick, At: at, SentAt: sent, UserAgent: browser}, w))
	require.Equal(t, machine(tracking.RuleOpenMachineWindow),
		tracking.Classify(tracking.Event{Kind: tracking.KindOpen, At: at, SentAt: sent, UserAgent: browser}, w))
}

func TestWindowsValidateNamesEachWindowOutsideItsRange(t *testing.T) {
	t.Parallel()
	require.NoError(t, tracking.DefaultWindows().Validate())
	for name, tc := range map[string]struct {
		set     func(*tracking.Windows)
		message string // "" when valid
	}{
		"click window of 1 s":        {func(w *tracking.Windows) { w.ClickMachine = time.Second }, ""},
		"click window of 900 s":      {func(w *tracking.Windows) { w.ClickMachine = 900 * time.Second; w.ProbableScanner = 901 * time.Second }, ""},
		"click window of 0":          {func(w *tracking.Windows) { w.ClickMachine = 0 }, "the click machine window is 0s; it must be between 1s and 15m0s"},
		"click window of 901 s":      {func(w *tracking.Windows) { w.ClickMachine = 901 * time.Second; w.ProbableScanner = 1000 * time.Second }, "the click machine window is 15m1s; it must be between 1s and 15m0s"},
		"open window of 1 s":         {func(w *tracking.Windows) { w.OpenMachine = time.Second }, ""},
		"open window of 900 s":       {func(w *tracking.Windows) { w.OpenMachine = 900 * time.Second; w.ProbableScanner = 901 * time.Second }, ""},
		"open window of 0":           {func(w *tracking.Windows) { w.OpenMachine = 0 }, "the open machine window is 0s"},
		"open window of 901 s":       {func(w *tracking.Windows) { w.OpenMachine = 901 * time.Second; w.ProbableScanner = 1000 * time.Second }, "the open machine window is 15m1s"},
		"burst window of 0":          {func(w *tracking.Windows) { w.Burst = 0 }, "the click burst window is 0s; it must be between 1s and 1m0s"},
		"burst window of 61 s":       {func(w *tracking.Windows) { w.Burst = 61 * time.Second }, "the click burst window is 1m1s"},
		"probable window too narrow": {func(w *tracking.Windows) { w.ProbableScanner = w.OpenMachine }, "the probable scanner window is 1m0s; it must be wider than the click machine window (30s) and the open machine window (1m0s)"},
		"probable window over 1 h":   {func(w *tracking.Windows) { w.ProbableScanner = time.Hour + time.Second }, "the probable scanner window is 1h0m1s; it must be between 1s and 1h0m0s"},
	} {
		w := tracking.DefaultWindows()
		tc.set(&w)
		err := w.Validate()
		if tc.message == "" {
			require.NoError(t, err, name)
			continue
		}
		require.ErrorContains(t, err, tc.message, name)
	}
}

func TestHumanClickEffectsWaitForTheBurstWindowAndASecond(t *testing.T) {
	t.Parallel()
	w := tracking.DefaultWindows()
	at := sent.Add(time.Hour)
	require.Equal(t, at.Add(11*time.Second), w.EffectsAt(at))
	w.Burst = 3 * time.Second
	require.Equal(t, at.Add(4*time.Second), w.EffectsAt(at))
}

func TestTheClickTicketIsWithheldFromScannerNetworks(t *testing.T) {
	t.Parallel()
	require.True(t, tracking.TicketAllowed(tracking.Source{}))
	require.True(t, tracking.TicketAllowed(tracking.Source{PrivacyProxy: "Gmail image proxy"}))
	require.False(t, tracking.TicketAllowed(tracking.Source{Scanner: "Proofpoint"}))
	require.False(t, tracking.TicketAllowed(tracking.Source{Scanner: "Google Cloud", ScannerProbable: true}),
		"a probable scanner's click gets no ticket even if it is later counted as a person's")
}
