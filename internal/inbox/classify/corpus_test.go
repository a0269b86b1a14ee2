package classify_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/inbox/classify"
)

// labelled is one corpus file and what it should be judged.
type labelled struct {
	file, intent, returnDate, lang, kind, note string
	unsubscribe                                bool
}

// readCorpus reads testdata/<set>/labels.tsv (file, intent, unsubscribe, return_date, lang, kind, note).
func readCorpus(t testing.TB, set string) []labelled {
	f, err := os.Open(filepath.Join("testdata", set, "labels.tsv"))
	require.NoError(t, err)
	defer f.Close()
	raw, err := io.ReadAll(f)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "\t") {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range []string{"file", "intent", "unsubscribe", "return_date", "lang", "kind"} {
		require.Contains(t, col, c, "labels.tsv has no %s column", c)
	}
	get := func(rec []string, c string) string {
		if i, ok := col[c]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var out []labelled
	for _, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		rec := strings.Split(strings.TrimRight(line, "\r"), "\t")
		out = append(out, labelled{file: get(rec, "file"), intent: get(rec, "intent"), unsubscribe: get(rec, "unsubscribe") == "1",
			returnDate: get(rec, "return_date"), lang: get(rec, "lang"), kind: get(rec, "kind"), note: get(rec, "note")})
	}
	return out
}

// Quality floors of the built-in rules on the corpus.
const (
	minAutoPrecisionRecall = 0.9
	minAccuracy            = 0.8
	minReturnDates         = 0.8
)

// corpusSets are the labelled sets: "corpus" the rules were written against, and "holdout", written by the
// same author after the rules froze and never used to tune them, so its figures say how the rules generalise.
var corpusSets = []string{"corpus", "holdout"}

// TestTheCorpusHasAtLeastTwoHundredRepliesInEveryLanguage keeps the corpus the size and spread the figures need.
func TestTheCorpusHasAtLeastTwoHundredRepliesInEveryLanguage(t *testing.T) {
	langs := map[string]int{}
	total := 0
	for _, set := range corpusSets {
		for _, l := range readCorpus(t, set) {
			langs[l.lang]++
			total++
		}
	}
	require.GreaterOrEqual(t, total, 200)
	for _, lang := range []string{"en", "de", "fr", "es"} {
		require.GreaterOrEqual(t, langs[lang], total*15/100, "%s replies", lang)
	}
}

// TestTheRulesClassifyTheCorpusWell judges every labelled reply of each set and reports per-intent
// precision, recall and F1 and the return-date match rate; it fails below the floors, when a report is taken
// for a person's answer or an out-of-office reply, when a verdict has no evidence, or when judging twice
// differs.
func TestTheRulesClassifyTheCorpusWell(t *testing.T) {
	for _, set := range corpusSets {
		t.Run(set, func(t *testing.T) { judgeCorpus(t, set) })
	}
}

func judgeCorpus(t *testing.T, set string) {
	corpus := readCorpus(t, set)
	rules, err := classify.NewRules()
	require.NoError(t, err)
	type counts struct{ tp, fp, fn int }
	per := map[string]*counts{}
	for _, i := range classify.Intents {
		per[string(i)] = &counts{}
	}
	correct, dated, datedOK, unsubOK, unsubN := 0, 0, 0, 0, 0
	var misses []string
	for _, l := range corpus {
		raw, err := os.ReadFile(filepath.Join("testdata", set, filepath.FromSlash(l.file)))
		require.NoError(t, err, l.file)
		m := parseMessage(raw)
		now := m.Received.Add(time.Minute)
		v := rules.Classify(m, classify.Keywords{}, now)
		require.NotEmpty(t, v.Evidence, "%s: a verdict without evidence", l.file)
		require.True(t, reflect.DeepEqual(v, rules.Classify(m, classify.Keywords{}, now)), "%s: judged twice, differently", l.file)
		if m.Report != nil {
			require.Equal(t, classify.Automated, v.Intent, "%s: a report taken for %s", l.file, v.Intent)
		}
		require.Contains(t, per, l.intent, "%s: unknown label %q", l.file, l.intent)
		got := string(v.Intent)
		if got == l.intent {
			correct++
			per[got].tp++
		} else {
			per[got].fp++
			per[l.intent].fn++
			misses = append(misses, fmt.Sprintf("%s: labelled %s, judged %s %.2f %v", l.file, l.intent, got, v.Confidence, v.Evidence))
		}
		if l.unsubscribe {
			unsubN++
			if v.Unsubscribe {
				unsubOK++
			}
		}
		if l.returnDate != "" {
			dated++
			if v.ReturnDate != nil && v.ReturnDate.Format(time.DateOnly) == l.returnDate {
				datedOK++
			} else {
				misses = append(misses, fmt.Sprintf("%s: return date %s, read %v %v", l.file, l.returnDate, v.ReturnDate, v.Evidence))
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-14s %9s %7s %6s %5s\n", "intent", "precision", "recall", "f1", "n")
	prf := map[string][3]float64{}
	for _, i := range classify.Intents {
		c := per[string(i)]
		p, r := ratio(c.tp, c.tp+c.fp), ratio(c.tp, c.tp+c.fn)
		f1 := 0.0
		if p+r > 0 {
			f1 = 2 * p * r / (p + r)
		}
		prf[string(i)] = [3]float64{p, r, f1}
		fmt.Fprintf(&b, "%-14s %9.2f %7.2f %6.2f %5d\n", i, p, r, f1, c.tp+c.fn)
	}
	accuracy := ratio(correct, len(corpus))
	fmt.Fprintf(&b, "accuracy %.3f over %d; return dates %d/%d; unsubscribe requests %d/%d\n", accuracy, len(corpus),
		datedOK, dated, unsubOK, unsubN)
	t.Log(b.String())
	for _, m := range misses {
		t.Log(m)
	}
	for _, i := range []string{"out_of_office", "automated"} {
		require.Positive(t, per[i].tp+per[i].fn, "the %s set has no %s replies", set, i)
		require.GreaterOrEqual(t, prf[i][0], minAutoPrecisionRecall, "%s precision", i)
		require.GreaterOrEqual(t, prf[i][1], minAutoPrecisionRecall, "%s recall", i)
	}
	require.GreaterOrEqual(t, accuracy, minAccuracy, "overall accuracy")
	if dated > 0 {
		require.GreaterOrEqual(t, ratio(datedOK, dated), minReturnDates, "return dates read exactly")
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}
