package classify_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/inbox/classify"
)

// optOutFigures are what the rules make of a labelled opt-out set (labels as in the corpus; kind optout marks
// a request, kind mention a reply that only mentions opting out).
type optOutFigures struct {
	replies, requests, mentions int
	// tp, fp and fn count the unsubscribe flag against the labels.
	tp, fp, fn int
	// correct counts intents judged as labelled; negatives and negativesOK the negative labels and those judged so.
	correct, negatives, negativesOK int
	// mentionsTaken are the replies that only mention opting out and were taken for a request; misses every
	// reply judged otherwise than labelled.
	mentionsTaken, misses []string
}

func (f optOutFigures) recall() float64    { return ratio(f.tp, f.tp+f.fn) }
func (f optOutFigures) precision() float64 { return ratio(f.tp, f.tp+f.fp) }
func (f optOutFigures) accuracy() float64  { return ratio(f.correct, f.replies) }

// String is the line the opt-out tests log.
func (f optOutFigures) String() string {
	return fmt.Sprintf("%d replies, %d requests, %d mentions; unsubscribe recall %.2f (%d/%d), precision %.2f (%d/%d); "+
		"mentions taken for requests %d; intent accuracy %.2f (%d/%d); negative recall %.2f (%d/%d)", f.replies, f.requests,
		f.mentions, f.recall(), f.tp, f.tp+f.fn, f.precision(), f.tp, f.tp+f.fp, len(f.mentionsTaken), f.accuracy(), f.correct,
		f.replies, ratio(f.negativesOK, f.negatives), f.negativesOK, f.negatives)
}

// judgeOptOutSet judges every reply of testdata/<set> and logs the figures and each miss. It fails when the set
// is smaller than the issue asks (40 replies, 10 requests, 5 mentions, four languages), when kind and the
// unsubscribe label disagree, when a verdict has no evidence, or when judging twice differs.
func judgeOptOutSet(t *testing.T, set string) optOutFigures {
	t.Helper()
	labels := readCorpus(t, set)
	langs := map[string]int{}
	var f optOutFigures
	for _, l := range labels {
		langs[l.lang]++
		require.Equal(t, l.kind == "optout", l.unsubscribe, "%s: kind optout and the unsubscribe label disagree", l.file)
		if l.kind == "optout" {
			f.requests++
		}
		if l.kind == "mention" {
			f.mentions++
		}
	}
	f.replies = len(labels)
	require.GreaterOrEqual(t, f.replies, 40)
	require.GreaterOrEqual(t, f.requests, 10)
	require.GreaterOrEqual(t, f.mentions, 5)
	require.Len(t, langs, 4)

	rules := rules(t)
	for _, l := range labels {
		raw, err := os.ReadFile(filepath.Join("testdata", set, filepath.FromSlash(l.file)))
		require.NoError(t, err, l.file)
		m := parseMessage(raw)
		now := m.Received.Add(time.Minute)
		v := rules.Classify(m, classify.Keywords{}, now)
		require.NotEmpty(t, v.Evidence, "%s: a verdict without evidence", l.file)
		require.True(t, reflect.DeepEqual(v, rules.Classify(m, classify.Keywords{}, now)), "%s: judged twice, differently", l.file)
		switch {
		case l.unsubscribe && v.Unsubscribe:
			f.tp++
		case v.Unsubscribe:
			f.fp++
		case l.unsubscribe:
			f.fn++
		}
		if l.kind == "mention" && v.Unsubscribe {
			f.mentionsTaken = append(f.mentionsTaken, fmt.Sprintf("%s (%s): %v", l.file, l.note, v.Evidence))
		}
		if string(v.Intent) == l.intent {
			f.correct++
		}
		if l.intent == string(classify.Negative) {
			f.negatives++
			if v.Intent == classify.Negative {
				f.negativesOK++
			}
		}
		if string(v.Intent) != l.intent || v.Unsubscribe != l.unsubscribe {
			f.misses = append(f.misses, fmt.Sprintf("%s (%s): labelled %s unsubscribe=%v, judged %s unsubscribe=%v %v", l.file,
				l.note, l.intent, l.unsubscribe, v.Intent, v.Unsubscribe, v.Evidence))
		}
	}
	t.Logf("%s: %s", set, f)
	for _, m := range f.misses {
		t.Log(m)
	}
	return f
}

// requireSeenSetHolds judges a seen opt-out set and holds it to what its fixes reached: every request heard,
// none taken from a mention, no reply taken for a request it is not, and at least intents intents as labelled.
func requireSeenSetHolds(t *testing.T, set string, intents int) {
	t.Helper()
	f := judgeOptOutSet(t, set)
	require.Empty(t, f.mentionsTaken, "replies that only mention opting out, taken for requests:\n%s", strings.Join(f.mentionsTaken, "\n"))
	require.Equal(t, 1.0, f.recall(), "unsubscribe recall")
	require.Equal(t, 1.0, f.precision(), "unsubscribe precision")
	require.GreaterOrEqual(t, f.correct, intents, "intents judged as labelled")
}

// TestTheSeenOptOutSetKeepsItsFigures judges testdata/optout_seen. It was the first opt-out holdout, written
// after the first opt-out rules froze, where they scored recall 0.69 (9/13). Its misses were then fixed as
// general rules (erasure phrasing, pronouns before their verb, elision, nouns of stopping, declines, German
// quote headers, reported declines), so it is no longer blind: it is a labelled regression set like the
// corpus, and this test holds its figures (every request heard, none taken from a mention, 48 of 50 intents).
// The second, third and fourth opt-out holdouts, testdata/optout_seen2, testdata/optout_holdout3 and
// testdata/optout_holdout4, are no longer blind either (TestTheSecondSeenOptOutSet…, TestTheThirdSeenOptOutSet…,
// TestTheFourthSeenOptOutSet…).
func TestTheSeenOptOutSetKeepsItsFigures(t *testing.T) {
	requireSeenSetHolds(t, "optout_seen", 48)
}
