package classify_test

import "testing"

// TestTheSecondSeenOptOutSetKeepsItsFigures judges testdata/optout_seen2 (49 replies to four campaigns in
// English, German, French and Spanish; Gmail, Apple Mail, Thunderbird, Outlook and GMX quotes, footers that
// invite "no", "Nein", "non", "BAJA" or link an unsubscribe page). It was the second blind opt-out holdout,
// written after the rules froze at commit 7eb6265, where it scored recall 0.94 (16/17) with one mention taken
// for a request. Its two misses were then fixed as general rules (a question on a condition of an impersonal
// subject; an initial of the sender's name in a short answer's sign-off), so it is no longer blind: it is a
// labelled regression set, and this test holds its figures (every request heard, no mention taken, 45 of 49
// intents). The third holdout, written after these rules froze, is now seen too (TestTheThirdSeenOptOutSet…).
func TestTheSecondSeenOptOutSetKeepsItsFigures(t *testing.T) {
	requireSeenSetHolds(t, "optout_seen2", 45)
}
