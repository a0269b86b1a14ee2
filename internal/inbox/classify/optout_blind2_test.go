package classify_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// minOptOutRecall is the share of a blind opt-out holdout's unsubscribe requests the rules must hear (issue 34).
const minOptOutRecall = 0.9

// TestTheSecondBlindOptOutHoldoutHearsNineInTenRequestsAndTakesNoMentionForOne judges testdata/optout_blind2:
// 49 replies to four new campaigns (English, German, French and Spanish; Gmail, Apple Mail, Thunderbird,
// Outlook and GMX quotes, footers that invite "no", "Nein", "non", "BAJA" or link an unsubscribe page), written
// after the rules froze (commit 7eb6265) without consulting the rules or their word lists, and never used to
// tune them. It logs the recall and precision of the unsubscribe flag, the mentions taken for requests and the
// intent accuracy, and fails when recall is under minOptOutRecall or when a reply that only mentions opting
// out is taken for a request. These are the blind figures; testdata/optout_seen is no longer blind.
func TestTheSecondBlindOptOutHoldoutHearsNineInTenRequestsAndTakesNoMentionForOne(t *testing.T) {
	f := judgeOptOutSet(t, "optout_blind2")
	require.Empty(t, f.mentionsTaken, "replies that only mention opting out, taken for requests:\n%s", strings.Join(f.mentionsTaken, "\n"))
	require.GreaterOrEqual(t, f.recall(), minOptOutRecall, "unsubscribe recall")
}
